#!/usr/bin/env bats
# Refunds owed: a payment kept but not counted (double, mismatch, no_order)
# needs attention until an operator refunds it and says so with
# bakery-order refunded; the daily wipe that removes its sandbox keeps it
# in HOME/refunds.db, so the money owed is never forgotten with the day.
load helpers
bats_require_minimum_version 1.5.0

SECRET=whsec_refunds_9a41

# flagged ORDER EVENT INTENT: Stripe's payment_intent.succeeded of the
# order's amount, signed with $SECRET, handed to Billing: a second payment
# of a paid order, so kept and flagged "double".
flagged() {
	local f=$BATS_TEST_TMPDIR/$2 sig
	jq -nc --arg o "$1" --arg e "$2" --arg pi "$3" \
		--argjson amount "$(bakery-order show "$1" | jq .total_cents)" \
		'{id: $e, object: "event", type: "payment_intent.succeeded",
		  created: now | floor,
		  data: {object: {id: $pi, object: "payment_intent", amount: $amount,
		    currency: "eur", status: "succeeded",
		    metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$f"
	sig=$(python3 -c 'import hashlib, hmac, sys, time
t = str(int(time.time()))
body = open(sys.argv[1], "rb").read()
print("t=%s,v1=%s" % (t, hmac.new(sys.argv[2].encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()))' "$f" "$SECRET")
	BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET bakery-webhook --signature "$sig" <"$f" 2>/dev/null |
		jq -e '.message | startswith("recorded, flagged: second payment")' >/dev/null
}

# A paid order $id with a second payment pi_second flagged.
double_paid() {
	export BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET
	id=$(paid_order ada)
	flagged "$id" evt_second pi_second
	bakery-consume >/dev/null
	paid_by=$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" \
		"SELECT json_extract(json, '\$.payments[0].payment_intent') FROM state")
}

owed_line() {
	echo "  refunds: payment pi_second of order $id (sandbox default, wiped) not counted: second payment: the order was paid by $paid_by: refund it, then bakery-order -s default refunded $id pi_second"
}

@test "a flagged payment outlives the wipe: it needs attention until marked refunded" {
	double_paid
	run bakery-status
	assert_failure 1
	assert_line --partial "billing/$id: payment pi_second not counted"
	run --separate-stderr bakery-wipe --all
	assert_success
	[ ! -e "$BAKERY_HOME/sandboxes/default/billing" ]
	run bakery-status
	assert_failure 1
	assert_line "$(owed_line)"
	run bakery-status --json
	assert_failure 1
	assert_equal "$(jq -c '[.ok, [.refunds_owed[] | [.order == "'"$id"'", .payment_intent, .flag, .amount_cents, .currency, .refunded_at]]]' <<<"$output")" \
		'[false,[[true,"pi_second","double",450,"eur",null]]]'
	run bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	assert_failure 1
	grep -qx 'bakery_refunds_owed 1' "$BATS_TEST_TMPDIR/bakery.prom"
	# Refunded in Stripe's Dashboard; the operator says so.
	run --separate-stderr bakery-order refunded "$id" pi_second
	assert_success
	assert_equal "$(jq -r '[.order == "'"$id"'", .payment_intent, .wiped_at != null, .refunded_at != null] | @tsv' <<<"$output")" \
		"$(printf 'true\tpi_second\ttrue\ttrue')"
	first=$output
	run bakery-status
	assert_success
	assert_line "nothing needs attention"
	# Saying it again answers the first mark, unchanged.
	run --separate-stderr bakery-order refunded "$id" pi_second
	assert_success
	assert_equal "$output" "$first"
	run bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	assert_success
	grep -qx 'bakery_refunds_owed 0' "$BATS_TEST_TMPDIR/bakery.prom"
}

@test "marked refunded before the wipe: no longer needs attention, and the wipe does not bring it back" {
	double_paid
	run --separate-stderr bakery-order refunded "$id" pi_second
	assert_success
	assert_equal "$(jq -c '[.wiped_at, .refunded_at != null, .flag]' <<<"$output")" '[null,true,"double"]'
	run bakery-status
	assert_success
	run --separate-stderr bakery-wipe --all
	assert_success
	run bakery-status
	assert_success
	assert_line "nothing needs attention"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "refunded is refused for the payment that counted, an unknown one, another order's or sandbox's, and bad names; nothing is marked" {
	double_paid
	[[ "$paid_by" == pi_* ]]
	run --separate-stderr bakery-order refunded "$id" "$paid_by"
	assert_failure 65
	assert_equal "$stderr" "bakery-order: error: payment '$paid_by' paid order '$id': it was counted, not flagged; a refund of it is not marked here"
	run --separate-stderr bakery-order refunded "$id" pi_unknown
	assert_failure 66
	assert_equal "$stderr" "bakery-order: error: no payment 'pi_unknown' of order '$id' in sandbox 'default'"
	other=$(paid_order bo)
	run --separate-stderr bakery-order refunded "$other" pi_second
	assert_failure 66
	run --separate-stderr bakery-order -s elsewhere refunded "$id" pi_second
	assert_failure 66
	for bad in "pi second" "pi_\$x" "" $'pi_\n' "$(head -c 300 /dev/zero | tr '\0' a)"; do
		run --separate-stderr bakery-order refunded "$id" "$bad"
		assert_failure 64
	done
	run --separate-stderr bakery-order refunded ../x pi_second
	assert_failure 64
	run --separate-stderr bakery-order refunded "$id"
	assert_failure 64
	# None of these marked anything: it still needs attention.
	run bakery-status
	assert_failure 1
	assert_line --partial "payment pi_second not counted"
	run sqlite3 "$BAKERY_HOME/refunds.db" "SELECT count(*) FROM refunds"
	assert_output 0
}

@test "a wipe killed after keeping the flagged payments, then resumed, keeps each once" {
	double_paid
	crash_at wipe.midway bakery-wipe --all
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	run bakery-status --json
	assert_failure 1
	assert_equal "$(jq -c '[.refunds_owed[] | .payment_intent]' <<<"$output")" '["pi_second"]'
	assert_equal "$(sqlite3 "$BAKERY_HOME/refunds.db" 'SELECT count(*) FROM refunds')" 1
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a billing file that cannot be read stops the wipe of its sandbox, named; nothing is removed" {
	double_paid
	echo garbage >"$BAKERY_HOME/sandboxes/default/billing/$id.db"
	run --separate-stderr bakery-wipe --all
	assert_failure
	[[ "$stderr" == *"billing/$id"* ]]
	[ -e "$BAKERY_HOME/sandboxes/default/order/$id.db" ]
	[ -e "$BAKERY_HOME/sandboxes/default/billing/$id.db" ]
}
