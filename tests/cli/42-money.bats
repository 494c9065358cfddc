#!/usr/bin/env bats
# Money: a payment counts only when it is real and it is this order's. The
# currency and amount of a payment, the home's recorded gateway, double and
# wrong payments flagged for a refund, pay answering a recorded success, and
# secrets kept out of argv and messages. Stripe's webhook is signed here as
# Stripe signs it and handed to bakery-webhook on stdin.
load helpers
bats_require_minimum_version 1.5.0

SECRET=whsec_money_5c2e81

# event FILE ORDER EVENT_ID INTENT [CURRENCY] [AMOUNT]: Stripe's
# payment_intent.succeeded, as bytes; the order's total unless AMOUNT.
event() {
	jq -nc --arg o "$2" --arg e "$3" --arg pi "$4" --arg cur "${5:-eur}" \
		--argjson amount "${6:-$(bakery-order show "$2" | jq .total_cents)}" \
		'{id: $e, object: "event", type: "payment_intent.succeeded",
		  created: now | floor,
		  data: {object: {id: $pi, object: "payment_intent", amount: $amount,
		    currency: $cur, status: "succeeded",
		    metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$1"
}

# deliver FILE: hands the event to Billing, signed with $SECRET.
deliver() {
	local sig
	sig=$(python3 -c 'import hashlib, hmac, sys, time
t = str(int(time.time()))
body = open(sys.argv[1], "rb").read()
print("t=%s,v1=%s" % (t, hmac.new(sys.argv[2].encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()))' "$1" "$SECRET")
	bakery-webhook --signature "$sig" <"$1"
}

# Every file of the home and its checksum: to prove a command wrote nothing.
# Every file of the home but a WAL's -shm: SQLite's index of the WAL,
# rebuilt from it by the first connection to open the file, not state.
home_files() {
	(cd "$BAKERY_HOME" && find . -type f ! -name '*-shm' -exec sha256sum {} + | sort)
}

status_of() { bakery-order show "$1" | jq -r .status; }

# The issue's scenario: a home that pays through Stripe, an order $id
# whose pay could not reach Stripe (69), its attempt pending.
stripe_home_with_pending_order() {
	bakery-order gateway stripe >/dev/null
	id=$(place ada)
	BAKERY_STRIPE_KEY=sk_test_a BAKERY_STRIPE_API=http://127.0.0.1:1 BAKERY_STRIPE_RETRIES=0 \
		run bakery-order pay "$id"
	assert_failure 69
}

@test "currency: a signed payment in another currency, or of another amount, is kept flagged and pays nothing" {
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(place ada cardamom-bun=2)
	event "$BATS_TEST_TMPDIR/jpy" "$id" evt_jpy pi_jpy jpy
	run --separate-stderr deliver "$BATS_TEST_TMPDIR/jpy"
	assert_success
	assert_equal "$(echo "$output" | jq -r .message)" \
		"recorded, flagged: paid 900 jpy where the order is 900 eur"
	total=$(bakery-order show "$id" | jq .total_cents)
	event "$BATS_TEST_TMPDIR/less" "$id" evt_less pi_less eur $((total - 1))
	run --separate-stderr deliver "$BATS_TEST_TMPDIR/less"
	assert_success
	bakery-consume >/dev/null
	assert_equal "$(status_of "$id")" placed
	assert_equal "$(bakery-show "billing/$id" | jq -c '[.state.payments[] | [.payment_intent, .flag]]')" \
		'[["pi_jpy","mismatch"],["pi_less","mismatch"]]'
	assert_equal "$(bakery-show "billing/$id" | jq '.outbox | length')" 0
	[ "$(bakery-queue peek | jq -s '[.[] | select(.envelope.type == "PaymentSucceeded")] | length')" = 0 ]
	# The right money still pays it.
	run bakery-order pay "$id"
	assert_success
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "currency: the order refuses a PaymentSucceeded in another currency" {
	id=$(place ada)
	total=$(bakery-order show "$id" | jq .total_cents)
	jq -nc --arg o "$id" --argjson t "$total" '{specversion: "1.0", id: "evt_forged",
		type: "PaymentSucceeded", source: "bakery:default/billing/\($o)",
		subject: "billing/\($o)", time: "2026-12-01T10:00:00.000Z",
		datacontenttype: "application/json", sandbox: "default",
		data: {order: $o, payment_intent: "pi_x", amount_cents: $t, currency: "jpy"}}' >"$BATS_TEST_TMPDIR/env"
	run bakery-consume --stdin <"$BATS_TEST_TMPDIR/env"
	assert_equal "$(echo "$output" | jq -r '[.status, .error] | join(" ")')" \
		"422 Order answered 422: amount or currency differs from the order's"
	assert_equal "$(status_of "$id")" placed
}

@test "test gateway never pays by accident: a Stripe home whose key is lost exits 78 and records nothing" {
	stripe_home_with_pending_order
	before=$(home_files)
	run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial "pays through Stripe and no Stripe key is configured"
	assert_equal "$(home_files)" "$before"
	run bakery-order pay --card 4000000000000002 "$id"
	assert_failure 78
	assert_equal "$(home_files)" "$before"
	bakery-consume >/dev/null
	assert_equal "$(status_of "$id")" placed
	assert_equal "$(bakery-show "billing/$id" | jq -c '[(.state.payments // [] | length), [.state.attempts[].status]]')" \
		'[0,["pending"]]'
	[ ! -e "$BAKERY_HOME/webhook-secret" ]
}

@test "test gateway never pays by accident: no gateway chosen, pay exits 78 and records nothing" {
	export BAKERY_HOME=$BATS_TEST_TMPDIR/unchosen
	id=$(place ada)
	before=$(home_files)
	run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial "no payment gateway chosen for home '$BAKERY_HOME'"
	assert_equal "$(home_files)" "$before"
	run bakery-order gateway
	assert_success
	assert_equal "$(echo "$output" | jq -c .gateway)" null
}

@test "test gateway never pays by accident: a Stripe home never goes back, and a test home refuses a key" {
	id=$(place ada)
	before=$(home_files)
	BAKERY_STRIPE_KEY=sk_test_a run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial "uses the test gateway and a Stripe key was given"
	assert_equal "$(home_files)" "$before"
	run bakery-order gateway stripe
	assert_success
	assert_equal "$(echo "$output" | jq -c '[.gateway, .was]')" '["stripe","test"]'
	run bakery-order gateway test
	assert_failure 77
	assert_output --partial "never goes back to the test gateway"
	assert_equal "$(cat "$BAKERY_HOME/.gateway")" stripe
	run bakery-order gateway paypal
	assert_failure 64
	echo bogus >"$BAKERY_HOME/.gateway"
	run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial "bad gateway file"
}

@test "test gateway never pays by accident: an order with a Stripe attempt is settled through Stripe only" {
	stripe_home_with_pending_order
	# A home from before the choice was recorded, set to the test gateway.
	rm "$BAKERY_HOME/.gateway"
	bakery-order gateway test >/dev/null
	before=$(home_files)
	run bakery-order pay "$id"
	assert_failure 78
	assert_output --partial "has an attempt with Stripe: it is settled through Stripe only"
	assert_equal "$(home_files)" "$before"
	bakery-consume >/dev/null
	assert_equal "$(status_of "$id")" placed
}

@test "test gateway never pays by accident: the choice shows in bakery-status, --json, --prom and -V" {
	run bakery-status
	assert_success
	assert_line "gateway  test"
	bakery-order gateway stripe >/dev/null
	run bakery-status --json
	assert_success
	assert_equal "$(echo "$output" | jq -r .gateway)" stripe
	run bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	assert_success
	run grep '^bakery_gateway' "$BATS_TEST_TMPDIR/bakery.prom"
	assert_output 'bakery_gateway{gateway="stripe"} 1'
	run bakery-order -V
	assert_success
	assert_line "gateway stripe (home $BAKERY_HOME)"
	# No home: a configuration error, and no choice made for it.
	run env BAKERY_HOME="$BATS_TEST_TMPDIR/none" bakery-status --json
	assert_failure 78
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "double or wrong payment: a second payment intent for a paid order is flagged, logged and needs attention" {
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(place ada cardamom-bun=2)
	event "$BATS_TEST_TMPDIR/a" "$id" evt_a pi_first
	event "$BATS_TEST_TMPDIR/b" "$id" evt_b pi_second
	event "$BATS_TEST_TMPDIR/c" "$id" evt_c pi_third usd
	run deliver "$BATS_TEST_TMPDIR/a"
	assert_success
	assert_equal "$(echo "$output" | jq -r .message)" recorded
	run --separate-stderr deliver "$BATS_TEST_TMPDIR/b"
	assert_success
	assert_equal "$(echo "$output" | jq -r .message)" \
		"recorded, flagged: second payment: the order was paid by pi_first"
	assert_equal "$stderr" "bakery-webhook: warning: payment_flagged order=$id sandbox=default payment_intent=pi_second paid_by=pi_first flag=double reason=\"second payment: the order was paid by pi_first\" hint=\"refund it\""
	run --separate-stderr deliver "$BATS_TEST_TMPDIR/c"
	assert_success
	[[ "$stderr" == *"order=$id"*"payment_intent=pi_third"*"flag=mismatch"* ]]
	bakery-consume >/dev/null
	assert_effects_once "$id"
	run bakery-status
	assert_failure 1
	assert_line "needs attention:"
	assert_line "  sandbox default: billing/$id: payment pi_second not counted: second payment: the order was paid by pi_first: refund it, then bakery-order -s default refunded $id pi_second"
	assert_line "  sandbox default: billing/$id: payment pi_third not counted: paid 900 usd where the order is 900 eur: refund it, then bakery-order -s default refunded $id pi_third"
	run bakery-status --json
	assert_failure 1
	assert_equal "$(echo "$output" | jq -c '[.ok, .sandboxes[0].flagged_payments, [.sandboxes[0].flagged[] | [.order == "'"$id"'", .payment_intent, .flag]]]')" \
		'[false,2,[[true,"pi_second","double"],[true,"pi_third","mismatch"]]]'
	run bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	assert_failure 1
	run grep -E '^bakery_(payments_flagged|attention)' "$BATS_TEST_TMPDIR/bakery.prom"
	assert_output "$(printf '%s\n' 'bakery_payments_flagged{sandbox="default"} 2' 'bakery_attention 1')"
}

@test "double or wrong payment: the test gateway after a webhook's payment sends no second one" {
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/a" "$id" evt_a pi_hook
	deliver "$BATS_TEST_TMPDIR/a" >/dev/null
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .payment_intent)" pi_hook
	assert_equal "$(bakery-show "billing/$id" | jq '.state.payments | length')" 1
	run bakery-status
	assert_success
}

@test "pay is idempotent once paid: a declined card after a success answers the success" {
	id=$(place ada)
	run bakery-order pay "$id"
	assert_success
	pi=$(echo "$output" | jq -r .payment_intent)
	run bakery-order pay --card 4000000000000002 "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r '.status + " " + .payment_intent')" "succeeded $pi"
	run bakery-order pay --payment-method pm_card_chargeDeclinedInsufficientFunds "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r .payment_intent)" "$pi"
	bakery-consume >/dev/null
	run bakery-order pay --card 4000000000000002 "$id"
	assert_success
	assert_equal "$(echo "$output" | jq -r '.status + " " + .payment_intent')" "paid $pi"
	# An unknown card is a usage error whatever the order's state.
	run bakery-order pay --card 1234 "$id"
	assert_failure 64
	assert_output --partial "unknown test card: '1234'"
	assert_effects_once "$id"
}

@test "secret never reaches argv or a log: no prefix takes a secret option's place, no value is echoed" {
	id=$(place ada)
	for args in "--stripe-key sk_live_X" "--stripe-key=sk_live_X" "--stripe sk_live_X" "--stripe-key-fil sk_live_X"; do
		# shellcheck disable=SC2086
		run bakery-order pay $args "$id"
		assert_failure 64
		assert_output --partial "write --stripe-key-file in full"
		refute_output --partial sk_live_X
	done
	run bakery-order pay --stripe-key-file sk_live_X "$id"
	assert_failure 78
	assert_output --partial "cannot read the Stripe key file (--stripe-key-file)"
	refute_output --partial sk_live_X
	run bakery-order --stripe-key-filex=sk_live_X pay "$id"
	assert_failure 64
	refute_output --partial sk_live_X
	for args in "--secret whsec_X" "--secret=whsec_X" "--secret-f whsec_X"; do
		# shellcheck disable=SC2086
		run bakery-webhook $args </dev/null
		assert_failure 64
		assert_output --partial "write --secret-file in full"
		refute_output --partial whsec_X
	done
	run bakery-webhook --secret-file whsec_X </dev/null
	assert_failure 78
	refute_output --partial whsec_X
	BAKERY_STRIPE_WEBHOOK_SECRET_FILE=whsec_Y run bakery-webhook </dev/null
	assert_failure 78
	refute_output --partial whsec_Y
	run bakery-status --js
	assert_failure 64
	assert_output --partial "write --json in full"
	assert_equal "$(status_of "$id")" placed
}

@test "secret never reaches argv or a log: a secret file others can read is warned of" {
	printf '%s\n' "$SECRET" >"$BATS_TEST_TMPDIR/whsec"
	chmod 640 "$BATS_TEST_TMPDIR/whsec"
	id=$(place ada)
	event "$BATS_TEST_TMPDIR/ev" "$id" evt_1 pi_1
	run --separate-stderr bakery-webhook --secret-file "$BATS_TEST_TMPDIR/whsec" --signature t=1,v1=00 <"$BATS_TEST_TMPDIR/ev"
	assert_failure 77
	[[ "$stderr" == *"warning: secret_file_mode"*"mode=0640"*"chmod 600"* ]]
	[[ "$stderr" != *"$SECRET"* ]]
	chmod 600 "$BATS_TEST_TMPDIR/whsec"
	run --separate-stderr bakery-webhook --secret-file "$BATS_TEST_TMPDIR/whsec" --signature t=1,v1=00 <"$BATS_TEST_TMPDIR/ev"
	assert_failure 77
	[[ "$stderr" != *secret_file_mode* ]]
	# The test gateway's own secret, made 0600, opened to others later.
	paid_order bo >/dev/null
	chmod 644 "$BAKERY_HOME/webhook-secret"
	other=$(place cy)
	run --separate-stderr bakery-order pay "$other"
	assert_success
	[[ "$stderr" == *"warning: secret_file_mode"*"mode=0644"* ]]
	printf 'sk_test_money\n' >"$BATS_TEST_TMPDIR/key"
	chmod 604 "$BATS_TEST_TMPDIR/key"
	bakery-order gateway stripe >/dev/null
	BAKERY_STRIPE_API=http://127.0.0.1:1 BAKERY_STRIPE_RETRIES=0 \
		run --separate-stderr bakery-order pay --stripe-key-file "$BATS_TEST_TMPDIR/key" "$id"
	assert_failure 69
	[[ "$stderr" == *"warning: secret_file_mode"*"mode=0604"* ]]
	[[ "$stderr" != *sk_test_money* ]]
}
