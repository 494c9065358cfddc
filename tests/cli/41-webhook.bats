#!/usr/bin/env bats
# bakery-webhook as a CGI program under a real lighttpd on 127.0.0.1, set
# up from share/lighttpd/bakery-webhook.conf, and as a filter on stdin.
load helpers
load lighttpd
bats_require_minimum_version 1.5.0

SECRET=whsec_test_7d1f02c4b9

teardown() {
	lighttpd_stop
}

# event FILE ORDER [EVENT_ID] [INTENT] [TYPE]: Stripe's event, as bytes.
event() {
	jq -nc --arg o "$2" --arg e "${3:-evt_1}" --arg pi "${4:-pi_1}" \
		--arg type "${5:-payment_intent.succeeded}" \
		--argjson amount "$(bakery-order show "$2" | jq .total_cents)" \
		'{id: $e, object: "event", type: $type, created: now | floor,
		  data: {object: {id: $pi, object: "payment_intent", amount: $amount,
		    currency: "eur", status: "succeeded",
		    metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$1"
}

# sign FILE [SECRET] [T]: a Stripe-Signature header for the file's bytes,
# HMAC-SHA256 of "T.BODY" by openssl(1), which bakery does not use.
sign() {
	local t=${3:-$(date +%s)} mac
	mac=$({ printf '%s.' "$t"; cat "$1"; } | openssl dgst -sha256 -hmac "${2:-$SECRET}" -r) || return 1
	echo "t=$t,v1=${mac%% *}"
}

# post FILE [HEADER]: prints the HTTP status; the body lands in $RESPONSE.
post() {
	curl -s -o "$RESPONSE" -w '%{http_code}' -X POST --data-binary "@$1" \
		-H 'Content-Type: application/json' ${2:+-H "Stripe-Signature: $2"} "$URL"
}

# Nothing was recorded: no billing object, no PaymentSucceeded queued.
assert_nothing_recorded() {
	run bakery-show "billing/$1"
	assert_failure 66
	[ "$(bakery-queue peek | jq -s '[.[] | select(.envelope.type == "PaymentSucceeded")] | length')" = 0 ]
}

refused() { # STATUS FILE [HEADER]
	assert_equal "$(post "$2" "${3:-}")" "$1"
	[ "$(jq -r .status "$RESPONSE")" = "$1" ]
}

@test "a good signature answers 200 and records one PaymentSucceeded, though posted 100 times" {
	lighttpd_start
	id=$(place ada cardamom-bun=2)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	sig=$(sign "$BATS_TEST_TMPDIR/ev")
	assert_equal "$(post "$BATS_TEST_TMPDIR/ev" "$sig")" 200
	assert_equal "$(jq -c . "$RESPONSE")" '{"status":200,"message":"recorded"}'
	# The receiver answers first and sends Billing's outbox after; the
	# server's end-of-request SIGTERM must not cut that send short. Wait
	# for the send of this first post to land, before any other post
	# (each of which sends what it finds in the outbox) can make up for it.
	for _ in $(seq 50); do
		[ "$(bakery-show "billing/$id" | jq '.outbox | length')" = 0 ] && break
		sleep 0.1
	done
	assert_equal "$(bakery-show "billing/$id" | jq '.outbox | length')" 0
	assert_equal "$(bakery-queue peek | jq -s '[.[] | select(.envelope.type == "PaymentSucceeded")] | length')" 1
	seq 99 | xargs -P 8 -I{} curl -s -o /dev/null -w '%{http_code}\n' -X POST \
		--data-binary "@$BATS_TEST_TMPDIR/ev" -H "Stripe-Signature: $sig" "$URL" \
		>"$BATS_TEST_TMPDIR/codes"
	assert_equal "$(sort "$BATS_TEST_TMPDIR/codes" | uniq -c | awk '{print $1, $2}')" "99 200"
	assert_equal "$(bakery-show "billing/$id" | jq '.state.payments | length')" 1
	assert_equal "$(bakery-queue peek | jq -s '[.[] | select(.envelope.type == "PaymentSucceeded")] | length')" 1
	run bakery-consume
	assert_success
	assert_effects_once "$id"
}

@test "two events for one payment intent record one payment" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/a" "$id" evt_a pi_x
	event "$BATS_TEST_TMPDIR/b" "$id" evt_b pi_x
	assert_equal "$(post "$BATS_TEST_TMPDIR/a" "$(sign "$BATS_TEST_TMPDIR/a")")" 200
	assert_equal "$(post "$BATS_TEST_TMPDIR/b" "$(sign "$BATS_TEST_TMPDIR/b")")" 200
	assert_equal "$(jq -r .message "$RESPONSE")" "already recorded"
	assert_equal "$(bakery-show "billing/$id" | jq '.state.payments | length')" 1
}

@test "other event types are acknowledged and ignored" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id" evt_2 pi_2 payment_intent.created
	assert_equal "$(post "$BATS_TEST_TMPDIR/ev" "$(sign "$BATS_TEST_TMPDIR/ev")")" 200
	assert_equal "$(jq -r .message "$RESPONSE")" ignored
	assert_nothing_recorded "$id"
}

