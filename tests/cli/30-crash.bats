#!/usr/bin/env bats
# Invariant 8: a SIGKILL at each named crash point, recovery with the
# ordinary tools, and every effect exactly once.
load helpers
bats_require_minimum_version 1.5.0

later() { echo $(( $(date +%s) + 120 )); }

@test "killed after the commit, before the send: the order exists and the relay sends it" {
	crash_at order.after_commit bakery-order place --customer ada --day "$DAY" cardamom-bun=2
	id=$(echo "$output" | jq -r .id)
	run bakery-order show "$id"
	assert_success
	run bakery-show "order/$id"
	assert_equal "$(echo "$output" | jq '.outbox | length')" 1
	run bakery-relay --all
	assert_success
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	bakery-order pay "$id" >/dev/null
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "killed after the send, before the delete: the row stays and the repeat is absorbed" {
	bakery-fault set queue-refuses
	id=$(place ada)
	bakery-fault clear queue-refuses
	crash_at relay.after_send bakery-relay "order/$id"
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 1
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
	run bakery-relay "order/$id"
	assert_success
	# The id was still pending: the queue holds it once.
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
	bakery-order pay "$id" >/dev/null
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "a send repeated after delivery is applied once in effect" {
	bakery-fault set queue-refuses
	id=$(place ada)
	bakery-fault clear queue-refuses
	crash_at relay.after_send bakery-relay "order/$id"
	bakery-consume >/dev/null
	# Delivered and acked; the relay now sends the same event again.
	run bakery-relay "order/$id"
	assert_success
	run bakery-consume
	assert_success
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		# NATS's duplicate window took the repeat for what it is.
		assert_output ""
	else
		assert_output --partial '"status":200'
	fi
	bakery-order pay "$id" >/dev/null
	bakery-consume >/dev/null
	assert_effects_once "$id"
	assert_equal "$(bakery-show kitchen/board | jq '.state.cards | length')" 1
}

# holds_of ID, cards_of ID: the day's holds, the kitchen's cards, of an order.
holds_of() { bakery-show "schedule/$DAY" | jq --arg o "$1" '[.state.holds[] | select(.order == $o)] | length'; }
cards_of() { bakery-show kitchen/board | jq --arg o "$1" '[.state.cards[] | select(.order == $o)] | length'; }

@test "killed after the first subscriber applied: the lease expires and the rest apply once" {
	# The day's schedule and the kitchen's board are there: a batch's new
	# files are named together, and applied after (20-consume.bats).
	paid_order dee >/dev/null
	bakery-consume >/dev/null
	id=$(paid_order ada)
	crash_at consume.after_apply bakery-consume --batch 1 --visibility 1
	# OrderPlaced reached the schedule, not yet the kitchen.
	assert_equal "$(holds_of "$id")" 1
	assert_equal "$(cards_of "$id")" 0
	run lease_out bakery-consume --visibility 1
	assert_success
	assert_output --partial '"delivery":2'
	assert_effects_once "$id"
}

@test "killed before the ack: the message comes again and changes nothing" {
	id=$(paid_order ada)
	crash_at consume.before_ack bakery-consume --batch 1 --visibility 1
	run lease_out bakery-consume --visibility 1
	assert_success
	assert_output --partial '"delivery":2'
	assert_effects_once "$id"
}

@test "killed after storing a dead letter, before the ack: one dead letter" {
	sqlite_only "the lease's clock is BAKERY_NOW here, the server's on NATS"
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null
	crash_at dlq.after_store bakery-dlq drain
	run env BAKERY_NOW="$(later)" bakery-dlq drain
	assert_success
	assert_equal "$(bakery-dlq list | jq -s length)" 2
	assert_equal "$(bakery-queue stats | jq '."bakery-events-dlq" | .ready + .leased')" 0
}

@test "killed after the redrive's send: the row stays, the message is queued, nothing is lost" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
	placed=$(bakery-dlq list | jq -r 'select(.type == "OrderPlaced") | .id')
	paid=$(bakery-dlq list | jq -r 'select(.type == "OrderPaid") | .id')
	crash_at redrive.after_send bakery-redrive "$placed"
	run bakery-dlq show "$placed"
	assert_success
	assert_equal "$(bakery-queue peek | jq -r .id)" "$placed"
	run bakery-redrive "$placed"
	assert_success
	# Queued once on sqlite; on NATS each redrive is a message of its own.
	assert_equal "$(bakery-queue peek | jq -s 'map(.id) | unique | length')" 1
	bakery-consume >/dev/null
	bakery-redrive "$paid" >/dev/null
	bakery-consume >/dev/null
	assert_effects_once "$id"
	assert_equal "$(bakery-dlq list | jq -s length)" 0
}

@test "a batch killed after its first object's commit: the lease expires, the rest apply once" {
	paid_order dee >/dev/null
	bakery-consume >/dev/null # the day's schedule and the board are there
	a=$(paid_order ada)
	b=$(paid_order bob)
	c=$(paid_order cy)
	# One batch: three OrderPlaced, three PaymentSucceeded. The first
	# group, the day's schedule, holds all three orders; then the kill.
	crash_at consume.after_apply bakery-consume --once --visibility 1
	for id in "$a" "$b" "$c"; do
		assert_equal "$(holds_of "$id")" 1
		assert_equal "$(cards_of "$id")" 0
	done
	assert_equal "$(bakery-show "schedule/$DAY" | jq '.seen | length')" 5
	run lease_out bakery-consume --visibility 1
	assert_success
	assert_output --partial '"delivery":2'
	for id in "$a" "$b" "$c"; do assert_effects_once "$id"; done
	assert_equal "$(bakery-show "schedule/$DAY" | jq '.seen | length')" 8
}

@test "a batch killed between its commits and its ack: every message comes again and changes nothing" {
	a=$(paid_order ada)
	b=$(paid_order bob)
	crash_at consume.before_ack bakery-consume --once --visibility 1
	# Applied everywhere the batch went, acked nowhere.
	assert_equal "$(bakery-show kitchen/board | jq '.seen | length')" 2
	assert_equal "$(bakery-order show "$a" | jq -r .status)" paid
	assert_equal "$(bakery-order show "$b" | jq -r .status)" paid
	run --separate-stderr lease_out bakery-consume --visibility 1
	assert_success
	run jq -sc '[.[] | select(.type != "OrderPaid") | [.delivery, .status, .outcome]] | unique' <<<"$output"
	assert_output '[[2,200,"acked"]]'
	for id in "$a" "$b"; do assert_effects_once "$id"; done
	assert_equal "$(bakery-show kitchen/board | jq '.seen | length')" 4
	assert_equal "$(bakery-show kitchen/board | jq '.state.tickets | length')" 2
}
