#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
# Spans exported to OpenTelemetry (bakery(7), "Trace context"): OTLP over
# HTTP with JSON, checked by a receiver built on OpenTelemetry's own
# protobuf definitions (tests/otlp-receiver.mjs); a collector that hangs,
# fails or is gone changes nothing but the count of spans not sent.
bats_require_minimum_version 1.5.0
load helpers
load lighttpd

TRACE=4bf92f3577b34da6a3ce929d0e0e4736
CALLER=00f067aa0ba902b7
PARENT=00-$TRACE-$CALLER-01
# The receiver's package, installed once under build/ for every run.
MODULES=$TOP/build/otlp-receiver
# messaging.system: the queue's.
SYSTEM=bakery
[ -z "${BAKERY_TEST_NATS:-}" ] || SYSTEM=nats

teardown() {
	lighttpd_stop
	[ -z "${RECEIVER:-}" ] || kill "$RECEIVER" 2>/dev/null || true
	[ -z "${HOOKS:-}" ] || kill "$HOOKS" 2>/dev/null || true
}

# receiver MODE: tests/otlp-receiver.mjs in MODE (ok, 500, hang) on a port
# of its own, the exporter pointed at it; its spans in $SPANS.
receiver() {
	local modules=-
	if [ "$1" = ok ]; then
		if [ ! -e "$MODULES/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js" ]; then
			command -v npm >/dev/null || skip "npm is not installed"
			mkdir -p "$MODULES"
			echo '{"type":"module","private":true}' >"$MODULES/package.json"
			(cd "$MODULES" && timeout 300 npm install --silent --no-audit \
				--no-fund @opentelemetry/otlp-transformer@0.52.1 >/dev/null 2>&1) ||
				skip "npm cannot install @opentelemetry/otlp-transformer (no registry?)"
		fi
		modules=$MODULES/node_modules
	fi
	command -v node >/dev/null || skip "node is not installed"
	SPANS=$BATS_TEST_TMPDIR/spans
	rm -f "$BATS_TEST_TMPDIR/port"
	node "$TOP/tests/otlp-receiver.mjs" "$modules" "$BATS_TEST_TMPDIR/port" "$SPANS" "$1" 3>&- &
	RECEIVER=$!
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
	OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")"
	export OTEL_EXPORTER_OTLP_ENDPOINT
}

# attr NAME: jq's value of a span's attribute NAME.
ATTR='def attr($k): ((.attributes // []) | map(select(.key == $k))[0].value | (.stringValue // .intValue));'

