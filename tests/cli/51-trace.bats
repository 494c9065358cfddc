#!/usr/bin/env bats
# bakery-trace EVENT_ID: where one event has been, in time order.
load helpers
bats_require_minimum_version 1.5.0

event_id() { bakery-order events "$1" | jq -r --arg t "$2" 'select(.type == $t) | .id'; }

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a delivered OrderPaid: recorded, relayed, applied by its six subscribers" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	paid=$(event_id "$id" OrderPaid)
	run --separate-stderr bakery-trace --json "$paid"
	assert_success
	assert_equal "$stderr" ""
	echo "$output" | jq -e --arg o "order/$id" '.type == "OrderPaid" and .recorded_in == $o and .relayed_at != null and .outbox == null and .queue == [] and .dead_letter == null and .redriven == null'
	echo "$output" | jq -e '[.subscribers[].address] == ["schedule/2026-12-01", "kitchen/board", "crm/customers", "customer/ada", "inbox/ada", "dispatch/2026-12-01"]'
	echo "$output" | jq -e '[.subscribers[].applied_at | select(. == null)] == []'
	echo "$output" | jq -e '[.timeline[].step] == ["recorded", "relayed", "applied", "applied", "applied", "applied", "applied", "applied"]'
	# In time order.
	echo "$output" | jq -e '[.timeline[].at] == ([.timeline[].at] | sort)'
	run bakery-trace "$paid"
	assert_success
	assert_line --index 0 "event $paid OrderPaid in sandbox default"
	assert_line --regexp "^2026-[0-9T:.-]+Z +recorded +order/$id\$"
	assert_line --regexp "applied +inbox/ada\$"
}

@test "a PaymentSucceeded is found in billing and applied by the order" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	ev=$(bakery-show "billing/$id" | jq -r '.state.payments[0].event // empty')
	[ -n "$ev" ] || ev=$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT id FROM events")
	run --separate-stderr bakery-trace --json "$ev"
	assert_success
	echo "$output" | jq -e --arg b "billing/$id" --arg o "order/$id" '.type == "PaymentSucceeded" and .recorded_in == $b and .subscribers == [{"address": $o, "applied_at": .subscribers[0].applied_at}] and .subscribers[0].applied_at != null'
}

@test "a refused send: the row waits in the outbox with its attempts and error" {
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	ev=$(event_id "$id" OrderPlaced)
	run --separate-stderr bakery-trace --json "$ev"
	assert_success
	echo "$output" | jq -e '.relayed_at == null and .outbox.attempts == 1 and (.outbox.last_error | test("queue-refuses"))'
	echo "$output" | jq -e '[.timeline[].step] == ["recorded", "in outbox", "not applied", "not applied"]'
}

@test "dead-lettered, then redriven, then applied" {
	bakery-fault set refuses:kitchen
	id=$(place ada)
	ev=$(event_id "$id" OrderPlaced)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	run --separate-stderr bakery-trace --json "$ev"
	echo "$output" | jq -e '.queue[0].queue == "bakery-events-dlq" and .queue[0].last_error == "Kitchen answered 503"'
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-trace --json "$ev"
	echo "$output" | jq -e '.queue == [] and .dead_letter.error == "Kitchen answered 503" and .dead_letter.attempts == 4 and .dead_letter.times == 1'
	# The schedule applied it on the first delivery; the kitchen never did.
	echo "$output" | jq -e '[.subscribers[] | .applied_at != null] == [true, false]'
	bakery-fault clear refuses:kitchen
	bakery-redrive "$ev" >/dev/null
	run --separate-stderr bakery-trace --json "$ev"
	echo "$output" | jq -e '.redriven.times == 1 and .dead_letter == null and .queue[0].queue == "bakery-events" and .queue[0].deliveries == 0'
	bakery-consume >/dev/null
	run --separate-stderr bakery-trace --json "$ev"
	assert_success
	echo "$output" | jq -e '.queue == [] and ([.subscribers[] | .applied_at != null] == [true, true])'
	echo "$output" | jq -e '[.timeline[].step] == ["recorded", "relayed", "applied", "dead-lettered", "redriven", "applied"]'
	run bakery-trace "$ev"
	assert_line --regexp "redriven +default: 1 times\$"
}

