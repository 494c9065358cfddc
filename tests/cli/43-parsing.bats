#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
# Parsing and names: what a name or an id says is all it says. Each test is
# named after the class of hostile input it closes (docs/reliability.md,
# "Hostile input").
load helpers
bats_require_minimum_version 1.5.0

SECRET=whsec_test_43

# sign FILE: a Stripe-Signature header for the file's bytes, now.
sign() {
	python3 -c 'import hashlib, hmac, sys, time
body = open(sys.argv[1], "rb").read()
t = str(int(time.time()))
print("t=%s,v1=%s" % (t, hmac.new(sys.argv[2].encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()))' \
		"$1" "$SECRET"
}

# webhook FILE: the signed body through bakery-webhook's filter mode.
webhook() {
	# shellcheck disable=SC2094 # both only read the file
	run --separate-stderr env BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET \
		bakery-webhook --signature "$(sign "$1")" <"$1"
}

# intent ORDER_ID_JSON: a payment_intent.succeeded for 450 cents whose
# metadata.order_id is the given JSON text (escapes and all), as bytes.
intent() {
	printf '{"id":"evt_1","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","object":"payment_intent","amount":450,"currency":"eur","metadata":{"order_id":%s,"sandbox":"default"}}}}' "$1"
}

# envelope TYPE DATA_JSON [ID]: one envelope line, data as given (raw text).
envelope() {
	printf '{"specversion":"1.0","id":"%s","type":"%s","source":"bakery:default/x","subject":"x","time":"2026-11-30T09:00:00.000Z","datacontenttype":"application/json","sandbox":"default","data":%s}\n' \
		"${3:-evt_$RANDOM$RANDOM}" "$1" "$2"
}

assert_unpaid() {
	assert_equal "$(bakery-order show "$1" | jq -r .status)" placed
}

@test "escaped NUL: a webhook's metadata.order_id with \\u0000 pays nothing" {
	id=$(place ada)
	intent "\"$id\\u0000x\"" >"$BATS_TEST_TMPDIR/ev"
	webhook "$BATS_TEST_TMPDIR/ev"
	assert_failure 65
	assert_equal "$(jq -r .status <<<"$output")" 400
	assert_equal "$(jq -r .message <<<"$output")" \
		'malformed JSON body: a string holds a NUL (\u0000)'
	run bakery-show "billing/$id"
	assert_failure 66
	bakery-consume >/dev/null
	assert_unpaid "$id"
}

@test "escaped NUL: an envelope's data.order with \\u0000 is refused on stdin and through the queue" {
	id=$(place ada)
	bakery-consume >/dev/null
	line=$(envelope PaymentSucceeded "{\"order\":\"$id\\u0000junk\",\"payment_intent\":\"pi_1\",\"amount_cents\":450,\"currency\":\"eur\"}")
	run --separate-stderr bakery-consume --stdin <<<"$line"
	assert_failure 65
	assert_equal "$stderr" 'bakery-consume: error: line 1: a string holds a NUL (\u0000)'
	assert_unpaid "$id"
	queue_raw evt_nul "$line"
	run --separate-stderr bakery-consume --once --max-retries 0
	assert_equal "$(jq -r .status <<<"$output")" 422
	assert_equal "$(jq -r .outcome <<<"$output")" dead-lettered
	assert_unpaid "$id"
	# A NUL in a key, or deep in the data, is refused the same way.
	run --separate-stderr bakery-consume --stdin <<<"$(envelope OrderPlaced '{"order":"ord_k","day":"2026-12-01","items":[{"item\u0000":1}]}')"
	assert_failure 65
	assert_output ''
}

@test "escaped NUL: a redrive line's id or sandbox with \\u0000 redrives nothing" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	dead=$(bakery-dlq list | jq -r .id | head -1)
	run --separate-stderr bakery-redrive <<<"{\"id\":\"$dead\\u0000junk\"}"
	assert_failure 65
	run --separate-stderr bakery-redrive <<<"{\"id\":\"$dead\",\"sandbox\":\"default\\u0000x\"}"
	assert_failure 65
	assert_equal "$(bakery-dlq list | jq -r .id | grep -c "$dead")" 1
	assert_equal "$(bakery-queue peek | jq -s length)" 0
}