@test "one order's journey in one trace: placed and paid under TRACEPARENT, refused by the kitchen, retried, dead-lettered" {
	receiver ok
	bakery-fault set refuses:kitchen
	export TRACEPARENT=$PARENT
	id=$(paid_order ada)
	unset TRACEPARENT
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 2
	assert_success
	[ -s "$SPANS" ]
	# Every request was OTLP/JSON the protobuf definitions take.
	assert_equal "$(jq -s 'map(select(.invalid)) | length' "$SPANS")" 0
	assert_equal "$(jq -r -s 'map(.headers["content-type"]) | unique[]' "$SPANS")" application/json
	assert_equal "$(jq -r -s 'map(.traceId) | unique[]' "$SPANS")" "$TRACE"
	# Every parent is a span of the export, or the caller's.
	assert_equal "$(jq -s --arg c "$CALLER" '(map(.spanId) + [$c]) as $known |
		map(select(.parentSpanId and (.parentSpanId as $p | $known | index($p) | not))) | length' "$SPANS")" 0
	# The commands: SERVER spans, children of the caller.
	assert_equal "$(jq -r -s 'map(select(.kind == 2)) | map([.name, .parentSpanId] | join(" ")) | sort[]' "$SPANS")" "pay order $CALLER
place order $CALLER"
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	# OrderPlaced processed three times, each under the place span, each
	# an ERROR; the last dead-lettered.
	run jq -r -s "$ATTR"' map(select(.kind == 5 and attr("bakery.event_type") == "OrderPlaced"))
		| map([.parentSpanId, .status.code, attr("bakery.delivery"), attr("bakery.outcome"),
			attr("messaging.system"), attr("messaging.destination.name"), attr("bakery.order")] | join(" "))
		| sort[]' "$SPANS"
	assert_output "$place 2 1 retried $SYSTEM bakery-events $id
$place 2 2 retried $SYSTEM bakery-events $id
$place 2 3 dead-lettered $SYSTEM bakery-events $id"
	# Under each, the kitchen's apply: ERROR with its answer.
	run jq -r -s "$ATTR"' map(select(.name == "apply kitchen/board"))
		| map([.kind, .status.code, .status.message, attr("bakery.subscriber")] | join(" ")) | unique[]' "$SPANS"
	assert_output "1 2 Kitchen answered 503 kitchen/board"
	# One apply for each of OrderPlaced's three deliveries, under it.
	assert_equal "$(jq -s "$ATTR"' (map(select(.kind == 5 and attr("bakery.event_type") == "OrderPlaced")) | map(.spanId)) as $p
		| map(select(.name == "apply kitchen/board" and (.parentSpanId as $x | $p | index($x)))) | length' "$SPANS")" 3
	# The message ids are the event's.
	assert_equal "$(jq -r -s "$ATTR"' map(select(.kind == 5 and attr("bakery.event_type") == "OrderPlaced") | attr("messaging.message.id")) | unique[]' "$SPANS")" \
		"$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')"
	# The event carries the command's span: its processing is the child.
	assert_equal "$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .traceparent')" \
		"00-$TRACE-$place-01"
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
}

@test "a collector that never answers: the command's output and exit unchanged, the send bounded; its spans counted" {
	receiver hang
	start=$(date +%s%N)
	run --separate-stderr timeout 60 bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	took=$((($(date +%s%N) - start) / 1000000))
	assert_success
	[[ "$(jq -r .id <<<"$output")" =~ ^ord_ ]]
	# Bounded, not hung: the bound's own length is the next test's (a
	# test asserts no speed, and a loaded machine is slow).
	[ "$took" -lt 15000 ] || fail "place took $took ms"
	[[ "$stderr" == *spans_not_sent* ]]
	# Two: the command's, and its send's.
	run bakery-status --json
	assert_equal "$(jq .spans_dropped <<<"$output")" 2
	run bakery-status --prom -
	assert_line "bakery_spans_dropped_total 2"
	run bakery-status
	assert_line --partial "spans    2 not sent"
}

@test "a collector that answers 500, or is gone: exit 0, the spans counted" {
	receiver 500
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	[[ "$(jq -r .id <<<"$output")" =~ ^ord_ ]]
	assert_equal "$(jq -s length "$SPANS")" 1
	kill "$RECEIVER"
	wait "$RECEIVER" 2>/dev/null || true
	RECEIVER=
	# The same port, closed now.
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	[[ "$(jq -r .id <<<"$output")" =~ ^ord_ ]]
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 4
}

@test "OTEL_SDK_DISABLED=true sends nothing; no endpoint, nothing either" {
	receiver 500
	OTEL_SDK_DISABLED=true place ada >/dev/null
	[ ! -e "$SPANS" ]
	unset OTEL_EXPORTER_OTLP_ENDPOINT
	place ada >/dev/null
	[ ! -e "$SPANS" ]
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
}

@test "hostile settings: a warning, no export, the command as it was" {
	receiver 500
	for bad in "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://127.0.0.1:1" \
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://user:pw@127.0.0.1:1" \
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://example.com" \
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:99999" \
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1.example.com:4318" \
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://localhost@example.com/v1/traces" \
		"OTEL_EXPORTER_OTLP_HEADERS=novalue" "OTEL_EXPORTER_OTLP_HEADERS=a%zz=1" \
		"OTEL_EXPORTER_OTLP_HEADERS=bad key=1" "OTEL_TRACES_SAMPLER=sometimes" \
		"OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=2" \
		"OTEL_EXPORTER_OTLP_TIMEOUT=-1"; do
		# shellcheck disable=SC2086 # the settings, split on purpose
		run --separate-stderr env $bad bakery-order place --customer ada --day "$DAY" cardamom-bun=1
		assert_success
		[[ "$(jq -r .id <<<"$output")" =~ ^ord_ ]]
		assert_equal "$(grep -c otlp_off <<<"$stderr")" 1
	done
	[ ! -e "$SPANS" ]
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
}

