#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
# W3C trace context (bakery(7), "Trace context"): every envelope's
# traceparent, carried across every hop, handed to the subscribers outside
# bakery, shown by bakery-trace; a bad one from outside dropped with a
# warning for a new trace, never a refused event.
bats_require_minimum_version 1.5.0
load helpers
load lighttpd

TRACE=4bf92f3577b34da6a3ce929d0e0e4736
PARENT=00-$TRACE-00f067aa0ba902b7-01
SECRET=whsec_test_7d1f02c4b9
VALID='^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'

teardown() {
	lighttpd_stop
}

# traces ORDER TYPE: the traceparent of each TYPE event of the order.
traces() { bakery-order events "$1" | jq -r --arg t "$2" 'select(.type == $t) | .traceparent'; }

# fresh TRACEPARENT: a valid one, of a trace that is not $TRACE.
fresh() {
	[[ "$1" =~ $VALID ]] && [[ "$1" != 00-"$TRACE"-* ]] &&
		[[ "$1" != 00-00000000000000000000000000000000-* ]]
}

# prog NAME BODY: an executable shell script $BATS_TEST_TMPDIR/NAME that
# logs each call's TRACEPARENT, then runs BODY.
prog() {
	local f="$BATS_TEST_TMPDIR/$1"
	printf '#!/bin/sh\nf=%s\necho "$TRACEPARENT $TRACESTATE" >>"$f.calls"\n%s\n' "$f" "$2" >"$f"
	chmod +x "$f"
}

@test "one order, one trace: placed and paid under TRACEPARENT, consumed, dead-lettered and redriven" {
	# The subscriber refuses the first delivery for good (65: dead letter
	# at once), then applies it.
	prog rec '[ -e "$f.once" ] && exit 0; touch "$f.once"; exit 65'
	{ cat "$TOP/share/routes"; echo "OrderPaid exec:$BATS_TEST_TMPDIR/rec name=rec"; } >"$BAKERY_HOME/routes"
	export TRACEPARENT=$PARENT TRACESTATE=congo=t61rcWkgMzE
	id=$(paid_order ada)
	unset TRACEPARENT TRACESTATE
	# A consumer with a trace of its own: the events' traces win.
	TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01 \
		bakery-consume --retry-delay 0 >/dev/null 2>&1
	placed=$(traces "$id" OrderPlaced) paid=$(traces "$id" OrderPaid)
	succeeded=$(bakery-trace --json "$id" | jq -r 'select(.type == "PaymentSucceeded") | .id')
	[[ "$placed" =~ ^00-$TRACE-[0-9a-f]{16}-01$ ]]
	[[ "$paid" =~ ^00-$TRACE-[0-9a-f]{16}-01$ ]]
	# Each event a span id of its own, none the caller's.
	assert_equal "$(printf '%s\n' "${placed:36:16}" "${paid:36:16}" 00f067aa0ba902b7 | sort -u | wc -l)" 3
	assert_equal "$(bakery-order events "$id" | jq -r .tracestate | sort -u)" congo=t61rcWkgMzE
	# bakery-trace: each of the three events' trace id.
	run --separate-stderr bakery-trace --json "$id"
	assert_success
	assert_equal "$(jq -r '[.type, .trace_id] | join(" ")' <<<"$output")" "OrderPlaced $TRACE
PaymentSucceeded $TRACE
OrderPaid $TRACE"
	run bakery-trace "$succeeded"
	assert_success
	assert_line --index 1 "trace $TRACE"
	# The exec: subscriber got the trace, a span id of its own.
	run cat "$BATS_TEST_TMPDIR/rec.calls"
	assert_output --regexp "^00-$TRACE-[0-9a-f]{16}-01 congo=t61rcWkgMzE\$"
	refute_output --partial "$paid"
	# Dead-lettered, stored, redriven, delivered: the same trace.
	bakery-dlq drain >/dev/null
	evt=$(bakery-dlq list | jq -r .id)
	assert_equal "$(bakery-dlq list | jq -r .envelope.traceparent)" "$paid"
	bakery-redrive "$evt" >/dev/null
	assert_equal "$(bakery-queue peek | jq -r --arg e "$evt" 'select(.id == $e) | .envelope.traceparent')" "$paid"
	bakery-consume --retry-delay 0 >/dev/null
	run cat "$BATS_TEST_TMPDIR/rec.calls"
	assert_equal "${#lines[@]}" 2
	[[ "${lines[1]}" =~ ^00-$TRACE-[0-9a-f]{16}-01\ congo=t61rcWkgMzE$ ]]
	[ "${lines[0]}" != "${lines[1]}" ]
}