@test "a repeated key: an envelope, a redrive line and a webhook body naming a field twice are refused" {
	id=$(place ada)
	bakery-consume >/dev/null
	# libjq would keep the last: an OrderPlaced read as a PaymentSucceeded.
	line=$(envelope OrderPlaced "{\"order\":\"$id\"}" | sed 's/"type":"OrderPlaced"/"type":"OrderPlaced","type":"PaymentSucceeded"/')
	run --separate-stderr bakery-consume --stdin <<<"$line"
	assert_failure 65
	assert_equal "$stderr" 'bakery-consume: error: line 1: a key named twice in one object'
	queue_raw evt_twice "$line"
	run --separate-stderr bakery-consume --once --max-retries 0
	assert_equal "$(jq -r .status <<<"$output")" 422
	assert_equal "$(jq -r .outcome <<<"$output")" dead-lettered
	# A redrive line: the id named twice.
	run --separate-stderr bakery-redrive <<<'{"id":"evt_a","id":"evt_b"}'
	assert_failure 65
	assert_equal "$stderr" 'bakery-redrive: error: line 1: a key named twice in one object'
	# A signed webhook naming the order twice pays neither.
	other=$(place bo)
	intent "\"$other\",\"order_id\":\"$id\"" >"$BATS_TEST_TMPDIR/ev"
	webhook "$BATS_TEST_TMPDIR/ev"
	assert_failure 65
	assert_equal "$(jq -r .status <<<"$output")" 400
	assert_equal "$(jq -r .message <<<"$output")" "malformed JSON body: a key named twice in one object"
	bakery-consume >/dev/null
	assert_unpaid "$id"
	assert_unpaid "$other"
}

@test "the webhook never aborts: every shape of a signed event answers 400 with a reason" {
	cd "$BATS_TEST_TMPDIR"
	shapes=(
		'{"id":"evt_1","type":"payment_intent.succeeded"}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":"x"}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":[1]}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":null}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":7}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":450,"currency":"eur","metadata":"x"}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":450,"currency":"eur","metadata":[1]}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":["pi_1"],"amount":450,"currency":"eur","metadata":{"order_id":"ord_1"}}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":-5,"currency":"eur","metadata":{"order_id":"ord_1"}}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":1e308,"currency":"eur","metadata":{"order_id":"ord_1"}}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1\u0000","amount":450,"currency":"eur","metadata":{"order_id":"ord_1"}}}}'
		'{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":450,"currency":"eur","metadata":{"order_id":"ord_1","sandbox":"x\u0000"}}}}'
		'[1]'
		'"x"'
	)
	for body in "${shapes[@]}"; do
		printf '%s' "$body" >ev
		webhook ev
		[ "$status" -eq 65 ] || { echo "status $status for $body: $stderr" >&2; return 1; }
		assert_equal "$(jq -r .status <<<"$output")" 400
		[ -n "$(jq -r .message <<<"$output")" ]
		[[ "$stderr" == "bakery-webhook: error: "* ]]
	done
	assert_equal "$(bakery-queue peek | jq -s length)" 0
}

# paid_unknown DATA_FIELDS: an OrderPaid for an order nobody placed, with
# the usual data and the given fields over it (jq object text).
paid_unknown() {
	jq -nc --arg day "$DAY" --argjson over "$1" '{specversion: "1.0",
		id: "evt_\(now * 1000000 | floor)", type: "OrderPaid",
		source: "bakery:default/order/ord_ghost", subject: "order/ord_ghost",
		time: "2026-11-30T09:00:00.000Z", datacontenttype: "application/json",
		sandbox: "default", data: ({order: "ord_ghost", customer: "mallory",
		day: $day, items: [{item: "cardamom-bun", qty: 1, price_cents: 450}],
		total_cents: 450, currency: "eur", payment_intent: "pi_g",
		paid_at: "2026-11-30T09:00:00.000Z"} + $over)}'
}

# Nothing of ord_ghost was written anywhere: no subscriber object made.
assert_nothing_written() {
	local a shown
	for a in crm/customers customer/mallory inbox/mallory "schedule/$DAY" "dispatch/$DAY"; do
		# An object never made is as good: bakery-show exits 66.
		local rc=0
		shown=$(bakery-show "$a" 2>/dev/null) || rc=$?
		[ "$rc" -eq 66 ] && continue
		[ "$rc" -eq 0 ] || { echo "bakery-show $a: exit $rc" >&2; return 1; }
		[ "$(jq '[.. | strings | select(. == "ord_ghost")] | length' <<<"$shown")" = 0 ] ||
			{ echo "$a holds ord_ghost: $shown" >&2; return 1; }
	done
}