@test "a rolled secret: any one v1 that matches is enough" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	t=$(date +%s)
	old=$(sign "$BATS_TEST_TMPDIR/ev" whsec_old "$t")
	new=$(sign "$BATS_TEST_TMPDIR/ev" "$SECRET" "$t")
	assert_equal "$(post "$BATS_TEST_TMPDIR/ev" "$old,${new#t=*,}")" 200
	assert_equal "$(bakery-show "billing/$id" | jq '.state.payments | length')" 1
}

@test "a wrong secret answers 401 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	refused 401 "$BATS_TEST_TMPDIR/ev" "$(sign "$BATS_TEST_TMPDIR/ev" whsec_wrong)"
	assert_equal "$(jq -r .message "$RESPONSE")" "signature does not match"
	assert_nothing_recorded "$id"
}

@test "a missing Stripe-Signature header answers 401 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	refused 401 "$BATS_TEST_TMPDIR/ev"
	assert_equal "$(jq -r .message "$RESPONSE")" "missing Stripe-Signature header"
	assert_nothing_recorded "$id"
}

@test "a v0 signature alone answers 401 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	sig=$(sign "$BATS_TEST_TMPDIR/ev")
	refused 401 "$BATS_TEST_TMPDIR/ev" "${sig/v1=/v0=}"
	assert_nothing_recorded "$id"
}

@test "a stale or a future timestamp answers 401 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	now=$(date +%s)
	refused 401 "$BATS_TEST_TMPDIR/ev" "$(sign "$BATS_TEST_TMPDIR/ev" "$SECRET" $((now - 400)))"
	assert_equal "$(jq -r .message "$RESPONSE")" "timestamp outside the tolerance of 300 s"
	refused 401 "$BATS_TEST_TMPDIR/ev" "$(sign "$BATS_TEST_TMPDIR/ev" "$SECRET" $((now + 400)))"
	assert_nothing_recorded "$id"
}

@test "a changed body answers 401 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	sig=$(sign "$BATS_TEST_TMPDIR/ev")
	sed -i 's/"amount":[0-9]*/"amount":1/' "$BATS_TEST_TMPDIR/ev"
	grep -q '"amount":1,' "$BATS_TEST_TMPDIR/ev"
	refused 401 "$BATS_TEST_TMPDIR/ev" "$sig"
	assert_nothing_recorded "$id"
}

@test "a body over 64 KiB answers 413 and records nothing" {
	lighttpd_start
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	jq -c --arg pad "$(head -c 70000 /dev/zero | tr '\0' x)" '.pad = $pad' \
		"$BATS_TEST_TMPDIR/ev" | tr -d '\n' >"$BATS_TEST_TMPDIR/big"
	refused 413 "$BATS_TEST_TMPDIR/big" "$(sign "$BATS_TEST_TMPDIR/big")"
	assert_nothing_recorded "$id"
}

