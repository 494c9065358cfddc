#!/usr/bin/env bats
# shellcheck disable=SC2030,SC2031,SC2154 # each @test a subshell; run sets $stderr
# Disorder heals by itself: a retried message waits, longer each time
# (5 s, 30 s, 2 min by default), so an event that overtook its predecessor
# finds it applied on a later delivery instead of becoming a dead letter.
# The embedded queue's clock is BAKERY_NOW: those tests wait for no real
# time. The last test runs on either driver in real time, short delays.
load helpers
bats_require_minimum_version 1.5.0

T0=1796115600 # 2026-12-01T09:00:00Z

# consumed_at T WANT [ARGS...]: bakery-consume at the pinned clock T
# must print WANT, its lines as [[type, delivery, outcome], ...].
consumed_at() {
	run --separate-stderr env BAKERY_NOW="$1" bakery-consume "${@:3}"
	assert_success
	run jq -sc '[.[] | [.type, .delivery, .outcome]]' <<<"$output"
	assert_output "$2"
}

# No dead letter anywhere: none in the DLQ, none stored in the sandbox.
assert_no_dead_letter() {
	assert_equal "$(bakery-queue stats | jq -c '."bakery-events-dlq"')" \
		'{"ready":0,"leased":0,"delayed":0}'
	run --separate-stderr bakery-dlq drain
	assert_success
	assert_output ""
	run --separate-stderr bakery-dlq list
	assert_output ""
}

@test "an OrderPaid that overtook its retried OrderPlaced is applied once it comes, with no dead letter" {
	sqlite_only "the retry's clock is BAKERY_NOW here, the server's on NATS"
	export BAKERY_NOW=$T0
	id=$(place ada)
	# The kitchen refuses the OrderPlaced, which comes back in 30 s.
	bakery-fault set refuses:kitchen
	consumed_at $T0 '[["OrderPlaced",1,"retried"]]' --once --retry-delay 30
	bakery-fault clear refuses:kitchen
	bakery-order pay "$id" >/dev/null
	# From here on the defaults: the OrderPaid overtakes and is refused.
	consumed_at $T0 '[["PaymentSucceeded",1,"acked"],["OrderPaid",1,"retried"]]'
	# Nothing applied at the kitchen yet: no board was made.
	run bakery-show kitchen/board
	assert_failure 66
	# The first retry waits 5 s.
	consumed_at $((T0 + 4)) '[]'
	consumed_at $((T0 + 5)) '[["OrderPaid",2,"retried"]]'
	# The OrderPlaced's turn comes first, then the OrderPaid's, 30 s on.
	consumed_at $((T0 + 30)) '[["OrderPlaced",2,"acked"]]'
	consumed_at $((T0 + 34)) '[]'
	consumed_at $((T0 + 35)) '[["OrderPaid",3,"acked"]]'
	run bakery-show kitchen/board
	assert_equal "$(jq -c --arg o "$id" '[.state.cards[] | select(.order == $o) | .status]' <<<"$output")" '["confirmed"]'
	assert_equal "$(jq --arg o "$id" '[.state.tickets[] | select(.order == $o)] | length' <<<"$output")" 1
	assert_effects_once "$id"
	assert_no_dead_letter
	[ -z "$(queue_ids)" ]
}

@test "by default a refused message waits 5 s, 30 s and 2 min, then becomes a dead letter" {
	sqlite_only "the retry's clock is BAKERY_NOW here, the server's on NATS"
	export BAKERY_NOW=$T0
	bakery-fault set refuses:kitchen
	place ada >/dev/null
	consumed_at $T0 '[["OrderPlaced",1,"retried"]]'
	consumed_at $((T0 + 4)) '[]'
	consumed_at $((T0 + 5)) '[["OrderPlaced",2,"retried"]]'
	consumed_at $((T0 + 34)) '[]'
	consumed_at $((T0 + 35)) '[["OrderPlaced",3,"retried"]]'
	consumed_at $((T0 + 154)) '[]'
	consumed_at $((T0 + 155)) '[["OrderPlaced",4,"dead-lettered"]]'
	run bakery-queue peek --dlq
	assert_equal "$(jq -r .last_error <<<"$output")" "Kitchen answered 503"
}

