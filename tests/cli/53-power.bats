#!/usr/bin/env bats
# Power loss cannot be simulated here; what can be checked is that each
# commit makes the syncs that synchronous=FULL promises in the journal mode
# bakery runs (a rollback journal on an SQLite with the WAL-reset race, WAL
# on a fixed one: bakery-order -V), and what BAKERY_SYNC=normal leaves out
# (docs/reliability.md, "Power loss").
load helpers
bats_require_minimum_version 1.5.0

# The sync calls of one place, one line per call: "CALL FILE".
syncs() {
	strace -f -qq -y -e trace=fsync,fdatasync,ftruncate -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	sed -E 's/^[0-9]+ +//; s/^([a-z]+)\([0-9]+<([^>]*)>.*/\1 \2/' "$BATS_TEST_TMPDIR/trace" |
		sed "s|$BAKERY_HOME/||"
}

setup_file() { command -v strace >/dev/null; }

# journal MODE: skips the test unless bakery runs journal_mode=MODE.
journal() {
	bakery-order -V | grep -q "journal_mode=$1)" || skip "journal_mode=$1 only"
}

@test "rollback journal, synchronous=FULL: each commit syncs the journal, the file, and the journal after its truncation" {
	journal truncate
	place ada >/dev/null # the files exist; the next place is a plain commit
	run syncs
	assert_success
	# The order's own commit, in order: journal (twice: content, then
	# header), its folder, the database, truncate the journal (the commit
	# point), sync that truncation: durable before the command goes on.
	order=$(echo "$output" | grep -m1 -o 'sandboxes/default/order/ord_[0-9a-f]*\.db' | head -1)
	run bash -c "echo \"$output\" | grep -F \"$order\" | head -5"
	assert_line --index 0 "fdatasync $order-journal"
	assert_line --index 1 "fdatasync $order-journal"
	assert_line --index 2 "fdatasync $order"
	assert_line --index 3 "ftruncate $order-journal"
	assert_line --index 4 "fdatasync $order-journal"
	# Every truncation of a journal is followed by its sync.
	run bash -c "echo \"$output\" | grep -A1 '^ftruncate' | grep -v '^--' | paste - - | awk '{ if (\$2 != \$4 || \$3 != \"fdatasync\") bad++ } END { print bad + 0 }'"
	assert_output 0
}

@test "rollback journal, BAKERY_SYNC=normal: one journal sync per commit and no sync of the truncation" {
	journal truncate
	place ada >/dev/null
	export BAKERY_SYNC=normal
	run syncs
	assert_success
	order=$(echo "$output" | grep -m1 -o 'sandboxes/default/order/ord_[0-9a-f]*\.db' | head -1)
	run bash -c "echo \"$output\" | grep -F \"$order\" | head -3"
	assert_line --index 0 "fdatasync $order-journal"
	assert_line --index 1 "fdatasync $order"
	assert_line --index 2 "ftruncate $order-journal"
	run bash -c "echo \"$output\" | grep -A1 '^ftruncate' | grep -c '^fdatasync'"
	assert_output 0
}

@test "rollback journal, synchronous=FULL: the order's commit is durable before the send to the queue begins" {
	journal truncate
	place ada >/dev/null
	run syncs
	assert_success
	# Line numbers: the sync of the order journal's truncation comes
	# before the queue's first journal sync.
	order=$(echo "$output" | grep -m1 -o 'sandboxes/default/order/ord_[0-9a-f]*\.db' | head -1)
	committed=$(echo "$output" | grep -n -A1 "^ftruncate $order-journal" | grep -m1 "fdatasync $order-journal" | cut -d- -f1)
	queued=$(echo "$output" | grep -n -m1 "queue.db" | cut -d: -f1)
	[ -n "$committed" ]
	[ -n "$queued" ]
	[ "$committed" -lt "$queued" ]
}

@test "WAL, synchronous=FULL: the order's commit syncs its WAL before the send to the queue begins" {
	journal wal
	place ada >/dev/null
	run syncs
	assert_success
	order=$(echo "$output" | grep -m1 -o 'sandboxes/default/order/ord_[0-9a-f]*\.db' | head -1)
	[ -n "$order" ]
	committed=$(echo "$output" | grep -n -m1 "^fdatasync $order-wal\$" | cut -d: -f1)
	queued=$(echo "$output" | grep -n -m1 "queue.db" | cut -d: -f1)
	[ -n "$committed" ]
	[ -n "$queued" ]
	[ "$committed" -lt "$queued" ]
	# The send itself is synced in the queue's WAL.
	echo "$output" | grep -qx "fdatasync queue.db-wal"
}

# The syncs of one place in WAL, one line per sync of a file: "FILE WHAT",
# WHAT "header" when the last write to that file was a WAL's 32-byte
# header at offset 0 (SQLite syncs a WAL's header as the WAL starts over,
# at FULL and NORMAL alike), else "data". Folders' syncs are left out.
wal_syncs() {
	strace -f -qq -y -s 0 -e trace=fsync,fdatasync,pwrite64 -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	sed -E 's/^[0-9]+ +//' "$BATS_TEST_TMPDIR/trace" | sed "s|$BAKERY_HOME/||" | awk '
		match($0, /<[^>]*>/) { f = substr($0, RSTART + 1, RLENGTH - 2) }
		/^pwrite64/ { n = split($0, a, ", "); last[f] = (a[n - 1] == "32" && a[n] ~ /^0\)/) ? "header" : "data" }
		/^f(data)?sync/ && f ~ /\.db(-wal|-journal)?$/ { print f, (f in last ? last[f] : "data"); delete last[f] }'
}

@test "WAL, BAKERY_SYNC=normal: no commit syncs a WAL, only a checkpoint does (the WAL, then its file)" {
	journal wal
	place ada >/dev/null
	export BAKERY_SYNC=normal
	run wal_syncs
	assert_success
	# Each sync of a WAL's frames is a checkpoint's: the next sync is its
	# file's.
	run bash -c "echo \"$output\" | grep -A1 -- '-wal data\$' | grep -v '^--' | paste - - | awk '{ if (\$1 != \$3 \"-wal\") bad++ } END { print bad + 0 }'"
	assert_output 0
}

@test "WAL, synchronous=FULL: each commit of a place syncs its WAL's frames" {
	journal wal
	place ada >/dev/null
	run wal_syncs
	assert_success
	echo "$output" | grep -q "^sandboxes/default/order/ord_[0-9a-f]*\.db-wal data\$"
	echo "$output" | grep -qx "queue.db-wal data"
	echo "$output" | grep -qx "alarms.db-wal data"
}