@test "the sampler: always_off and a parent not sampled send nothing; headers reach the collector" {
	receiver ok
	OTEL_TRACES_SAMPLER=always_off place ada >/dev/null
	TRACEPARENT=00-$TRACE-$CALLER-00 place ada >/dev/null
	[ ! -e "$SPANS" ] || assert_equal "$(jq -s length "$SPANS")" 0
	OTEL_EXPORTER_OTLP_HEADERS='x-api-key=s%20cret,x-other=2' OTEL_SERVICE_NAME=shop \
		OTEL_RESOURCE_ATTRIBUTES='deployment.environment=test' place ada >/dev/null
	assert_equal "$(jq -r '[.headers["x-api-key"], .headers["x-other"], .resource["service.name"], .resource["deployment.environment"], .name] | join(",")' "$SPANS" | sort -u)" \
		"s cret,2,shop,test,place order
s cret,2,shop,test,send bakery-events"
}

@test "the send to bakery-events: a PRODUCER span, the sent event's child, linked to it" {
	receiver ok
	export TRACEPARENT=$PARENT
	id=$(place ada)
	unset TRACEPARENT
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	event=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .traceparent')
	run jq -r "$ATTR"' select(.kind == 4) | [.name, .traceId, .parentSpanId, attr("messaging.system"),
		attr("messaging.destination.name"), attr("messaging.batch.message_count"),
		(.links | map(.traceId + "-" + .spanId) | join(","))] | join(" ")' "$SPANS"
	assert_output "send bakery-events $TRACE $place $SYSTEM bakery-events 1 ${event:3:49}"
	# The relay's sends are spans too: the consumer's OrderPaid.
	bakery-order pay "$id" >/dev/null
	bakery-consume >/dev/null
	assert_equal "$(jq -s 'map(select(.kind == 4)) | length' "$SPANS")" 3
	assert_equal "$(jq -s --arg c "$CALLER" '(map(.spanId) + [$c]) as $known |
		map(select(.parentSpanId and (.parentSpanId as $p | $known | index($p) | not))) | length' "$SPANS")" 0
}

@test "the dead letter's drain and redrive: spans in the event's trace, linked to its context" {
	receiver ok
	bakery-fault set refuses:kitchen
	export TRACEPARENT=$PARENT
	id=$(place ada)
	unset TRACEPARENT
	bakery-consume --retry-delay 0 --max-retries 0 >/dev/null 2>&1
	evt=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')
	tp=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .traceparent')
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
	bakery-redrive "$evt" >/dev/null
	bakery-consume >/dev/null
	for name in "process bakery-events-dlq 5 bakery-events-dlq" "redrive bakery-events 4 bakery-events"; do
		set -- $name
		run jq -r "$ATTR"' select(.name == "'"$1 $2"'") | [.kind, .traceId, .parentSpanId, attr("messaging.destination.name"),
			attr("messaging.message.id"), (.links | map(.traceId + "-" + .spanId) | join(","))] | join(" ")' "$SPANS"
		assert_output "$3 $TRACE ${tp:36:16} $4 $evt ${tp:3:49}"
	done
	# Redriven, the event is applied: a process span without error.
	assert_equal "$(jq -s "$ATTR"' map(select(.kind == 5 and attr("messaging.message.id") == "'"$evt"'" and attr("bakery.outcome") == "acked" and (.status | not))) | length' "$SPANS")" 1
	assert_equal "$(jq -s --arg c "$CALLER" '(map(.spanId) + [$c]) as $known |
		map(select(.parentSpanId and (.parentSpanId as $p | $known | index($p) | not))) | length' "$SPANS")" 0
}