@test "a GET answers 405 and records nothing" {
	lighttpd_start
	run curl -s -i "$URL"
	assert_line --partial '405 Method Not Allowed'
	assert_line --partial 'Allow: POST'
	assert_line --partial 'Content-Type: application/json'
	assert_equal "$(bakery-queue peek | jq -s length)" 0
}

@test "malformed JSON, even well signed, answers 400 and records nothing" {
	lighttpd_start
	id=$(place ada)
	printf '{"id":"evt_1","type":"payment_intent.succeeded",' >"$BATS_TEST_TMPDIR/ev"
	refused 400 "$BATS_TEST_TMPDIR/ev" "$(sign "$BATS_TEST_TMPDIR/ev")"
	assert_equal "$(jq -r .message "$RESPONSE")" "malformed JSON body"
	event "$BATS_TEST_TMPDIR/ev" "$id"
	jq -c 'del(.data.object.metadata.order_id)' "$BATS_TEST_TMPDIR/ev" | tr -d '\n' >"$BATS_TEST_TMPDIR/no-order"
	refused 400 "$BATS_TEST_TMPDIR/no-order" "$(sign "$BATS_TEST_TMPDIR/no-order")"
	assert_nothing_recorded "$id"
}

@test "outside CGI: exit 0 recorded or ignored, 77 bad signature, 65 malformed or too large" {
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	run bakery-webhook --signature "$(sign "$BATS_TEST_TMPDIR/ev" whsec_wrong)" <"$BATS_TEST_TMPDIR/ev"
	assert_failure 77
	assert_output --partial 'bakery-webhook: error: signature does not match'
	HTTP_STRIPE_SIGNATURE=$(sign "$BATS_TEST_TMPDIR/ev") run bakery-webhook --max-body 100 <"$BATS_TEST_TMPDIR/ev"
	assert_failure 65
	assert_output --partial 'body too large'
	printf 'not json' >"$BATS_TEST_TMPDIR/bad"
	run bakery-webhook --signature "$(sign "$BATS_TEST_TMPDIR/bad")" <"$BATS_TEST_TMPDIR/bad"
	assert_failure 65
	run bakery-webhook --tolerance 10 --signature "$(sign "$BATS_TEST_TMPDIR/ev" "$SECRET" $(( $(date +%s) - 60 )))" <"$BATS_TEST_TMPDIR/ev"
	assert_failure 77
	assert_nothing_recorded "$id"
	HTTP_STRIPE_SIGNATURE=$(sign "$BATS_TEST_TMPDIR/ev") run bakery-webhook <"$BATS_TEST_TMPDIR/ev"
	assert_success
	assert_equal "$(echo "$output" | jq -c .)" '{"status":200,"message":"recorded"}'
	run bakery-webhook --signature "$(sign "$BATS_TEST_TMPDIR/ev")" <"$BATS_TEST_TMPDIR/ev"
	assert_success
	assert_equal "$(echo "$output" | jq -r .message)" "already recorded"
}

@test "a queue URL naming no file: 503 and 78, nothing recorded, so Stripe delivers the event again" {
	sqlite_only "a sqlite: queue"
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	q=$BAKERY_HOME/queue.bd
	run --separate-stderr bakery-webhook --queue "sqlite:$q" --signature "$(sign "$BATS_TEST_TMPDIR/ev")" <"$BATS_TEST_TMPDIR/ev"
	assert_failure 78
	assert_equal "$(jq -r .status <<<"$output")" 503
	[ ! -e "$q" ]
	assert_nothing_recorded "$id"
}

@test "a secret from --secret-file; none at all is a configuration error" {
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id"
	run bakery-webhook --signature "$(sign "$BATS_TEST_TMPDIR/ev")" <"$BATS_TEST_TMPDIR/ev"
	assert_failure 78
	assert_output --partial 'no webhook secret'
	printf '%s\n' "$SECRET" >"$BATS_TEST_TMPDIR/secret"
	run bakery-webhook --secret-file "$BATS_TEST_TMPDIR/secret" \
		--signature "$(sign "$BATS_TEST_TMPDIR/ev")" <"$BATS_TEST_TMPDIR/ev"
	assert_success
	run bakery-webhook extra
	assert_failure 64
}
