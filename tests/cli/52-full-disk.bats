#!/usr/bin/env bats
# A full or failing disk: a clear error and exit 74 or 75, every file still
# passes PRAGMA integrity_check, and once the disk works again the ordinary
# tools finish the work with nothing lost or doubled (tests/checker).
load helpers
bats_require_minimum_version 1.5.0

CHECKER="$TOP/build/tests/checker"

teardown() {
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then umount "$MNT"; fi
}

# Every SQLite file of the home passes integrity_check: one sqlite3 for
# them all, which prints each file's name and then its answer.
assert_integrity() {
	local f script='' want='' r
	while IFS= read -r f; do
		script+=".print $f"$'\n'".open '${f//\'/\'\'}'"$'\n''PRAGMA integrity_check;'$'\n'
		want+="$f"$'\n''ok'$'\n'
	done < <(find "$BAKERY_HOME" -name '*.db')
	[ -n "$want" ] || return 0
	r=$(sqlite3 <<<"$script" 2>&1)
	[ "$r"$'\n' = "$want" ] || { echo "integrity: $r" >&2; return 1; }
}

# Runs a command that may meet the failing disk: success, or 74/75 with
# one clear "PROG: error: ..." line.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
may_fail() {
	run --separate-stderr "$@"
	if [ "$status" -ne 0 ]; then
		[ "$status" -eq 74 ] || [ "$status" -eq 75 ] || {
			echo "$* exited $status: $stderr" >&2; return 1; }
		echo "$stderr" | grep -Eq '^bakery-[a-z]+: error: .*(disk is full|disk I/O error|No space left)' || {
			echo "$* gave no clear error: $stderr" >&2; return 1; }
		failed=$((failed + 1))
	fi
	return 0
}

# What a client and an operator do once the disk works: place again with
# the same key, pay again, and the ordinary tools with the clock past
# leases and alarms.
recover_and_check() {
	local later=$(( $(date +%s) + 3600 )) id
	id=$(bakery-order place --key k1 --customer ada --day "$DAY" --delivery "1 Lane" cardamom-bun=2 | jq -r .id)
	echo "$id" >"$BATS_TEST_TMPDIR/placed"
	bakery-order pay "$id" >/dev/null
	echo "$id" >"$BATS_TEST_TMPDIR/paid"
	for _ in 1 2; do
		bakery-relay --all >/dev/null
		BAKERY_NOW=$later bakery-relay --due >/dev/null
		BAKERY_NOW=$later bakery-consume >/dev/null
		BAKERY_NOW=$later bakery-dlq drain >/dev/null
		bakery-redrive --all >/dev/null
		BAKERY_NOW=$later bakery-consume >/dev/null
	done
	run "$CHECKER" -v --drained --placed "$BATS_TEST_TMPDIR/placed" --paid "$BATS_TEST_TMPDIR/paid" "$BAKERY_HOME"
	[ "$status" -eq 0 ] || { echo "checker: $output" >&2; return 1; }
}

# place + pay + consume, each process failing its N-th write or sync.
scenario() {
	local id
	may_fail bakery-order place --key k1 --customer ada --day "$DAY" --delivery "1 Lane" cardamom-bun=2
	id=$(echo "$output" | jq -r '.id // empty' 2>/dev/null)
	[ -z "$id" ] || may_fail bakery-order pay "$id"
	may_fail bakery-consume
}

fail_write_loop() {
	local mode=$1 n=1 clean=0 runs=0
	while [ "$clean" -lt 2 ]; do
		export BAKERY_HOME="$BATS_TEST_TMPDIR/home.$mode.$n"
		bakery-order gateway test >/dev/null
		failed=0
		BAKERY_FAIL_WRITE_AT="$n$mode" scenario
		unset BAKERY_FAIL_WRITE_AT
		assert_integrity
		recover_and_check
		runs=$((runs + 1))
		# Done once N passes every write of the scenario twice running.
		[ "$failed" -eq 0 ] && clean=$((clean + 1)) || clean=0
		n=$((n < 24 ? n + 1 : n + n / 6))
		[ "$n" -lt 2000 ] || { echo "still failing at N=$n" >&2; return 1; }
	done
	echo "# fail-write$mode: $runs runs, N up to $n" >&3
}

@test "the N-th write fails, for growing N: clear error, integrity ok, recovery, nothing lost" {
	fail_write_loop ""
}

@test "every write from the N-th fails, for growing N: clear error, integrity ok, recovery, nothing lost" {
	fail_write_loop "+"
}

@test "a full tmpfs: exit 74, integrity ok; once space is freed the work proceeds with nothing lost" {
	tmpfs_home 1m
	: >"$BATS_TEST_TMPDIR/placed"; : >"$BATS_TEST_TMPDIR/paid"
	status=0
	# (not $i: bats's run uses it)
	for n in $(seq 200); do
		run --separate-stderr bakery-order place --key "o$n" --customer "c$n" --day "$DAY" cardamom-bun=1
		[ "$status" -eq 0 ] || break
		id=$(echo "$output" | jq -r .id)
		echo "$id" >>"$BATS_TEST_TMPDIR/placed"
		run --separate-stderr bakery-order pay "$id"
		[ "$status" -eq 0 ] || break
		echo "$id" >>"$BATS_TEST_TMPDIR/paid"
		run --separate-stderr bakery-consume
		[ "$status" -eq 0 ] || break
	done
	echo "# full at order $n: exit $status: $stderr" >&3
	[ "$status" -eq 74 ] || [ "$status" -eq 75 ]
	echo "$stderr" | grep -Eq 'error: .*(disk is full|No space left)'
	assert_integrity
	# Space freed: the same tools, the same keys, nothing lost or doubled.
	mount -o remount,size=16m "$MNT"
	for k in $(seq "$n"); do
		id=$(bakery-order place --key "o$k" --customer "c$k" --day "$DAY" cardamom-bun=1 | jq -r .id)
		grep -qx "$id" "$BATS_TEST_TMPDIR/placed" || echo "$id" >>"$BATS_TEST_TMPDIR/placed"
		bakery-order pay "$id" >/dev/null
		grep -qx "$id" "$BATS_TEST_TMPDIR/paid" || echo "$id" >>"$BATS_TEST_TMPDIR/paid"
	done
	later=$(( $(date +%s) + 3600 ))
	bakery-relay --all >/dev/null
	BAKERY_NOW=$later bakery-consume >/dev/null
	BAKERY_NOW=$later bakery-dlq drain >/dev/null
	bakery-redrive --all >/dev/null
	BAKERY_NOW=$later bakery-consume >/dev/null
	assert_integrity
	run "$CHECKER" -v --drained --placed "$BATS_TEST_TMPDIR/placed" --paid "$BATS_TEST_TMPDIR/paid" "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq -c '[.orders, .paid]')" "[$n,$n]"
}

@test "pay on a failing disk exits 74, not 70: the test gateway passes Billing's I/O error through" {
	id=$(place ada)
	for n in $(seq 1 40); do
		cp -r "$BAKERY_HOME" "$BATS_TEST_TMPDIR/h$n"
		run --separate-stderr env BAKERY_HOME="$BATS_TEST_TMPDIR/h$n" BAKERY_FAIL_WRITE_AT="$n+" bakery-order pay "$id"
		[ "$status" -eq 0 ] || [ "$status" -eq 74 ] || [ "$status" -eq 75 ] || {
			echo "N=$n: exit $status: $stderr" >&2; return 1; }
	done
}
