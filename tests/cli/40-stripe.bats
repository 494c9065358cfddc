#!/usr/bin/env bats
# bakery-order pay through Stripe's API, against tests/stripe-standin.py on
# 127.0.0.1: Stripe's wire format and idempotency rules, and a count of
# charges. Whatever the retries, drops and crashes: one charge per order.
load helpers
bats_require_minimum_version 1.5.0

KEY=sk_test_bakery4f1c9a0e27d35b86
WHSEC=whsec_standin_3b9e

# Starts the stand-in on a free port; STANDIN is its base URL.
standin() {
	export STANDIN_KEY=$KEY STANDIN_WEBHOOK_SECRET=$WHSEC
	python3 "$TOP/tests/stripe-standin.py" "$BATS_TEST_TMPDIR/port" 3>&- &
	STANDIN_PID=$!
	for _ in $(seq 50); do
		[ -s "$BATS_TEST_TMPDIR/port" ] && break
		sleep 0.1
	done
	STANDIN=http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")
	export BAKERY_STRIPE_API=$STANDIN BAKERY_STRIPE_KEY=$KEY
	bakery-order gateway stripe >/dev/null
	export BAKERY_STRIPE_BACKOFF_MS=20 BAKERY_STRIPE_TIMEOUT_MS=5000
	unset BAKERY_STRIPE_RETRIES
}

teardown() {
	[ -z "${STANDIN_PID:-}" ] || kill "$STANDIN_PID" 2>/dev/null || true
}

charges() { curl -sf "$STANDIN/_count${1:+?order=$1}" | jq .charges; }
requests() { curl -sf "$STANDIN/_log"; }
mode() { curl -sf -X POST --data "$1" "$STANDIN/_mode" >/dev/null; }
# arrived N: the stand-in has had N payment requests or more.
arrived() { [ "$(curl -sf "$STANDIN/_count" | jq .requests)" -ge "$1" ]; }

# The order's events and status, to compare before and after.
order_snapshot() {
	bakery-order show "$1" | jq -c '{status, payment_intent}'
	bakery-order events "$1" | jq -r .type
}

# Hands the stand-in's signed payment_intent.succeeded events to Billing.
deliver_webhooks() {
	curl -sf "$STANDIN/_events" | while read -r line; do
		echo "$line" | jq -j .body |
			bakery-webhook --signature "$(echo "$line" | jq -r .signature)" >/dev/null ||
			return 1
	done
}

@test "pay creates one payment intent keyed by the order id; the webhook pays the order" {
	standin
	export BAKERY_STRIPE_WEBHOOK_SECRET=$WHSEC
	id=$(place ada cardamom-bun=2 country-loaf=1)
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .status)" succeeded
	assert_equal "$(echo "$output" | jq -r .idempotency_key)" "$id"
	assert_equal "$(charges "$id")" 1
	total=$(bakery-order show "$id" | jq -r .total_cents)
	run requests
	assert_equal "$(echo "$output" | jq -r .key)" "$id"
	assert_equal "$(echo "$output" | jq -c '.params | {amount, currency, confirm, payment_method}')" \
		"{\"amount\":\"$total\",\"currency\":\"eur\",\"confirm\":\"true\",\"payment_method\":\"pm_card_visa\"}"
	assert_equal "$(echo "$output" | jq -r '.params["metadata[order_id]"], .params["metadata[sandbox]"]' | paste -sd' ')" "$id default"
	# Stripe's answer does not pay the order: its signed webhook does.
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	deliver_webhooks
	deliver_webhooks
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "paying again sends nothing new: one charge" {
	standin
	id=$(place ada)
	bakery-order pay "$id" >/dev/null
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .status)" succeeded
	run bakery-order pay --card 4000000000000002 "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .payment_method)" pm_card_visa
	assert_equal "$(charges "$id")" 1
	assert_equal "$(requests | wc -l)" 1
}