@test "bakery-order place: a bad TRACEPARENT is dropped with a warning; the answer and exit are those of a good one" {
	for bad in 00-bad "ff-$TRACE-00f067aa0ba902b7-01" "00-${TRACE^^}-00f067aa0ba902b7-01" \
	    00-00000000000000000000000000000000-00f067aa0ba902b7-01 \
	    "00-$TRACE-0000000000000000-01" "00-$TRACE-00f067aa0ba902b7-01-extra"; do
		TRACEPARENT=$bad run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
		assert_success
		assert_equal "$(jq -r '[.status, .customer, .total_cents] | join(" ")' <<<"$output")" "placed ada 450"
		[[ "$stderr" == *"warning: trace_dropped field=traceparent from=TRACEPARENT"* ]]
		fresh "$(traces "$(jq -r .id <<<"$output")" OrderPlaced)"
	done
	# A good one with a tracestate too long: the trace kept, no tracestate.
	TRACEPARENT=$PARENT TRACESTATE=k=$(printf '%0600d' 0) \
		run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	[[ "$stderr" == *"trace_dropped field=tracestate from=TRACEPARENT error=\"over 512 bytes\""* ]]
	id=$(jq -r .id <<<"$output")
	[[ "$(traces "$id" OrderPlaced)" == 00-$TRACE-* ]]
	assert_equal "$(bakery-order events "$id" | jq -r .tracestate)" null
	# And none at all: a trace of its own, unsaid.
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$stderr" ""
	fresh "$(traces "$(jq -r .id <<<"$output")" OrderPlaced)"
}

@test "bakery-consume --stdin: a malformed traceparent or tracestate in an envelope is dropped, never the event" {
	# Hostile values: a bad traceparent (its tracestate dropped with it),
	# one that is no string, a tracestate of 33 members, a bad key.
	many=$(seq 0 32 | sed 's/^/k/; s/$/=v/' | paste -sd,)
	n=0
	for set in '.traceparent = "00-bad" | .tracestate = "a=1"' \
	    '.traceparent = 7' \
	    ".tracestate = \"$many\"" '.tracestate = "Upper=1"'; do
		n=$((n + 1))
		# Each on a fresh order, so that its OrderPaid is recorded.
		id=$(place ada)
		bakery-order pay "$id" >/dev/null
		orig=$(bakery-queue peek | jq -c --arg o "billing/$id" 'select(.envelope.subject == $o) | .envelope')
		line=$(jq -c "$set" <<<"$orig")
		run --separate-stderr bakery-consume --stdin <<<"$line"
		assert_success
		assert_equal "$(jq -c '[.type, .status, .outcome, .error]' <<<"$output")" '["PaymentSucceeded",200,"applied",null]'
		[[ "$stderr" == *"warning: trace_dropped field=trace"*"from=envelope"*"id=$(jq -r .id <<<"$line")"* ]]
		paid=$(traces "$id" OrderPaid)
		[[ "$paid" =~ $VALID ]]
		assert_equal "$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .tracestate')" null
		# A bad traceparent: a new trace; a bad tracestate alone: the
		# event's trace, its tracestate dropped.
		if [ "$n" -le 2 ]; then
			[ "${paid:3:32}" != "$(jq -r '.traceparent[3:35]' <<<"$orig")" ]
		else
			assert_equal "${paid:3:32}" "$(jq -r '.traceparent[3:35]' <<<"$orig")"
		fi
	done
}