@test "--retry-delay 0 retries at once; a list gives each retry its delay, the last one repeated" {
	sqlite_only "the retry's clock is BAKERY_NOW here, the server's on NATS"
	export BAKERY_NOW=$T0
	bakery-fault set refuses:kitchen
	place ada >/dev/null
	consumed_at $T0 '[["OrderPlaced",1,"retried"],["OrderPlaced",2,"retried"],["OrderPlaced",3,"retried"],["OrderPlaced",4,"dead-lettered"]]' --retry-delay 0

	place bo >/dev/null
	opts=(--retry-delay "1,7" --max-retries 4)
	consumed_at $T0 '[["OrderPlaced",1,"retried"]]' "${opts[@]}"
	consumed_at $((T0 + 1)) '[["OrderPlaced",2,"retried"]]' "${opts[@]}"
	consumed_at $((T0 + 7)) '[]' "${opts[@]}"
	consumed_at $((T0 + 8)) '[["OrderPlaced",3,"retried"]]' "${opts[@]}"
	consumed_at $((T0 + 14)) '[]' "${opts[@]}"
	consumed_at $((T0 + 15)) '[["OrderPlaced",4,"retried"]]' "${opts[@]}"
	consumed_at $((T0 + 22)) '[["OrderPlaced",5,"dead-lettered"]]' "${opts[@]}"
}

@test "consume refuses a bad --retry-delay with 64, consuming nothing" {
	place ada >/dev/null
	most=$(printf '1,%.0s' $(seq 99))43200 # 100 delays, the last the largest
	long=$most,1
	for bad in '' ',' '5,' ',5' '5,,30' '-1' '+5' ' 5' '5 ' '5;30' '1e3' '0x10' \
		'43201' '5,43201' '99999999999999999999999' 'abc' '5,30,abc' "$long" \
		$'5\n30' '５'; do
		run --separate-stderr bakery-consume --retry-delay "$bad"
		[ "$status" -eq 64 ] || { echo "accepted: '$bad' ($status)" >&2; return 1; }
		[[ "$stderr" == "bakery-consume: error: bad retry-delay: "* ]] ||
			{ echo "for '$bad': $stderr" >&2; return 1; }
		assert_output ""
	done
	assert_equal "$(queue_ids)" "$(bakery-queue peek | jq -r .id)"
	assert_equal "$(bakery-queue peek | jq -c .deliveries)" 0
	# The largest list and the largest delay are taken.
	run --separate-stderr bakery-consume --once --batch 1 --retry-delay "$most"
	assert_success
}

teardown() {
	[ -z "${follow:-}" ] || kill -TERM "$follow" 2>/dev/null || true
}

@test "on either queue an overtaken predecessor's retry comes before the overtaker's last one" {
	# Real time, short delays: the OrderPlaced comes back after 3 s, the
	# OrderPaid after 1 s and then 4 s more, and finds its card.
	id=$(place ada)
	bakery-fault set refuses:kitchen
	run --separate-stderr bakery-consume --once --retry-delay 3
	assert_success
	bakery-fault clear refuses:kitchen
	bakery-order pay "$id" >/dev/null
	out="$BATS_TEST_TMPDIR/follow.out"
	bakery-consume --follow --retry-delay 1,4,30 >"$out" 2>"$BATS_TEST_TMPDIR/follow.err" &
	follow=$!
	# It stops once the OrderPaid's third delivery is answered (about 5 s).
	wait_for 30 grep -q '"type":"OrderPaid","sandbox":"default","delivery":3' "$out"
	kill -TERM "$follow"
	wait "$follow"
	run jq -sc '[.[] | select(.type != "PaymentSucceeded") | [.type, .delivery, .outcome]]' "$out"
	assert_output '[["OrderPaid",1,"retried"],["OrderPaid",2,"retried"],["OrderPlaced",2,"acked"],["OrderPaid",3,"acked"]]'
	assert_equal "$(bakery-queue stats | jq -c '."bakery-events"')" '{"ready":0,"leased":0,"delayed":0}'
	assert_effects_once "$id"
	assert_no_dead_letter
}