@test "an answer lost on the way back is asked for again with the same key: one charge" {
	standin
	id=$(place ada)
	mode drop=1
	run bakery-order pay "$id"
	assert_success
	assert_output --partial 'stripe_retry'
	assert_equal "$(charges "$id")" 1
	run requests
	assert_equal "$(echo "$output" | jq -r .key | sort -u)" "$id"
	assert_equal "$(echo "$output" | jq -c '[.dropped, .replayed]' | paste -sd' ')" '[true,null] [null,true]'
}

@test "5xx answers are tried again with the same key, with backoff" {
	standin
	id=$(place ada)
	mode fail=3
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(charges "$id")" 1
	run requests
	assert_equal "$(echo "$output" | jq -r .status | paste -sd' ')" '503 503 503 200'
	assert_equal "$(echo "$output" | jq -r .key | sort -u)" "$id"
}

@test "two pays of one order at once: 409 idempotency_key_in_use is waited out, one charge" {
	standin
	export BAKERY_STRIPE_BACKOFF_MS=300
	id=$(place ada)
	mode slow=0.6
	bakery-order pay "$id" >"$BATS_TEST_TMPDIR/a" 2>&1 3>&- &
	a=$!
	wait_for 30 arrived 1 # the first pay's request, taking its 0.6 s
	bakery-order pay "$id" >"$BATS_TEST_TMPDIR/b" 2>&1 3>&- &
	b=$!
	wait "$a"
	wait "$b"
	assert_equal "$(charges "$id")" 1
	run requests
	assert_line --partial '"status": 409'
	assert_equal "$(echo "$output" | jq -r .key | sort -u)" "$id"
	assert_equal "$(grep -h '^{' "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" | jq -r .payment_intent | sort -u | wc -l)" 1
}

@test "a declined card exits 1 and changes nothing; the next card gets the next key" {
	standin
	id=$(place ada)
	before=$(order_snapshot "$id")
	run bakery-order pay --card 4000000000000002 "$id"
	assert_failure 1
	assert_output --partial "payment declined: '$id': generic_decline"
	run bakery-order pay --payment-method pm_card_chargeDeclinedInsufficientFunds "$id"
	assert_failure 1
	assert_output --partial insufficient_funds
	assert_equal "$(order_snapshot "$id")" "$before"
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .attempt)" 3
	assert_equal "$(requests | jq -r '"\(.key) \(.status)"' | paste -sd,)" \
		"$id 402,$id-2 402,$id-3 200"
	assert_equal "$(charges "$id")" 1
	assert_equal "$(bakery-show "billing/$id" | jq -r '[.state.attempts[].status] | join(" ")')" \
		"declined declined succeeded"
}

@test "killed after a decline, before recording it: the attempt is sent again before the next card" {
	standin
	id=$(place ada)
	crash_at pay.after_stripe bakery-order pay --card 4000000000000002 "$id"
	run bakery-order pay "$id"
	assert_success
	# Never the same key with other parameters (Stripe's 400 idempotency_error).
	assert_equal "$(requests | jq -r '"\(.key) \(.params.payment_method) \(.status)"' | paste -sd,)" \
		"$id pm_card_chargeDeclined 402,$id pm_card_chargeDeclined 402,$id-2 pm_card_visa 200"
	assert_equal "$(charges "$id")" 1
}

@test "killed after the charge, before recording it: paying again, any card, charges nothing more" {
	standin
	id=$(place ada)
	crash_at pay.after_stripe bakery-order pay "$id"
	assert_equal "$(charges "$id")" 1
	run bakery-order pay --card 4000000000009995 "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r '"\(.status) \(.payment_method)"')" "succeeded pm_card_visa"
	assert_equal "$(requests | jq -r '"\(.key) \(.status) \(.replayed)"' | paste -sd,)" \
		"$id 200 null,$id 200 true"
	assert_equal "$(charges "$id")" 1
}

@test "Stripe unreachable: exit 69, the order unchanged, and the same key once it is back" {
	standin
	id=$(place ada)
	before=$(order_snapshot "$id")
	closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	BAKERY_STRIPE_API=http://127.0.0.1:$closed run bakery-order pay "$id"
	assert_failure 69
	assert_output --partial 'stripe unreachable after 4 tries'
	assert_equal "$(order_snapshot "$id")" "$before"
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(requests | jq -r .key)" "$id"
	assert_equal "$(charges "$id")" 1
}