@test "a --batch line is a span of its own, a child of the line's traceparent; its event carries it" {
	receiver ok
	printf '{"cmd":"place","customer":"ada","day":"%s","items":["cardamom-bun=1"],"traceparent":"%s"}\n{"cmd":"place","customer":"bob","day":"%s","items":["cardamom-bun=1"]}\n' \
		"$DAY" "$PARENT" "$DAY" | bakery-order --batch >"$BATS_TEST_TMPDIR/out"
	id=$(jq -r 'select(.line == 1) | .result.id' "$BATS_TEST_TMPDIR/out")
	run jq -r 'select(.name == "place order") | [.kind, .traceId, .parentSpanId // "-"] | join(" ")' "$SPANS"
	assert_line "2 $TRACE $CALLER"
	assert_equal "${#lines[@]}" 2
	span=$(jq -r --arg t "$TRACE" 'select(.name == "place order" and .traceId == $t) | .spanId' "$SPANS")
	assert_equal "$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .traceparent')" "00-$TRACE-$span-01"
}

@test "OTEL_EXPORTER_OTLP_TIMEOUT bounds the send; traceidratio 1 and 0 decide every trace" {
	receiver hang
	start=$(date +%s%N)
	run --separate-stderr env OTEL_EXPORTER_OTLP_TIMEOUT=300 timeout 60 bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	took=$((($(date +%s%N) - start) / 1000000))
	assert_success
	[ "$took" -lt 15000 ] || fail "place took $took ms with a 300 ms bound"
	# The send gave up at the bound it was given, not at the default
	# 2000 ms: libcurl's own word for when it stopped.
	[[ "$stderr" =~ timed\ out\ after\ ([0-9]+)\ milliseconds ]] || fail "stderr: $stderr"
	[ "${BASH_REMATCH[1]}" -lt 2000 ] || fail "stopped after ${BASH_REMATCH[1]} ms"
	kill "$RECEIVER"
	receiver ok
	OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0 place ada >/dev/null
	[ ! -e "$SPANS" ]
	OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=1 place ada >/dev/null
	assert_equal "$(jq -r -s 'map(.name) | sort | join(",")' "$SPANS")" "place order,send bakery-events"
}

@test "a pay continues its order's trace: the place span its parent; a TRACEPARENT the parent, the order's trace a link" {
	receiver ok
	id=$(paid_order ada)
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	trace=$(jq -r 'select(.name == "place order") | .traceId' "$SPANS")
	assert_equal "$(jq -r 'select(.name == "pay order") | [.traceId, .parentSpanId, (.links // [] | length)] | join(" ")' "$SPANS")" \
		"$trace $place 0"
	# The payment's event carries the pay's span.
	pay=$(jq -r 'select(.name == "pay order") | .spanId' "$SPANS")
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events" | jq -r .traceparent)" \
		"00-$trace-$pay-01"
	: >"$SPANS"
	id=$(place bo)
	trace=$(jq -r 'select(.name == "place order") | .traceId' "$SPANS")
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	TRACEPARENT=$PARENT bakery-order pay "$id" >/dev/null
	assert_equal "$(jq -c 'select(.name == "pay order") | [.traceId, .parentSpanId, .links]' "$SPANS")" \
		"[\"$TRACE\",\"$CALLER\",[{\"traceId\":\"$trace\",\"spanId\":\"$place\"}]]"
}

