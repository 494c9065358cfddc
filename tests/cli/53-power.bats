#!/usr/bin/env bats
# Power loss cannot be simulated here; what can be checked is that each
# commit makes the syncs that synchronous=FULL promises in bakery's
# rollback-journal mode, and what BAKERY_SYNC=normal leaves out
# (docs/reliability.md, "Power loss").
load helpers
bats_require_minimum_version 1.5.0

# The sync calls of one place, one line per call: "CALL FILE".
syncs() {
	strace -f -qq -y -e trace=fsync,fdatasync,ftruncate -o "$BATS_TEST_TMPDIR/trace" \
		bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	sed -E 's/^[0-9]+ +//; s/^([a-z]+)\([0-9]+<([^>]*)>.*/\1 \2/' "$BATS_TEST_TMPDIR/trace" |
		sed "s|$BAKERY_HOME/||"
}

setup_file() { command -v strace >/dev/null; }

@test "synchronous=FULL: each commit syncs the journal, the file, and the journal after its truncation" {
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

@test "BAKERY_SYNC=normal: one journal sync per commit and no sync of the truncation" {
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

@test "synchronous=FULL: the order's commit is durable before the send to the queue begins" {
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