@test "subscribers check what they apply: bad data in an OrderPaid is 422 at every subscriber, on stdin" {
	for over in '{"total_cents":1e308}' '{"items":[{"item":"cardamom-bun","qty":-5,"price_cents":450}]}' \
		'{"items":"notalist"}' '{"total_cents":-450}' '{"total_cents":451}' '{"currency":7}' \
		'{"delivery":"a\nb"}' '{"paid_at":[1]}' \
		'{"items":[{"item":"cardamom-bun","qty":60,"price_cents":450},{"item":"cardamom-bun","qty":60,"price_cents":450}],"total_cents":54000}'; do
		# Malformed: no replay helps, so 65, and the line is printed.
		run --separate-stderr bakery-consume --stdin <<<"$(paid_unknown "$over")"
		assert_failure 65
		assert_equal "$(jq -r .status <<<"$output")" 422
		[[ "$(jq -r .error <<<"$output")" == "Schedule answered 422: bad data."*"; Kitchen answered 422: bad data."* ]] ||
			{ echo "$over: not refused: $output" >&2; return 1; }
		assert_nothing_written
	done
	# The same event with good data is applied (the kitchen, with no
	# card for it, answers 409 as before).
	run --separate-stderr bakery-consume --stdin <<<"$(paid_unknown '{}')"
	assert_failure 75
	assert_equal "$(jq -r .status <<<"$output")" 409
	assert_equal "$(bakery-show crm/customers | jq .state.customers.mallory.total_cents)" 450
}

@test "subscribers check what they apply: bad data through the queue is refused and dead-lettered, nothing written" {
	queue_raw evt_big "$(paid_unknown '{"total_cents":1e308}')"
	queue_raw evt_neg "$(paid_unknown '{"items":[{"item":"cardamom-bun","qty":-5,"price_cents":450}]}')"
	run --separate-stderr bakery-consume --max-retries 0
	assert_success
	assert_equal "$(jq -s 'map(select(.status == 422 and .outcome == "dead-lettered")) | length' <<<"$output")" 2
	assert_nothing_written
}

@test "logs cannot be forged: a name or an id with a newline stays on its one log line" {
	run --separate-stderr bakery-order place --customer "$(printf 'x\nbakery-order: error: FAKE')" --day "$DAY" cardamom-bun=1
	assert_failure 64
	assert_equal "$(grep -c . <<<"$stderr")" 1
	assert_equal "${stderr%%$'\n'*}" "bakery-order: error: bad customer: 'x\nbakery-order: error: FAKE': want [a-z0-9][a-z0-9_.-]{0,63}"
	run --separate-stderr bakery-order show "$(printf 'ord_1\rbakery-order: error: FAKE\033[2K\xff')"
	assert_failure 64
	assert_equal "$stderr" "bakery-order: error: bad order id: 'ord_1\rbakery-order: error: FAKE\x1b[2K\xff'"
	# A log record's value: an event id with a newline, dead-lettered.
	bad=$(printf 'evt_1\nbakery-consume: error: FAKE')
	envelope OrderPlaced '{"order":"ord_1","day":"2026-12-01","items":"notalist"}' "$(printf 'evt_1\\nbakery-consume: error: FAKE')" |
		bakery-queue send >/dev/null
	run --separate-stderr bakery-consume --max-retries 0
	assert_success
	assert_equal "$(jq -r .id <<<"$output")" "$bad"
	assert_equal "$(grep -c . <<<"$stderr")" 1
	[[ "$stderr" == 'bakery-consume: warning: dead_lettered id="evt_1\nbakery-consume: error: FAKE" sandbox=default error="Schedule answered 422: '* ]]
	# JSON logs escape as before.
	run --separate-stderr env BAKERY_LOG=json bakery-order show "$bad"
	assert_equal "$(jq -r .message <<<"$stderr")" "bad order id: '$bad'"
}

@test "lax inputs: an empty -s is a bad sandbox name, not the default" {
	run --separate-stderr bakery-order -s '' list
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-order: error: bad sandbox name: '': want [a-z0-9][a-z0-9_.-]{0,63} without '..'"
	run --separate-stderr bakery-consume --sandbox= --drain
	assert_failure 64
}