@test "a drain that holds more than a request's 512 spans: one send mid-drain, the rest at its end, every span there, every parent known" {
	receiver ok
	# 50 orders placed and paid: 150 events, whose drain makes 650 spans
	# (a process span for each event, an apply for each of its 9
	# subscribers in all, a send for each OrderPaid it relays).
	n=50
	for i in $(seq "$n"); do
		printf '{"cmd":"place","customer":"c%d","day":"%s","items":["cardamom-bun=1"]}\n' "$i" "$DAY"
	done | bakery-order --batch >"$BATS_TEST_TMPDIR/placed"
	jq -c '{cmd: "pay", order: .result.id}' "$BATS_TEST_TMPDIR/placed" |
		bakery-order --batch >"$BATS_TEST_TMPDIR/paid"
	assert_equal "$(jq -s 'map(select(.exit != 0)) | length' "$BATS_TEST_TMPDIR/placed" "$BATS_TEST_TMPDIR/paid")" 0
	run --separate-stderr bakery-consume --drain
	assert_success
	assert_equal "$(grep -c '"outcome":"acked"' <<<"$output")" $((3 * n))
	[[ "$stderr" != *spans_not_sent* ]] || fail "stderr: $stderr"
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
	assert_equal "$(jq -s 'map(select(.invalid)) | length' "$SPANS")" 0
	jq -c 'select(.resource["service.name"] == "bakery-consume")' "$SPANS" >"$BATS_TEST_TMPDIR/drain"
	assert_equal "$(jq -s length "$BATS_TEST_TMPDIR/drain")" $((13 * n))
	# Two requests (each span carries its request's headers): the 512 sent
	# when the buffer filled, the 138 left sent at the end.
	assert_equal "$(jq -r -s 'group_by(.headers["content-length"]) | map(length) | sort | join(" ")' "$BATS_TEST_TMPDIR/drain")" \
		"$((13 * n - 512)) 512"
	# Every event processed once, the last ones too.
	assert_equal "$(jq -r -s "$ATTR"' map(select(.name == "process bakery-events") | attr("messaging.message.id")) | unique | length' "$BATS_TEST_TMPDIR/drain")" $((3 * n))
	assert_equal "$(jq -r 'select(.name == "process bakery-events") | .spanId' "$BATS_TEST_TMPDIR/drain" | wc -l)" $((3 * n))
	assert_equal "$(grep -o '"id":"evt_[0-9a-f]*"' <<<"$output" | cut -d'"' -f4 | sort)" \
		"$(jq -r -s "$ATTR"' map(select(.name == "process bakery-events") | attr("messaging.message.id")) | sort[]' "$BATS_TEST_TMPDIR/drain")"
	# Each apply a child of a process span; each send a child of one too.
	assert_equal "$(jq -s '(map(select(.name == "process bakery-events") | .spanId)) as $p |
		map(select((.name | startswith("apply ")) and (.parentSpanId as $x | $p | index($x)))) | length' "$BATS_TEST_TMPDIR/drain")" $((9 * n))
	assert_equal "$(jq -s 'map(select(.name == "send bakery-events")) | length' "$BATS_TEST_TMPDIR/drain")" "$n"
	# Every parent and link, in the whole export (the places and pays
	# too), is a span that was sent.
	assert_equal "$(jq -s '(map(.spanId)) as $known | map(select(.parentSpanId and
		(.parentSpanId as $p | $known | index($p) | not))) | length' "$SPANS")" 0
	assert_equal "$(jq -s '(map(.spanId)) as $known | map(.links // [] | .[] | select(.spanId as $l | $known | index($l) | not)) | length' "$SPANS")" 0
}

@test "an http: subscriber in a traced drain: libcurl loaded by its delivery, the spans still sent at the drain's end" {
	receiver ok
	# Its delivery loads libcurl, and with it OpenSSL, which registers its
	# own end at exit; the spans must not be sent after it.
	(umask 077; echo whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw >"$BATS_TEST_TMPDIR/key")
	RECEIVER_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw python3 "$TOP/tests/webhook-receiver.py" \
		"$BATS_TEST_TMPDIR/hookport" "$BATS_TEST_TMPDIR/hooks.log" 3>&- &
	HOOKS=$!
	for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/hookport" ] && break; sleep 0.1; done
	{ cat "$TOP/share/routes"
	  echo "OrderPaid http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/hookport")/ok name=erp secret=$BATS_TEST_TMPDIR/key"; } >"$BAKERY_HOME/routes"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --drain
	assert_success
	assert_equal "$(grep -c '"outcome":"acked"' <<<"$output")" 3
	assert_equal "$(jq -r 'select(.path == "/ok") | .valid' "$BATS_TEST_TMPDIR/hooks.log")" true
	[[ "$stderr" != *spans_not_sent* ]] || fail "stderr: $stderr"
	# The drain's spans: the three deliveries, the hook's apply among them.
	assert_equal "$(jq -s "$ATTR"' map(select(.resource["service.name"] == "bakery-consume" and .name == "process bakery-events")) | length' "$SPANS")" 3
	assert_equal "$(jq -r -s "$ATTR"' map(select(.resource["service.name"] == "bakery-consume" and .name == "apply external/erp") | attr("bakery.status"))[]' "$SPANS")" 200
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
}