@test "bakery-order --batch: a line's own traceparent is its events' trace; a bad one is dropped with a warning, the line runs" {
	printf '%s\n' \
		"{\"cmd\":\"place\",\"customer\":\"a\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"],\"traceparent\":\"$PARENT\",\"tracestate\":\"rojo=1\"}" \
		"{\"cmd\":\"place\",\"customer\":\"b\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"],\"traceparent\":\"ff-$TRACE-00f067aa0ba902b7-01\"}" \
		"{\"cmd\":\"place\",\"customer\":\"c\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"],\"traceparent\":[\"$PARENT\"]}" \
		"{\"cmd\":\"place\",\"customer\":\"d\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"]}" \
		"{\"cmd\":\"place\",\"customer\":\"e\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"]}" >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr bakery-order --batch <"$BATS_TEST_TMPDIR/in"
	assert_success
	assert_equal "$(jq -c '[.line, .exit, .result.status, .result.customer]' <<<"$output" | paste -sd' ')" \
		'[1,0,"placed","a"] [2,0,"placed","b"] [3,0,"placed","c"] [4,0,"placed","d"] [5,0,"placed","e"]'
	assert_equal "$(grep -c 'warning: trace_dropped field=traceparent from="batch line"' <<<"$stderr")" 2
	mapfile -t ids < <(jq -r .result.id <<<"$output")
	a=$(traces "${ids[0]}" OrderPlaced)
	[[ "$a" =~ ^00-$TRACE-[0-9a-f]{16}-01$ ]] && [ "$a" != "$PARENT" ]
	assert_equal "$(bakery-order events "${ids[0]}" | jq -r .tracestate)" rojo=1
	for i in 1 2 3 4; do fresh "$(traces "${ids[$i]}" OrderPlaced)"; done
	# Lines without one: each a trace of its own.
	d=$(traces "${ids[3]}" OrderPlaced) e=$(traces "${ids[4]}" OrderPlaced)
	[ "${d:3:32}" != "${e:3:32}" ]
}

@test "bakery-trace says so of an event recorded without a traceparent" {
	id=$(place ada)
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" \
		"UPDATE events SET envelope = json_remove(envelope, '\$.traceparent')"
	run --separate-stderr bakery-trace --json "$id"
	assert_success
	assert_equal "$(jq -c '[.type, .trace_id]' <<<"$output")" '["OrderPlaced",null]'
	run bakery-trace "$id"
	assert_line --index 1 "trace (none)"
}

