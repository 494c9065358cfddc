#!/usr/bin/env bats
# Power loss (docs/reliability.md, "Power loss"): each commit makes the
# syncs that synchronous=FULL promises in the journal mode bakery runs (a
# rollback journal on an SQLite with the WAL-reset race, WAL on a fixed
# one: bakery-order -V), and BAKERY_SYNC=normal leaves some out (strace);
# the power-cut VFS of lib/store/testvfs.c loses what was not synced; the
# power-cut matrix (tests/powercut.sh) finds a loss when a sync is skipped.
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

# The power cut of lib/store/testvfs.c, on a place in a warm home (its files
# exist). cut_log: the syncs of one place, "sync K PATH", the home put back
# as it was after; cut_at K [VAR=VALUE...]: the place with the power cut at
# its K-th sync (or exit), which must die by SIGKILL.
cut_log() {
	place ada >/dev/null
	cp -a "$BAKERY_HOME" "$BATS_TEST_TMPDIR/before"
	BAKERY_POWERCUT_LOG=$BATS_TEST_TMPDIR/log \
		bakery-order place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	rm -rf "$BAKERY_HOME"
	cp -a "$BATS_TEST_TMPDIR/before" "$BAKERY_HOME"
}
cut_at() {
	local k=$1
	shift
	rm -rf "$BAKERY_HOME"
	cp -a "$BATS_TEST_TMPDIR/before" "$BAKERY_HOME"
	run -137 env BAKERY_POWERCUT_AT="$k" "$@" \
		bakery-order place --customer bo --day "$DAY" cardamom-bun=1
}
first_sync() { # REGEX: the number of the first sync of a path matching it
	grep -m1 -E "^sync [0-9]+ .*$1\$" "$BATS_TEST_TMPDIR/log" | cut -d' ' -f2
}
rollback_only() {
	bakery-order -V | grep -q 'journal_mode=truncate' ||
		skip "the rollback journal's files: WAL writes other files"
}

@test "power cut: a write not synced yet is undone, a synced one stays" {
	sqlite_only "the queue's file is the one looked at"
	rollback_only
	cut_log
	k=$(first_sync '/queue\.db')
	[ -n "$k" ]
	# Cut at the queue's sync: its new pages were written, not synced.
	cut_at "$k"
	cmp "$BATS_TEST_TMPDIR/before/queue.db" "$BAKERY_HOME/queue.db"
	# Cut at the next one: the queue's sync happened, its pages stay.
	cut_at $((k + 1))
	! cmp -s "$BATS_TEST_TMPDIR/before/queue.db" "$BAKERY_HOME/queue.db"
}

@test "power cut: a file created since its folder's last sync is gone" {
	# In WAL no object file is created by SQLite: bakery makes each whole
	# and syncs its folder first (54-wal.bats, "a new object is whole").
	rollback_only
	cut_log
	# The new order's journal (or WAL): its first sync syncs the folder.
	k=$(first_sync '/order/ord_[0-9a-f]+\.db-(journal|wal)')
	[ -n "$k" ]
	ls "$BATS_TEST_TMPDIR/before/sandboxes/default/order" >"$BATS_TEST_TMPDIR/files"
	cut_at "$k"
	run ls "$BAKERY_HOME/sandboxes/default/order"
	assert_output "$(cat "$BATS_TEST_TMPDIR/files")"
	cut_at $((k + 1))
	run ls "$BAKERY_HOME/sandboxes/default/order"
	refute_output "$(cat "$BATS_TEST_TMPDIR/files")"
}

@test "power cut: a file closed unsynced is rolled back too (BAKERY_SYNC=normal, at exit)" {
	rollback_only
	cut_log
	# FULL: the order's commit is synced before the command ends.
	cut_at exit
	id=$(echo "$output" | jq -r .id)
	# NORMAL: the journal's truncation, the commit point, is not synced;
	# the file is closed at the cut, and its journal comes back hot.
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	# NORMAL: the journal's truncation, the commit point, is not synced;
	# the file is closed at the cut, and its journal comes back hot: the
	# last commit (the events marked relayed) is rolled back.
	cut_at exit BAKERY_SYNC=normal
	id=$(echo "$output" | jq -r .id)
	[ -s "$BAKERY_HOME/sandboxes/default/order/$id.db-journal" ]
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 1
}

@test "power cut, torn: the last sector written is half new, half old" {
	sqlite_only "the queue's file is the one looked at"
	rollback_only
	cut_log
	k=$(first_sync '/queue\.db-journal')
	[ -n "$k" ]
	# Undone: the journal (0 bytes between transactions) is empty again.
	cut_at "$k"
	[ ! -s "$BAKERY_HOME/queue.db-journal" ]
	# Torn: the first half of what its last write put in its last
	# sector is there, nothing before it.
	cut_at "$k" BAKERY_POWERCUT_MODE=torn
	size=$(stat -c %s "$BAKERY_HOME/queue.db-journal")
	[ "$size" -gt 0 ]
	[ -n "$(tail -c $(((size - 1) % 512 + 1)) "$BAKERY_HOME/queue.db-journal" | tr -d '\0')" ]
	[ -z "$(head -c $(((size - 1) / 512 * 512)) "$BAKERY_HOME/queue.db-journal" | tr -d '\0')" ]
	# The queue's file, torn at its sync: every byte that differs from
	# before lies in the first half of one sector.
	cut_at "$(first_sync '/queue\.db')" BAKERY_POWERCUT_MODE=torn
	cmp -l "$BATS_TEST_TMPDIR/before/queue.db" "$BAKERY_HOME/queue.db" |
		awk '{ s = int(($1 - 1) / 512); if ((($1 - 1) % 512) >= 256) bad++; sectors[s] = 1 }
		     END { n = 0; for (s in sectors) n++; exit (bad > 0 || n > 1) }'
}