@test "the key appears in no argv, log line or error message" {
	standin
	unset BAKERY_STRIPE_KEY
	printf '%s\n' "$KEY" >"$BATS_TEST_TMPDIR/stripe-key"
	chmod 600 "$BATS_TEST_TMPDIR/stripe-key"
	id=$(place ada)
	mode 'fail=1&slow=1'
	bakery-order -vv pay --stripe-key-file "$BATS_TEST_TMPDIR/stripe-key" "$id" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pay=$!
	wait_for 30 arrived 2 # its retry, taking its 1 s
	ps -eo args >"$BATS_TEST_TMPDIR/ps"
	cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' >>"$BATS_TEST_TMPDIR/ps"
	wait "$pay"
	grep -q 'bakery-order -vv pay --stripe-key-file' "$BATS_TEST_TMPDIR/ps"
	run grep -c "$KEY" "$BATS_TEST_TMPDIR/ps" "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
	assert_output --regexp '/ps:0.*/out:0.*/err:0'
	grep -q stripe_retry "$BATS_TEST_TMPDIR/err"
	assert_equal "$(charges "$id")" 1
	# A wrong key, an unreachable Stripe: neither message quotes the key.
	id=$(place bo)
	BAKERY_STRIPE_KEY=sk_test_wrong0000000000 run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial 'stripe refused the API key (HTTP 401)'
	refute_output --partial sk_test_wrong
	BAKERY_STRIPE_KEY=$KEY BAKERY_STRIPE_API=http://127.0.0.1:1 run bakery-order pay "$id"
	assert_failure 69
	refute_output --partial "$KEY"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "BAKERY_STRIPE_API is judged by its host, not its first characters: 78, nothing sent, the URL not repeated" {
	standin
	id=$(place ada)
	port=${STANDIN#http://127.0.0.1:}
	for api in "http://127.0.0.1:$port@example.com" "http://u:pw_s3cret@127.0.0.1:$port" \
		"http://127.0.0.1.example.com:$port" "http://localhost.evil:$port" \
		"http://[::1]@127.0.0.2.example.com"; do
		BAKERY_STRIPE_API=$api run --separate-stderr bakery-order pay "$id"
		assert_failure 78
		[[ "$stderr" == *"bad BAKERY_STRIPE_API"* ]]
		[[ "$stderr" != *"$api"* ]]
		[[ "$stderr" != *pw_s3cret* ]]
	done
	assert_equal "$(requests | wc -l)" 0
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
}

@test "a bad key, key file or API URL is a configuration error" {
	standin
	id=$(place ada)
	BAKERY_STRIPE_KEY='pk_test_notsecret' run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial 'BAKERY_STRIPE_KEY does not hold a Stripe secret key'
	refute_output --partial pk_test_notsecret
	run bakery-order pay --stripe-key-file "$BATS_TEST_TMPDIR/none" "$id"
	assert_failure 78
	assert_output --partial "cannot read the Stripe key file (--stripe-key-file): No such file"
	refute_output --partial "$BATS_TEST_TMPDIR/none"
	BAKERY_STRIPE_API=http://api.example.com run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial 'want https://, or http:// to a loopback host'
	run bakery-order pay --payment-method 'pm card' "$id"
	assert_failure 64
	run bakery-order pay --card 4111111111111111 "$id"
	assert_failure 64
	assert_equal "$(requests | wc -l)" 0
}

@test "a home that chose the test gateway pays through it, and Stripe is not called" {
	standin
	unset BAKERY_STRIPE_KEY
	export BAKERY_HOME=$BATS_TEST_TMPDIR/trial
	bakery-order gateway test >/dev/null
	id=$(place ada)
	run bakery-order pay --payment-method pm_card_visa "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .payment_intent)" "$(bakery-show "billing/$id" | jq -r '.state.payments[0].payment_intent')"
	assert_equal "$(requests | wc -l)" 0
}