# console_signin: an account ada, signed in under lighttpd; JAR its
# cookies.
console_signin() {
	echo cardamom-and-rye-42 | bakery-console user add ada >/dev/null
	JAR=$BATS_TEST_TMPDIR/ada.jar
	curl -s -o /dev/null -c "$JAR" -H "Origin: $BASE" --data-urlencode name=ada \
		--data-urlencode password=cardamom-and-rye-42 "$BASE/console/signin"
}

# console_post PATH FORM [HEADER...]: a form posted with the session's
# token; prints the status.
console_post() {
	local path=$1 form=$2 token
	shift 2
	token=$(curl -s -b "$JAR" "$BASE/console/s/ada/" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	curl -s -o /dev/null -w '%{http_code}' -b "$JAR" -H "Origin: $BASE" "$@" \
		--data-raw "csrf=$token&$form" "$BASE/console/$path"
}

# spans_named NAME: each span of that name, "PARENT STATUS-CODE LINKS"
# (LINKS: its links' span ids), one a line.
spans_named() {
	jq -r -s --arg n "$1" "$ATTR"' map(select(.name == $n)) | map([.parentSpanId // "-",
		attr("http.request.method"), attr("http.route"), attr("http.response.status_code"),
		(.status.code // 0), ((.links // []) | map(.spanId) | join(","))] | join(" "))[]' "$SPANS"
}

@test "the console's actions and the webhook's requests: SERVER spans after HTTP's conventions; their events carry them" {
	receiver ok
	lighttpd_start
	console_signin
	assert_equal "$(console_post s/ada/orders "customer=ada&day=$DAY&qty.cardamom-bun=1&delivery=")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	# A new trace: no header. OrderPlaced carries the span.
	assert_equal "$(spans_named 'POST /console/s/{sandbox}/orders')" \
		"- POST /console/s/{sandbox}/orders 303 0 "
	place=$(jq -r 'select(.name == "POST /console/s/{sandbox}/orders") | .spanId' "$SPANS")
	trace=$(jq -r 'select(.name == "POST /console/s/{sandbox}/orders") | .traceId' "$SPANS")
	assert_equal "$(bakery-order -s ada events "$id" | jq -r .traceparent)" "00-$trace-$place-01"
	# The Pay: in the order's trace, the place its parent.
	assert_equal "$(console_post "s/ada/orders/$id/pay" card=4242424242424242)" 303
	pay='POST /console/s/{sandbox}/orders/{order}/pay'
	assert_equal "$(spans_named "$pay")" "$place POST /console/s/{sandbox}/orders/{order}/pay 303 0 "
	assert_equal "$(jq -r --arg n "$pay" 'select(.name == $n) | .traceId' "$SPANS")" "$trace"
	payspan=$(jq -r --arg n "$pay" 'select(.name == $n) | .spanId' "$SPANS")
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/ada/billing/$id.db" "SELECT envelope FROM events" | jq -r .traceparent)" \
		"00-$trace-$payspan-01"
	# A Pay with a traceparent header: its child, linked to the order's.
	: >"$SPANS"
	bakery-order -s ada place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	id=$(bakery-order -s ada list | jq -r 'select(.customer == "bo") | .id')
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	assert_equal "$(console_post "s/ada/orders/$id/pay" card=4242424242424242 -H "traceparent: $PARENT")" 303
	assert_equal "$(spans_named "$pay")" "$CALLER POST /console/s/{sandbox}/orders/{order}/pay 303 0 $place"
	assert_equal "$(jq -r --arg n "$pay" 'select(.name == $n) | .traceId' "$SPANS")" "$TRACE"
	# The webhook: a new trace (Stripe's event carries none), linked to
	# the order's; the PaymentSucceeded it records continues the order's.
	: >"$SPANS"
	id=$(place cy)
	place=$(jq -r 'select(.name == "place order") | .spanId' "$SPANS")
	trace=$(jq -r 'select(.name == "place order") | .traceId' "$SPANS")
	jq -nc --arg o "$id" --argjson amount "$(bakery-order show "$id" | jq .total_cents)" \
		'{id: "evt_1", object: "event", type: "payment_intent.succeeded", created: now | floor,
		  data: {object: {id: "pi_1", object: "payment_intent", amount: $amount, currency: "eur",
		    status: "succeeded", metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$BATS_TEST_TMPDIR/ev"
	t=$(date +%s)
	mac=$({ printf '%s.' "$t"; cat "$BATS_TEST_TMPDIR/ev"; } | openssl dgst -sha256 -hmac whsec_unused -r)
	assert_equal "$(curl -s -o /dev/null -w '%{http_code}' --data-binary "@$BATS_TEST_TMPDIR/ev" \
		-H 'Content-Type: application/json' -H "Stripe-Signature: t=$t,v1=${mac%% *}" "$URL")" 200
	assert_equal "$(spans_named 'POST /stripe/webhook')" "- POST /stripe/webhook 200 0 $place"
	[ "$(jq -r 'select(.name == "POST /stripe/webhook") | .traceId' "$SPANS")" != "$trace" ]
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events" | jq -r .traceparent)" \
		"00-$trace-$place-01"
	# A request refused: its status, no error below 500.
	assert_equal "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$URL")" 405
	assert_equal "$(spans_named 'PUT /stripe/webhook')" "- PUT /stripe/webhook 405 0 "
	# One the server fails (its secret gone): ERROR, error.type 503.
	: >"$SPANS"
	rm "$LIGHTTPD_DIR/secret"
	assert_equal "$(curl -s -o /dev/null -w '%{http_code}' --data-binary "@$BATS_TEST_TMPDIR/ev" \
		-H 'Content-Type: application/json' -H "Stripe-Signature: t=$t,v1=${mac%% *}" "$URL")" 503
	assert_equal "$(spans_named 'POST /stripe/webhook')" "- POST /stripe/webhook 503 2 "
	assert_equal "$(jq -r -s "$ATTR"' map(attr("error.type"))[]' "$SPANS")" 503
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
}

# otlp_prog NAME: an exec: subscriber $BATS_TEST_TMPDIR/NAME that sends a
# span of its own to the receiver with curl: OTLP/JSON, a child of the
# TRACEPARENT it was given.
otlp_prog() {
	local f=$BATS_TEST_TMPDIR/$1
	cat >"$f" <<-SCRIPT
	#!/bin/sh
	trace=\$(echo "\$TRACEPARENT" | cut -d- -f2)
	parent=\$(echo "\$TRACEPARENT" | cut -d- -f3)
	span=\$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	now=\$(date +%s%N)
	curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary @- \
		"$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces" <<JSON
	{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"$1"}}]},
	 "scopeSpans":[{"spans":[{"traceId":"\$trace","spanId":"\$span","parentSpanId":"\$parent",
	 "name":"$1 \$BAKERY_EVENT_TYPE","kind":5,"startTimeUnixNano":"\$now","endTimeUnixNano":"\$now"}]}]}]}
	JSON
	SCRIPT
	chmod +x "$f"
}