@test "after a redrive the trace keeps the dead-letter step and its last error" {
	bakery-fault set refuses:kitchen
	id=$(place ada)
	ev=$(event_id "$id" OrderPlaced)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	bakery-redrive "$ev" >/dev/null
	run --separate-stderr bakery-trace --json "$ev"
	assert_success
	echo "$output" | jq -e '.dead_letter == null'
	echo "$output" | jq -e '.redriven.dead_letter.error == "Kitchen answered 503" and .redriven.dead_letter.attempts == 4'
	echo "$output" | jq -e '[.timeline[] | select(.step == "dead-lettered") | .detail.error] == ["Kitchen answered 503"]'
	run --separate-stderr bakery-trace "$ev"
	assert_line --regexp "dead-lettered +default: 4 deliveries, 1 times, last error: Kitchen answered 503\$"
}

@test "bakery-trace ORDER_ID shows every event of the order, in time order" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	run --separate-stderr bakery-trace --json "$id"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -r .type <<<"$output" | tr '\n' ' ')" "OrderPlaced PaymentSucceeded OrderPaid "
	want=$( (bakery-order events "$id" | jq -r .id
		sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT id FROM events") | sort)
	assert_equal "$(jq -r .id <<<"$output" | sort)" "$want"
	echo "$output" | jq -s -e '[.[].recorded_at] == ([.[].recorded_at] | sort)'
	run --separate-stderr bakery-trace "$id"
	assert_success
	assert_equal "$(grep -c '^event evt_' <<<"$output")" 3
	assert_line --regexp "^event evt_[0-9a-f]+ PaymentSucceeded in sandbox default\$"
}

@test "an unknown order exits 66, an order id that is not a name 64" {
	place ada >/dev/null
	refuses 66 "no such order: 'ord_000000000000000000000000'" bakery-trace ord_000000000000000000000000
	run --separate-stderr bakery-trace 'ord_../x'
	assert_failure 64
	assert_output ""
}

@test "an unknown id exits 66; no id or two ids exit 64" {
	place ada >/dev/null
	run --separate-stderr bakery-trace evt_000000000000000000000000
	assert_failure 66
	[[ "$stderr" == *"no such event: 'evt_000000000000000000000000'"* ]]
	run --separate-stderr bakery-trace
	assert_failure 64
	run --separate-stderr bakery-trace a b
	assert_failure 64
}

@test "trace writes nothing" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	ev=$(event_id "$id" OrderPaid)
	before=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	bakery-trace "$ev" >/dev/null
	after=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	assert_equal "$after" "$before"
}

@test "a trace reads its events' messages alone: 50,000 of another sandbox queued leave its memory as it was" {
	id=$(paid_order ada)
	# Against the same trace's RSS with nothing else queued, so that a
	# sanitizer build's larger floor counts too.
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/base" bakery-trace --json "$id" > /dev/null
	queue_fill 50000 other
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 50002
	run --separate-stderr /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" bakery-trace --json "$id"
	assert_success
	# Its two events, each with its message, every message looked at.
	assert_equal "$(jq -c '[.type, (.queue | length), .queue_complete]' <<<"$output" | paste -sd' ')" \
		'["OrderPlaced",1,true] ["PaymentSucceeded",1,true]'
	rss=$(tail -1 "$BATS_TEST_TMPDIR/rss") base=$(tail -1 "$BATS_TEST_TMPDIR/base")
	[ "$rss" -lt $((base + 12000)) ] ||
		{ echo "max RSS $rss KiB, $base KiB with nothing else queued" >&2; false; }
}