@test "lax inputs: bakery-consume takes one mode, and --stdin alone" {
	run --separate-stderr timeout 10 bakery-consume --drain --follow
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-consume: error: --drain and --follow together: want one of --drain, --once, --follow"
	run --separate-stderr timeout 5 bakery-consume --stdin --follow </dev/null
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-consume: error: --stdin and --follow together: --stdin delivers its lines and ends"
	run --separate-stderr bakery-consume --once --stdin </dev/null
	assert_failure 64
	run bakery-consume --drain --drain
	assert_success
}

@test "lax inputs: an item repeated past 99 in all is refused" {
	mapfile -t many < <(for _ in $(seq 200); do echo cardamom-bun=99; done)
	run --separate-stderr bakery-order place --customer ada --day "$DAY" "${many[@]}"
	assert_failure 64
	assert_equal "$stderr" "bakery-order: error: bad quantity: 'cardamom-bun' 198 in all: want 1 to 99 of an item"
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=50 country-loaf=1 cardamom-bun=50
	assert_failure 64
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=50 cardamom-bun=49
	assert_success
	assert_equal "$(jq '[.items[].qty] | add' <<<"$output")" 99
	assert_equal "$(bakery-order list | wc -l)" 1
}

@test "lax inputs: invalid UTF-8 is refused, never turned into U+FFFD" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --delivery "$(printf '1 Rue \xff')" cardamom-bun=1
	assert_failure 64
	assert_equal "$stderr" "bakery-order: error: bad delivery address: want 1 to 200 bytes of UTF-8 without control characters"
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --key "$(printf 'k\xc0\xaf')" cardamom-bun=1
	assert_failure 64
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --delivery 'Große Straße 5, Zürich' cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .delivery <<<"$output")" 'Große Straße 5, Zürich'
	id=$(place ada)
	bakery-consume >/dev/null
	line=$(envelope PaymentSucceeded "{\"order\":\"$id\",\"payment_intent\":\"pi_$(printf '\xff')\",\"amount_cents\":450,\"currency\":\"eur\"}")
	run --separate-stderr bakery-consume --stdin <<<"$line"
	assert_failure 65
	assert_equal "$stderr" "bakery-consume: error: line 1: malformed JSON: invalid UTF-8"
	assert_unpaid "$id"
	printf '{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_\xed\xa0\x80","amount":450,"currency":"eur","metadata":{"order_id":"%s"}}}}' "$id" >"$BATS_TEST_TMPDIR/ev"
	webhook "$BATS_TEST_TMPDIR/ev"
	assert_failure 65
	assert_equal "$(jq -r .message <<<"$output")" "malformed JSON body: invalid UTF-8"
	run --separate-stderr bakery-redrive <<<"$(printf '{"id":"evt_\xff"}')"
	assert_failure 65
}

@test "lax settings: a BAKERY_LOG bakery does not know, a BAKERY_NOW without its zone are 78, nothing done" {
	local v cmds=("bakery-order place --customer ada --day $DAY cardamom-bun=1" "bakery-status" "bakery-consume --drain")
	for v in JSON text 1; do
		refuses_setting BAKERY_LOG "$v" BAKERY_LOG "'$v': want json, or nothing for plain lines" "${cmds[@]}"
	done
	for v in 2026-12-01T10:00:00 2026-12-01T10:00:00+01:00; do
		refuses_setting BAKERY_NOW "$v" BAKERY_NOW \
			"'$v': want seconds since the epoch or YYYY-MM-DDTHH:MM:SSZ" "${cmds[@]}"
	done
	assert_equal "$(bakery-order list | jq -s length)" 0
	run --separate-stderr env BAKERY_LOG= BAKERY_NOW=2026-12-01T10:00:00Z bakery-status
	assert_success
}

@test "lax inputs: an impossible date is refused in BAKERY_NOW and --day" {
	# Seconds past 9999-12-31T23:59:59Z, the last a timestamp can say, and
	# past what 64 bits hold in milliseconds or at all.
	for now in 2026-02-30T00:00:00Z 2026-02-29T12:00:00Z 2026-04-31T00:00:00Z 2026-12-01T24:00:00Z 2026-12-01T00:00:00Zjunk \
		253402300800 9223372036854775 99999999999999999999; do
		run --separate-stderr env BAKERY_NOW=$now bakery-order place --customer ada --day "$DAY" cardamom-bun=1
		assert_failure 78
		assert_equal "$stderr" "bakery-order: error: bad BAKERY_NOW: '$now': want seconds since the epoch or YYYY-MM-DDTHH:MM:SSZ"
	done
	run --separate-stderr env BAKERY_NOW=2028-02-29T12:00:00Z bakery-order place --customer ada --day 2028-02-29 cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .placed_at <<<"$output")" 2028-02-29T12:00:00.000Z
	run --separate-stderr env BAKERY_NOW=253402300799 bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .placed_at <<<"$output")" 9999-12-31T23:59:59.000Z
	for day in 2026-02-30 2026-13-01 2026-2-28 2026-02-28x; do
		run --separate-stderr bakery-order place --customer ada --day "$day" cardamom-bun=1
		assert_failure 64
	done
	assert_equal "$(bakery-order list | wc -l)" 2
}

