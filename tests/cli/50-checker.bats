#!/usr/bin/env bats
# The checker (tests/checker.c) that the crash matrix, the soak and the
# full-disk tests trust: it passes a clean home and fails each kind of harm.
load helpers

CHECKER="$TOP/build/tests/checker"

# One paid, consumed order; its customer is ada.
paid_and_consumed() {
	id=$(paid_order ada)
	bakery-consume >/dev/null
}

@test "a clean home: every event applied where routed, exit 0" {
	paid_and_consumed
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq -c '[.recorded, .applied, .lost, .applied_twice]')" "[3,3,0,0]"
}

@test "an event still in the queue is pending, not lost; --drained fails on it" {
	id=$(paid_order ada)
	run "$CHECKER" "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq -c '[.lost, .pending]')" "[0,2]"
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_failure 1
}

@test "an armed alarm with no index entry fails the checker, named, its events stuck" {
	id=$(unindexed_order)
	run "$CHECKER" -v "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"stuck":1,"alarms_unfound":1'
	assert_output --partial "checker: stuck: default/order/$id: alarm armed, no entry in the alarm index"
}

@test "an index that awaits a new boot's restore is not taken for a lost entry" {
	export BAKERY_BOOT_ID=boot-one
	unindexed_order >/dev/null
	run env BAKERY_BOOT_ID=boot-two "$CHECKER" "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq .alarms_unfound)" 0
}

@test "a seen row removed is a lost event" {
	paid_and_consumed
	sqlite3 "$BAKERY_HOME/sandboxes/default/dispatch/$DAY.db" "DELETE FROM seen"
	run "$CHECKER" -v "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"lost":1'
	assert_output --partial 'checker: lost: evt_'
}

@test "a dead-lettered event is not lost, but is stuck" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null
	bakery-dlq drain >/dev/null
	run "$CHECKER" "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq .lost)" 0
	[ "$(echo "$output" | jq .dead_lettered)" -ge 1 ]
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_failure 1
}

@test "a second receipt for one order: refused by the list's table; in a file of version 3, applied twice" {
	paid_and_consumed
	inbox=$BAKERY_HOME/sandboxes/default/inbox/ada.db
	run sqlite3 "$inbox" "INSERT INTO receipts(order_id, json) SELECT order_id, json FROM receipts"
	assert_failure
	assert_output --partial 'UNIQUE constraint failed'
	# The list as 0.1.0 kept it, an array of the state, twice the receipt.
	sqlite3 "$inbox" "UPDATE state SET json = json_set(json, '\$.receipts',
		json_array(json((SELECT json FROM receipts)), json((SELECT json FROM receipts))));
		DROP TABLE receipts; PRAGMA user_version = 3"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"applied_twice":1'
}

@test "a CRM count above the OrderPaid events it applied is applied twice" {
	paid_and_consumed
	sqlite3 "$BAKERY_HOME/sandboxes/default/crm/customers.db" \
		"UPDATE crm_customers SET orders = orders + 1 WHERE customer = 'ada'"
	run "$CHECKER" -v "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"applied_twice":1'
	assert_output --partial 'checker: applied twice: crm orders 2 for ada at default/crm/customers'
}

@test "a confirmed card without its OrderPaid applied at the board is unexpected" {
	id=$(place ada)
	bakery-consume >/dev/null
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
	sqlite3 "$BAKERY_HOME/sandboxes/default/kitchen/board.db" "UPDATE cards SET status = 'confirmed'"
	run "$CHECKER" -v "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"unexpected":1'
	assert_output --partial "checker: unexpected: confirmed card of $id at default/kitchen/board"
}

@test "an object file of schema version 1 or 2, made before 0.1.0, is refused, exit 78; a newer one too" {
	paid_and_consumed
	for v in 1 2; do
		sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "PRAGMA user_version = $v"
		run "$CHECKER" --drained "$BAKERY_HOME"
		assert_failure 78
		assert_output --partial "order/$id.db: schema version $v was made by a bakery before 0.1.0"
	done
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "PRAGMA user_version = 5"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 78
	assert_output --partial "order/$id.db: schema version 5, the checker reads 3 to 4"
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "PRAGMA user_version = 4"
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
}

@test "an object file with no schema (its creation never committed) is skipped; an order promised in it is lost" {
	paid_and_consumed
	# As a power cut leaves a file created, its first commit undone.
	: >"$BAKERY_HOME/sandboxes/default/order/ord_000000000000000000000000.db"
	run "$CHECKER" "$BAKERY_HOME"
	assert_success
	echo "default ord_000000000000000000000000" >"$BATS_TEST_TMPDIR/placed"
	run "$CHECKER" -v --placed "$BATS_TEST_TMPDIR/placed" "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial 'lost: placed ord_000000000000000000000000'
	# A file with tables but version 0 is still refused.
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/ord_000000000000000000000000.db" "CREATE TABLE t(x)"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 78
}

@test "a seen id nobody recorded is unexpected" {
	paid_and_consumed
	sqlite3 "$BAKERY_HOME/sandboxes/default/crm/customers.db" "INSERT INTO seen VALUES ('evt_x', 'OrderPaid', 1)"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"unexpected":1'
}

@test "an order a client saw paid without its PaymentSucceeded is lost" {
	id=$(place ada)
	echo "$id" >"$BATS_TEST_TMPDIR/paid"
	run "$CHECKER" --paid "$BATS_TEST_TMPDIR/paid" "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial '"lost":1'
}

@test "deliveries beyond the first are counted from consumer output" {
	paid_and_consumed
	printf '%s\n' '{"id":"evt_a","delivery":1}' '{"id":"evt_a","delivery":2}' '{"id":"evt_b","delivery":1}' \
		>"$BATS_TEST_TMPDIR/c.out"
	run "$CHECKER" --deliveries "$BATS_TEST_TMPDIR/c.out" "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq .duplicated)" 1
}

@test "an order that applied its payment without recording OrderPaid is lost" {
	id=$(paid_order ada)
	bakery-consume --batch 1 --once >/dev/null # OrderPlaced
	bakery-consume --batch 1 --once >/dev/null # PaymentSucceeded: OrderPaid recorded
	run "$CHECKER" "$BAKERY_HOME"
	assert_success
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "DELETE FROM events WHERE type = 'OrderPaid'; UPDATE events SET relayed_at = recorded_at WHERE relayed_at IS NULL"
	sqlite3 "$BAKERY_HOME/queue.db" "DELETE FROM messages"
	run "$CHECKER" -v "$BAKERY_HOME"
	assert_failure 1
	assert_output --partial "checker: lost: OrderPaid of $id"
}

@test "a queue.db of schema version 1, made before 0.1.0, is refused, exit 78; a newer one too" {
	sqlite_only "reads queue.db"
	id=$(paid_order ada)
	q=$BAKERY_HOME/queue.db
	sqlite3 "$q" "PRAGMA user_version = 1"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 78
	assert_output --partial "$q: schema version 1 was made by a bakery before 0.1.0"
	sqlite3 "$q" "PRAGMA user_version = 3"
	run "$CHECKER" "$BAKERY_HOME"
	assert_failure 78
	assert_output --partial "$q: schema version 3, the checker reads 2 to 2"
	sqlite3 "$q" "PRAGMA user_version = 2"
	run "$CHECKER" "$BAKERY_HOME"
	assert_success
	assert_equal "$(jq -c '[.lost, .pending]' <<<"$output")" "[0,2]"
}
