#!/usr/bin/env bats
# Many processes at once: 8 clients placing and paying orders for the same
# day while 2 consumers run. No SQLITE_BUSY reaches a user; every effect once.
load helpers

client() {
	local n=$1 id
	for _ in 1 2 3 4 5; do
		id=$(bakery-order place --customer "c$n" --day "$DAY" --delivery "$n Lane" \
			cardamom-bun=1 country-loaf=1 2>>"$BATS_TEST_TMPDIR/client.err" | jq -r .id) || return 1
		bakery-order pay "$id" >/dev/null 2>>"$BATS_TEST_TMPDIR/client.err" || return 1
		echo "$id" >>"$BATS_TEST_TMPDIR/orders"
	done
}

@test "8 clients and 2 consumers at once: no busy error, every effect once" {
	bakery-consume --follow >"$BATS_TEST_TMPDIR/c1.out" 2>"$BATS_TEST_TMPDIR/c1.err" &
	c1=$!
	bakery-consume --follow >"$BATS_TEST_TMPDIR/c2.out" 2>"$BATS_TEST_TMPDIR/c2.err" &
	c2=$!
	pids=()
	for n in 1 2 3 4 5 6 7 8; do
		client "$n" &
		pids+=($!)
	done
	failed=0
	for p in "${pids[@]}"; do wait "$p" || failed=1; done
	# Let the consumers finish what is queued, then stop them cleanly.
	for _ in $(seq 100); do
		[ "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased + .delayed')" = 0 ] && break
		sleep 0.1
	done
	kill -TERM "$c1" "$c2"
	wait "$c1"
	wait "$c2"
	assert_equal "$failed" 0
	run cat "$BATS_TEST_TMPDIR/client.err" "$BATS_TEST_TMPDIR/c1.err" "$BATS_TEST_TMPDIR/c2.err"
	refute_output --partial locked
	refute_output --partial busy
	refute_output --partial error
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/orders")" 40
	# Whatever a consumer left (none expected), drain now.
	bakery-consume >/dev/null
	board=$(bakery-show kitchen/board)
	schedule=$(bakery-show "schedule/$DAY")
	dispatch=$(bakery-show "dispatch/$DAY")
	assert_equal "$(echo "$board" | jq '[.state.cards[] | select(.status == "confirmed")] | length')" 40
	assert_equal "$(echo "$board" | jq '[.state.tickets[].order] | unique | length')" 40
	assert_equal "$(echo "$board" | jq '.state.tickets | length')" 40
	assert_equal "$(echo "$schedule" | jq '.state.reservations | length')" 40
	assert_equal "$(echo "$schedule" | jq '.state.holds | length')" 0
	assert_equal "$(echo "$dispatch" | jq '.state.stops | length')" 40
	assert_equal "$(bakery-show crm/customers | jq '[.state.customers[].orders] | add')" 40
	for n in 1 2 3 4 5 6 7 8; do
		assert_equal "$(bakery-show "inbox/c$n" | jq '.state.receipts | length')" 5
	done
	# Every event was applied once where it was routed: seen lists have no repeats.
	for a in $(bakery-show --list); do
		a=$(echo "$a" | jq -r .)
		assert_equal "$(bakery-show "$a" | jq '(.seen | length) == (.seen | unique | length)')" true
	done
}

@test "a payment while another is creating the webhook secret reads the whole secret" {
	a=$(place ada)
	b=$(place bo)
	# The first pay's writes are slowed down (strace delays each one by
	# 1.5 s): the second pay comes while the secret is being written.
	strace -f -qq -o /dev/null -e trace=write -e inject=write:delay_enter=1500000 \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order pay "$a" >/dev/null 2>"$BATS_TEST_TMPDIR/a.err" &
	slow=$!
	# Its secret's file is made (whichever name it has first), its
	# first write delayed.
	wait_for 30 compgen -G "$BAKERY_HOME/webhook-secret*" >/dev/null
	run bakery-order pay "$b"
	assert_success
	wait "$slow"
	run cat "$BATS_TEST_TMPDIR/a.err"
	assert_output ""
	bakery-consume >/dev/null
	assert_effects_once "$a"
	assert_effects_once "$b"
}