@test "lax inputs: --key with the same items in another order is the same order" {
	a=$(bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1 country-loaf=2 | jq -r .id)
	run --separate-stderr bakery-order place --key k1 --customer ada --day "$DAY" country-loaf=2 cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .id <<<"$output")" "$a"
	run --separate-stderr bakery-order place --key k1 --customer ada --day "$DAY" country-loaf=1 country-loaf=1 cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .id <<<"$output")" "$a"
	run --separate-stderr bakery-order place --key k1 --customer ada --day "$DAY" country-loaf=1 cardamom-bun=1
	assert_failure 65
	assert_equal "$(bakery-order list | wc -l)" 1
}

@test "redrive: a JSON line that is not an object with an id exits 65, as bakery-redrive(1) says" {
	for line in '[1,2]' '"evt_1"' '{"ID":"evt_1"}' '{"id":7}' '{"id":"evt_1",'; do
		run --separate-stderr bakery-redrive <<<"$line"
		assert_failure 65
		[[ "$stderr" == "bakery-redrive: error: line 1: "* ]]
	done
}

@test "a number option with a leading blank or a sign is refused with 64, not read as the number" {
	run --separate-stderr bakery-consume --once --batch ' 5'
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-consume: error: bad batch: ' 5': want 1 to 100"
	run --separate-stderr bakery-consume --once --batch +5
	assert_failure 64
	run --separate-stderr bakery-queue peek --limit +3
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-queue: error: bad limit: '+3'"
	run --separate-stderr bakery-status --max-age ' 3'
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-status: error: bad max-age: ' 3': want 0 to 31622400 seconds"
}

@test "a number option past the largest integer is refused with 64" {
	run --separate-stderr bakery-consume --once --batch 99999999999999999999
	assert_failure 64
	assert_equal "${stderr%%$'\n'*}" "bakery-consume: error: bad batch: '99999999999999999999': want 1 to 100"
}

@test "bidi controls (U+202A-U+202E, U+2066-U+2069) are refused in a delivery address and a key, on the command line and in an event; a name never holds one" {
	for c in '\u202a' '\u202b' '\u202c' '\u202d' '\u202e' '\u2066' '\u2067' '\u2068' '\u2069'; do
		bidi=$(printf "$c")
		run --separate-stderr bakery-order place --customer ada --day "$DAY" --delivery "1 Rue ${bidi}evil" cardamom-bun=1
		assert_failure 64
		assert_equal "$stderr" "bakery-order: error: bad delivery address: want 1 to 200 bytes of UTF-8 without control characters"
		run --separate-stderr bakery-order place --customer ada --day "$DAY" --key "k${bidi}1" cardamom-bun=1
		assert_failure 64
		[[ $stderr == "bakery-order: error: bad key: "* ]]
		run --separate-stderr bakery-order place --customer "ada${bidi}" --day "$DAY" cardamom-bun=1
		assert_failure 64
		[[ $stderr == "bakery-order: error: bad customer: "* ]]
		refuses 64 'bad account name' bakery-console user add "ada${bidi}" <<<"$RANDOM-long-password"
		# An event that carries one is refused by every subscriber.
		run --separate-stderr bakery-consume --stdin <<<"$(paid_unknown "{\"delivery\":\"1 Rue ${bidi}x\"}")"
		assert_failure 65 # refused for good: malformed
		assert_equal "$(jq -r .status <<<"$output")" 422
		assert_nothing_written
	done
	assert_equal "$(bakery-order list)" ""
	# Other marks of direction (U+200E, U+200F) and the text around them pass.
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --delivery "$(printf '1 Rue \u200e\u05e9 \u202f5')" cardamom-bun=1
	assert_success
}