@test "the power-cut matrix finds the loss when a disk lies about the syncs of a step" {
	sqlite_only "the matrix runs on the embedded queue"
	POWERCUT_ONLY='place\|relay' POWERCUT_EVERY=4 run "$TOP/tests/powercut.sh"
	assert_success
	assert_line --regexp '^power-cut matrix: [0-9]+ points, [1-9][0-9]* cuts: 0 lost, 0 applied twice, 0 corrupt files$'
	# The order's syncs skipped: the client is told "placed" while the
	# order's commit is never on disk (both journal modes).
	BAKERY_POWERCUT_SKIP=/order/ POWERCUT_ONLY=place POWERCUT_EVERY=4 run "$TOP/tests/powercut.sh"
	assert_failure
	assert_line --regexp '^power-cut matrix: [0-9]+ points, [1-9][0-9]* cuts: [1-9][0-9]* lost, 0 applied twice, 0 corrupt files$'
	# The queue's syncs skipped: the relay marks events relayed while the
	# queue's acceptance of them is never on disk. In WAL the mark itself
	# is a NORMAL commit, lost with the queue's in the same cut, so the
	# events are sent again: a loss only in the rollback journal.
	bakery-order -V | grep -q 'journal_mode=truncate' || return 0
	BAKERY_POWERCUT_SKIP=queue.db POWERCUT_ONLY=relay POWERCUT_EVERY=4 run "$TOP/tests/powercut.sh"
	assert_failure
	assert_line --regexp '^power-cut matrix: [0-9]+ points, [1-9][0-9]* cuts: [1-9][0-9]* lost, 0 applied twice, 0 corrupt files$'
}

@test "power cut at a crash point: BAKERY_POWERCUT_AT=order.after_commit keeps the synced commit" {
	sqlite_only "reads the embedded queue's counts"
	run -137 env BAKERY_POWERCUT_AT=order.after_commit \
		bakery-order place --customer bo --day "$DAY" cardamom-bun=1
	run ls "$BAKERY_HOME/sandboxes/default/order"
	assert_line --regexp '^ord_[0-9a-f]+\.db$'
	f=("$BAKERY_HOME"/sandboxes/default/order/ord_*.db)
	id=$(basename "${f[0]}" .db)
	# Committed and synced, not sent: the event waits in the outbox.
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 1
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
}

@test "WAL, synchronous=FULL: the new order's file, made with its commit, and its folder are synced before the send to the queue begins" {
	journal wal
	place ada >/dev/null
	run syncs
	assert_success
	made=$(echo "$output" | grep -n -m1 '^fsync sandboxes/default/order/\.new\.ord_[0-9a-f]*$' | cut -d: -f1)
	named=$(echo "$output" | grep -n -m1 '^fsync sandboxes/default/order$' | cut -d: -f1)
	queued=$(echo "$output" | grep -n -m1 "queue.db" | cut -d: -f1)
	[ -n "$made" ]
	[ -n "$named" ]
	[ -n "$queued" ]
	[ "$made" -lt "$named" ]
	[ "$named" -lt "$queued" ]
	# The send itself is synced in the queue's WAL.
	echo "$output" | grep -qx "fdatasync queue.db-wal"
}

@test "WAL, synchronous=FULL: a place syncs three times: its new file, the file's folder, the queue's send" {
	journal wal
	place ada >/dev/null
	run syncs
	assert_success
	run grep -c sync <<<"$output"
	assert_output 3
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

@test "WAL, synchronous=FULL: a place syncs no WAL but the queue's, and a pay's commit into the order's WAL syncs its frames alone" {
	journal wal
	place ada >/dev/null
	run wal_syncs
	assert_success
	echo "$output" | grep -qx "queue.db-wal data"
	# The order's first commit is in its file, made with it; the relayed
	# mark after the send is at NORMAL. The alarm index's commits are not
	# synced: the next boot's first alarm run restores what a power loss
	# took (lib/core/alarm.c).
	[ -z "$(echo "$output" | grep '^sandboxes/default/order/.*-wal ')" ]
	[ -z "$(echo "$output" | grep '^alarms.db-wal')" ]
	# The consumer's commit at the order (OrderPaid recorded) goes into a
	# WAL that holds frames already: one sync, no header's.
	id=$(place bo)
	bakery-order pay "$id" >/dev/null
	strace -f -qq -y -s 0 -e trace=fsync,fdatasync,pwrite64 -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-consume >/dev/null
	run grep -c "fdatasync([0-9]*<[^>]*/order/$id\.db-wal>" "$BATS_TEST_TMPDIR/trace"
	assert_output 1
}

@test "WAL, synchronous=FULL: a WAL this process did not make syncs its header as it starts" {
	journal wal
	place ada >/dev/null
	sqlite3 "$BAKERY_HOME/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
	run wal_syncs
	assert_success
	echo "$output" | grep -qx "queue.db-wal header"
	echo "$output" | grep -qx "queue.db-wal data"
}