@test "the seed's path in one trace: a fault ticked, an order placed and paid in the console, dead-lettered, redriven, applied; an exec: subscriber's own span inside" {
	receiver ok
	otlp_prog rec
	{ cat "$TOP/share/routes"; echo "OrderPaid exec:$BATS_TEST_TMPDIR/rec name=rec"; } >"$BAKERY_HOME/routes"
	lighttpd_start
	console_signin
	assert_equal "$(console_post s/ada/faults fault=refuses:kitchen)" 303
	assert_equal "$(console_post s/ada/orders "customer=ada&day=$DAY&qty.cardamom-bun=1&delivery=")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	assert_equal "$(console_post "s/ada/orders/$id/pay" card=4242424242424242)" 303
	bakery-consume --retry-delay 0 --max-retries 2 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	assert_equal "$(console_post s/ada/faults "")" 303
	assert_equal "$(bakery-fault -s ada list)" ""
	dead=$(bakery-dlq -s ada list | jq -r '"id=" + .id' | paste -sd '&')
	assert_equal "$(bakery-dlq -s ada list | jq -r .type | sort | paste -sd ' ')" "OrderPaid OrderPlaced"
	assert_equal "$(console_post s/ada/dead/redrive "$dead&selected=1")" 303
	assert_equal "$(bakery-dlq -s ada list)" ""
	bakery-consume --retry-delay 0 --max-retries 2 >/dev/null 2>&1
	assert_equal "$(bakery-status --json | jq .spans_dropped)" 0
	assert_equal "$(jq -s 'map(select(.invalid)) | length' "$SPANS")" 0
	# The order's trace: the console's place action began it.
	trace=$(jq -r 'select(.name == "POST /console/s/{sandbox}/orders") | .traceId' "$SPANS")
	jq -c --arg t "$trace" 'select(.traceId == $t)' "$SPANS" >"$BATS_TEST_TMPDIR/order"
	# Every parent and every link is a span that was sent; the place the
	# only root.
	assert_equal "$(jq -s '(map(.spanId)) as $known | map(select(.parentSpanId and
		(.parentSpanId as $p | $known | index($p) | not))) | length' "$BATS_TEST_TMPDIR/order")" 0
	assert_equal "$(jq -s '(map(.spanId)) as $known | map(.links // [] | .[] | select(.spanId as $l | $known | index($l) | not)) | length' "$BATS_TEST_TMPDIR/order")" 0
	assert_equal "$(jq -r -s 'map(select(.parentSpanId | not) | .name)[]' "$BATS_TEST_TMPDIR/order")" \
		"POST /console/s/{sandbox}/orders"
	# The Pay, the refusals (ERROR: retried, then dead-lettered), the
	# drain, the redrive, the deliveries applied after: all in it.
	run jq -r -s "$ATTR"' map(select(.kind == 5 and .name == "process bakery-events")
		| [attr("bakery.event_type"), attr("bakery.outcome"), (.status.code // 0)] | join(" ")) | sort[]' "$BATS_TEST_TMPDIR/order"
	assert_output "OrderPaid acked 0
OrderPaid dead-lettered 2
OrderPaid retried 2
OrderPaid retried 2
OrderPlaced acked 0
OrderPlaced dead-lettered 2
OrderPlaced retried 2
OrderPlaced retried 2
PaymentSucceeded acked 0"
	run jq -r -s 'map(select(.kind != 5 or .name != "process bakery-events") | .name) | unique[]' "$BATS_TEST_TMPDIR/order"
	assert_line "POST /console/s/{sandbox}/orders/{order}/pay"
	assert_line "process bakery-events-dlq"
	assert_line "redrive bakery-events"
	assert_line "rec OrderPaid"
	assert_equal "$(jq -s 'map(select(.name == "apply kitchen/board" and (.status.code // 0) == 0)) | length' "$BATS_TEST_TMPDIR/order")" 2
	# The exec: subscriber's own span: a child of a delivery of OrderPaid.
	assert_equal "$(jq -s "$ATTR"' (map(select(.name == "process bakery-events" and attr("bakery.event_type") == "OrderPaid")) | map(.spanId)) as $p
		| map(select(.name == "rec OrderPaid" and (.parentSpanId as $x | $p | index($x)))) | length' "$BATS_TEST_TMPDIR/order")" 1
	assert_equal "$(bakery-order -s ada show "$id" | jq -r .status)" paid
}