# event FILE ORDER: Stripe's payment_intent.succeeded for the order.
stripe_event() {
	jq -nc --arg o "$2" --argjson amount "$(bakery-order show "$2" | jq .total_cents)" \
		'{id: "evt_1", object: "event", type: "payment_intent.succeeded", created: now | floor,
		  data: {object: {id: "pi_1", object: "payment_intent", amount: $amount,
		    currency: "eur", status: "succeeded",
		    metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$1"
}

# hook FILE TRACEPARENT: posts FILE, signed, with the traceparent header;
# prints the status.
hook() {
	local t mac
	t=$(date +%s)
	mac=$({ printf '%s.' "$t"; cat "$1"; } | openssl dgst -sha256 -hmac "$SECRET" -r)
	curl -s -o "$RESPONSE" -w '%{http_code}' -X POST --data-binary "@$1" \
		-H 'Content-Type: application/json' -H "Stripe-Signature: t=$t,v1=${mac%% *}" \
		-H "traceparent: $2" -H "tracestate: rojo=1" "$URL"
}

@test "bakery-webhook: PaymentSucceeded continues the request's traceparent header; a bad one is dropped, the answer the same" {
	lighttpd_start
	id=$(place ada)
	stripe_event "$BATS_TEST_TMPDIR/ev" "$id"
	assert_equal "$(hook "$BATS_TEST_TMPDIR/ev" "$PARENT")" 200
	assert_equal "$(jq -c . "$RESPONSE")" '{"status":200,"message":"recorded"}'
	ps=$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events")
	[[ "$(jq -r .traceparent <<<"$ps")" =~ ^00-$TRACE-[0-9a-f]{16}-01$ ]]
	assert_equal "$(jq -r .tracestate <<<"$ps")" rojo=1
	# A bad header: the same answer, a new trace, a warning in the log.
	id=$(place bo)
	stripe_event "$BATS_TEST_TMPDIR/ev2" "$id"
	assert_equal "$(hook "$BATS_TEST_TMPDIR/ev2" "00-$TRACE-00f067aa0ba902b7-1")" 200
	assert_equal "$(jq -c . "$RESPONSE")" '{"status":200,"message":"recorded"}'
	ps=$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events")
	fresh "$(jq -r .traceparent <<<"$ps")"
	assert_equal "$(jq -r .tracestate <<<"$ps")" null
	grep -q 'bakery-webhook: warning: trace_dropped field=traceparent from=header' "$LIGHTTPD_DIR/stderr"
}

@test "bakery-console: an order placed continues the request's traceparent header; a bad one is dropped, the answer the same" {
	lighttpd_start
	echo cardamom-and-rye-42 | bakery-console user add ada >/dev/null
	jar=$BATS_TEST_TMPDIR/ada.jar
	curl -s -o /dev/null -c "$jar" -H "Origin: $BASE" --data-urlencode name=ada \
		--data-urlencode password=cardamom-and-rye-42 "$BASE/console/signin"
	token=$(curl -s -b "$jar" "$BASE/console/s/ada/" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	n=0
	for tp in "$PARENT" "00-${TRACE^^}-00f067aa0ba902b7-01" ""; do
		n=$((n + 1))
		code=$(curl -s -D "$BATS_TEST_TMPDIR/headers" -o /dev/null -w '%{http_code}' -b "$jar" \
			-H "Origin: $BASE" ${tp:+-H "traceparent: $tp"} \
			--data-raw "csrf=$token&customer=c$n&day=$DAY&qty.cardamom-bun=1&delivery=" \
			"$BASE/console/s/ada/orders")
		assert_equal "$code" 303
		id=$(bakery-order -s ada list | jq -r --arg c "c$n" 'select(.customer == $c) | .id')
		grep -q "^Location: /console/s/ada/orders/$id?done=placed" "$BATS_TEST_TMPDIR/headers"
		placed=$(bakery-order -s ada events "$id" | jq -r .traceparent)
		case $n in
		1) [[ "$placed" =~ ^00-$TRACE-[0-9a-f]{16}-01$ ]] ;;
		*) fresh "$placed" ;;
		esac
	done
	assert_equal "$(grep -c 'bakery-console: warning: trace_dropped field=traceparent from=header' "$LIGHTTPD_DIR/stderr")" 1
}

# one_trace ORDER: the trace ids of the order's events (bakery-trace), one
# line each "TYPE TRACE", TRACE replaced by "=" when it is the OrderPlaced's.
one_trace() {
	local out t
	out=$(bakery-trace --json "$1") || return 1
	t=$(jq -r 'select(.type == "OrderPlaced") | .trace_id' <<<"$out")
	[[ "$t" =~ ^[0-9a-f]{32}$ ]] || return 1
	jq -r --arg t "$t" '[.type, if .trace_id == $t then "=" else .trace_id end] | join(" ")' <<<"$out"
}

@test "one order, one trace without TRACEPARENT: a pay, and a --batch pay line, continue the order's trace; a caller's own wins" {
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null
	assert_equal "$(one_trace "$id")" "OrderPlaced =
PaymentSucceeded =
OrderPaid ="
	# A --batch line with no traceparent: the order's trace too.
	id=$(place bo)
	printf '{"cmd":"pay","order":"%s"}\n' "$id" | bakery-order --batch >/dev/null
	assert_equal "$(one_trace "$id")" "OrderPlaced =
PaymentSucceeded ="
	# One with its own, and a TRACEPARENT: the caller's trace.
	id=$(place cy)
	printf '{"cmd":"pay","order":"%s","traceparent":"%s"}\n' "$id" "$PARENT" | bakery-order --batch >/dev/null
	assert_equal "$(one_trace "$id")" "OrderPlaced =
PaymentSucceeded $TRACE"
	id=$(place di)
	TRACEPARENT=$PARENT bakery-order pay "$id" >/dev/null
	assert_equal "$(one_trace "$id")" "OrderPlaced =
PaymentSucceeded $TRACE"
}

@test "one order, one trace: the console's Pay, and Stripe's payment without a traceparent header, continue the order's trace" {
	lighttpd_start
	echo cardamom-and-rye-42 | bakery-console user add ada >/dev/null
	jar=$BATS_TEST_TMPDIR/ada.jar
	curl -s -o /dev/null -c "$jar" -H "Origin: $BASE" --data-urlencode name=ada \
		--data-urlencode password=cardamom-and-rye-42 "$BASE/console/signin"
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	token=$(curl -s -b "$jar" "$BASE/console/s/ada/orders/$id" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	code=$(curl -s -o /dev/null -w '%{http_code}' -b "$jar" -H "Origin: $BASE" \
		--data-raw "csrf=$token&card=4242424242424242" "$BASE/console/s/ada/orders/$id/pay")
	assert_equal "$code" 303
	assert_equal "$(BAKERY_SANDBOX=ada one_trace "$id")" "OrderPlaced =
PaymentSucceeded ="
	# Stripe's event, no traceparent header: the order's trace.
	id=$(place bo)
	stripe_event "$BATS_TEST_TMPDIR/ev" "$id"
	t=$(date +%s)
	mac=$({ printf '%s.' "$t"; cat "$BATS_TEST_TMPDIR/ev"; } | openssl dgst -sha256 -hmac "$SECRET" -r)
	assert_equal "$(curl -s -o "$RESPONSE" -w '%{http_code}' -X POST --data-binary "@$BATS_TEST_TMPDIR/ev" \
		-H 'Content-Type: application/json' -H "Stripe-Signature: t=$t,v1=${mac%% *}" "$URL")" 200
	assert_equal "$(one_trace "$id")" "OrderPlaced =
PaymentSucceeded ="
}

# order_page ORDER: the console's page of ada's ORDER (signed in once per
# lighttpd), into $RESPONSE.
order_page() {
	jar=$BATS_TEST_TMPDIR/ada.jar
	[ -e "$BAKERY_HOME/console.db" ] && bakery-console user list | grep -q '"ada"' ||
		echo cardamom-and-rye-42 | bakery-console user add ada >/dev/null
	curl -s -o /dev/null -c "$jar" -H "Origin: $BASE" --data-urlencode name=ada \
		--data-urlencode password=cardamom-and-rye-42 "$BASE/console/signin"
	curl -s -o "$RESPONSE" -b "$jar" "$BASE/console/s/ada/orders/$1"
}

@test "bakery-console: an order's page shows each event's trace id; BAKERY_TRACE_URL makes it a link, a bad one is ignored with a warning" {
	TRACEPARENT=$PARENT bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	id=$(bakery-order -s ada list | jq -r .id)
	lighttpd_start
	order_page "$id"
	grep -q "<p>Trace: <code>$TRACE</code></p>" "$RESPONSE"
	lighttpd_stop
	BAKERY_TRACE_URL='https://jaeger.example/trace/{trace_id}?a=1&b={trace_id}' lighttpd_start
	order_page "$id"
	grep -qF "<p>Trace: <a href=\"https://jaeger.example/trace/$TRACE?a=1&amp;b=$TRACE\"><code>$TRACE</code></a></p>" "$RESPONSE"
	lighttpd_stop
	# Hostile templates: no link, the id shown, a warning each.
	for bad in 'javascript:alert(1)//{trace_id}' 'https://jaeger.example/trace/' \
		'https://x/{trace_id}"onclick="alert(1)' 'https:///{trace_id}' 'ftp://x/{trace_id}'; do
		: >"$BATS_TEST_TMPDIR/www/stderr" 2>/dev/null || true
		BAKERY_TRACE_URL=$bad lighttpd_start
		order_page "$id"
		grep -q "<p>Trace: <code>$TRACE</code></p>" "$RESPONSE"
		run grep -c "href=\"[^\"]*$TRACE" "$RESPONSE"
		assert_output 0
		grep -q 'bakery-console: warning: trace_url_ignored variable=BAKERY_TRACE_URL' "$LIGHTTPD_DIR/stderr"
		lighttpd_stop
	done
}

@test "a pay whose order's OrderPlaced carries no trace, or a malformed one, starts its own; the pay as it was" {
	for set in "json_remove(envelope, '\$.traceparent')" "json_set(envelope, '\$.traceparent', '00-bad')"; do
		id=$(place ada)
		sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "UPDATE events SET envelope = $set"
		run --separate-stderr bakery-order pay "$id"
		assert_success
		assert_equal "$(jq -r .status <<<"$output")" succeeded
		fresh "$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events" | jq -r .traceparent)"
	done
}
