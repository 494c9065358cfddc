#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# With the kitchen refusing, pays an order for ada, consumes with immediate
# retries and drains the DLQ: its OrderPlaced and OrderPaid are dead
# letters. Sets id, placed, paid.
dead_lettered_order() {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	placed=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')
	paid=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	[ -n "$placed" ]
	[ -n "$paid" ]
	[ "$(bakery-dlq list | wc -l)" -eq 2 ]
}

dead_ids() {
	bakery-dlq list | jq -r .id
}

@test "redrive ID sends the dead letter back to the queue and deletes its row" {
	dead_lettered_order
	run --separate-stderr bakery-redrive "$placed"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e --arg id "$placed" '.id == $id and .type == "OrderPlaced" and .sandbox == "default" and .status == "redriven"'
	[ "$(queue_ids)" = "$placed" ]
	[ "$(dead_ids)" = "$paid" ]
	run bakery-dlq show "$placed"
	assert_failure 66
}

@test "the redriven envelope is the stored one with the same id" {
	dead_lettered_order
	stored=$(bakery-dlq show "$paid" | jq -cS .envelope)
	bakery-redrive "$paid" >/dev/null
	run bakery-queue peek
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jq -r .id <<<"$output")" = "$paid" ]
	[ "$(jq -cS .envelope <<<"$output")" = "$stored" ]
	[ "$(jq -r .envelope.id <<<"$output")" = "$paid" ]
}

@test "redrive reads ids on stdin" {
	dead_lettered_order
	run --separate-stderr bash -c "printf '%s\n' '$placed' '$paid' | bakery-redrive"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[ "$(queue_ids | sort)" = "$(printf '%s\n' "$placed" "$paid" | sort)" ]
	[ -z "$(dead_ids)" ]
}

@test "redrive reads the JSON lines of dlq list on stdin and redrives only those" {
	dead_lettered_order
	run --separate-stderr bash -c "bakery-dlq list | jq -c 'select(.type==\"OrderPlaced\")' | bakery-redrive"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e --arg id "$placed" '.id == $id and .status == "redriven"'
	[ "$(queue_ids)" = "$placed" ]
	[ "$(dead_ids)" = "$paid" ]
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "redrive rejects a JSON line without an id with 65 and still redrives the others" {
	dead_lettered_order
	run --separate-stderr bash -c "{ echo '{\"type\":\"OrderPlaced\"}'; echo '$paid'; } | bakery-redrive"
	assert_failure 65
	[[ "$stderr" == *"line 1"* ]]
	[ "$(queue_ids)" = "$paid" ]
	[ "$(dead_ids)" = "$placed" ]
}

@test "redrive --all redrives every dead letter of the sandbox" {
	dead_lettered_order
	run --separate-stderr bakery-redrive --all
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	run jq -sc '[.[] | .status] | unique' <<<"$output"
	assert_output '["redriven"]'
	[ "$(queue_ids | sort)" = "$(printf '%s\n' "$placed" "$paid" | sort)" ]
	[ -z "$(dead_ids)" ]
}

@test "redrive --all with ids is a usage error" {
	run bakery-redrive --all evt_x
	assert_failure 64
	assert_output --partial "--all"
}

@test "redrive with an empty stdin redrives nothing and succeeds" {
	dead_lettered_order
	run --separate-stderr bakery-redrive </dev/null
	assert_success
	[ -z "$output" ]
	[ -z "$(queue_ids)" ]
	[ "$(bakery-dlq list | wc -l)" -eq 2 ]
}

@test "redrive of an unknown id exits 66 and still redrives the other ids" {
	dead_lettered_order
	run --separate-stderr bakery-redrive evt_doesnotexist "$placed"
	assert_failure 66
	[[ "$stderr" == *evt_doesnotexist* ]]
	echo "$output" | jq -e --arg id "$placed" '.id == $id and .status == "redriven"'
	[ "$(queue_ids)" = "$placed" ]
	[ "$(dead_ids)" = "$paid" ]
}

@test "a redrive killed after the send leaves the row and the message, and redriving again is harmless" {
	dead_lettered_order
	bakery-fault clear refuses:kitchen
	crash_at redrive.after_send bakery-redrive "$placed"
	# Sent, not lost: the row is kept and the queue has the message.
	run bakery-dlq show "$placed"
	assert_success
	[ "$(queue_ids)" = "$placed" ]
	run --separate-stderr bakery-redrive "$placed"
	assert_success
	# One message on sqlite (a pending id is not queued twice); two on
	# NATS, where each redrive is a message of its own.
	[ "$(queue_ids | sort -u)" = "$placed" ]
	run bakery-dlq show "$placed"
	assert_failure 66
	bakery-redrive "$paid" >/dev/null
	run --separate-stderr bakery-consume
	assert_success
	run jq -sc '[.[] | [.id, .delivery, .outcome]] | unique' <<<"$output"
	assert_output "$(jq -nc --arg a "$placed" --arg b "$paid" '[[$a,1,"acked"],[$b,1,"acked"]] | sort')"
	assert_effects_once "$id"
	[ -z "$(dead_ids)" ]
	[ -z "$(queue_ids)" ]
}

@test "a redrive deletes only the dead letter it sent: one stored again meanwhile stays" {
	dead_lettered_order
	# Stopped between its send and its delete, as a redrive that waits on
	# sandbox.db's lock or is slow would be.
	BAKERY_STOP_AT=redrive.after_send bakery-redrive "$placed" \
		>"$BATS_TEST_TMPDIR/redrive.out" &
	local redrive=$!
	stopped "$redrive"
	[ "$(queue_ids)" = "$placed" ]
	# The kitchen still refuses: the event fails again and is stored
	# again, its row's times 2.
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	bakery-dlq show "$placed" | jq -e '.times == 2'
	kill -CONT "$redrive"
	wait "$redrive"
	jq -e --arg id "$placed" '.id == $id and .status == "redriven"' "$BATS_TEST_TMPDIR/redrive.out"
	# The newer dead letter is kept, in neither the queue nor lost.
	run bakery-dlq show "$placed"
	assert_success
	echo "$output" | jq -e '.times == 2'
	[ -z "$(queue_ids)" ]
	# Its trace ends at the dead letter, not at "redriven".
	bakery-trace --json "$placed" | tee -a "$BATS_TEST_TMPDIR/trace" | jq -e ".dead_letter.times == 2 and .redriven.times == 1" || { jq -c .timeline "$BATS_TEST_TMPDIR/trace" >&2; false; }
	# Redriven again once the kitchen takes it: applied, once.
	bakery-fault clear refuses:kitchen
	bakery-redrive "$placed" "$paid" >/dev/null
	bakery-consume >/dev/null
	assert_effects_once "$id"
	[ -z "$(dead_ids)" ]
}

@test "a redrive killed after the send delivers the event again after consume, effects once" {
	dead_lettered_order
	bakery-fault clear refuses:kitchen
	bakery-redrive "$placed" >/dev/null
	bakery-consume >/dev/null
	crash_at redrive.after_send bakery-redrive "$paid"
	bakery-consume >/dev/null
	# The row survived the crash: redrive it again, it goes round once more.
	run bakery-redrive "$paid"
	assert_success
	run --separate-stderr bakery-consume
	assert_success
	echo "$output" | jq -e --arg id "$paid" '.id == $id and .status == 200 and .outcome == "acked"'
	assert_effects_once "$id"
	[ -z "$(dead_ids)" ]
}

@test "redriving OrderPaid before OrderPlaced is refused by the kitchen with 409 and dead-lettered again" {
	dead_lettered_order
	bakery-fault clear refuses:kitchen
	bakery-redrive "$paid" >/dev/null
	# Immediate retries: by default the last one would come 2.5 min on.
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	run jq -sc '[.[] | [.id, .delivery, .status, .outcome]]' <<<"$output"
	assert_output "[[\"$paid\",1,409,\"retried\"],[\"$paid\",2,409,\"retried\"],[\"$paid\",3,409,\"retried\"],[\"$paid\",4,409,\"dead-lettered\"]]"
	run bakery-dlq drain
	assert_success
	echo "$output" | jq -e --arg id "$paid" '.id == $id and (.error | startswith("Kitchen answered 409"))'
	run bakery-dlq show "$paid"
	echo "$output" | jq -e '.error | startswith("Kitchen answered 409")'
	bakery-show kitchen/board | jq -e '[.state.cards[]?] | length == 0'
}

@test "redriving OrderPlaced then OrderPaid puts one confirmed card and one ticket on the board and leaves no dead letters" {
	dead_lettered_order
	bakery-fault clear refuses:kitchen
	# First the wrong order: OrderPaid alone goes round and dead-letters again.
	bakery-redrive "$paid" >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	[ "$(dead_ids | sort)" = "$(printf '%s\n' "$placed" "$paid" | sort)" ]
	# Then the right one.
	run --separate-stderr bakery-redrive "$placed" "$paid"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr bakery-consume
	assert_success
	run jq -sc '[.[] | [.id, .status, .outcome]]' <<<"$output"
	assert_output "[[\"$placed\",200,\"acked\"],[\"$paid\",200,\"acked\"]]"
	board=$(bakery-show kitchen/board)
	[ "$(jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length' <<<"$board")" -eq 1 ]
	[ "$(jq -r --arg o "$id" '.state.cards[] | select(.order == $o) | .status' <<<"$board")" = confirmed ]
	[ "$(jq --arg o "$id" '[.state.tickets[] | select(.order == $o)] | length' <<<"$board")" -eq 1 ]
	assert_effects_once "$id"
	[ -z "$(dead_ids)" ]
	[ -z "$(queue_ids bakery-events-dlq)" ]
	[ -z "$(queue_ids)" ]
}

@test "redrive of a dead letter whose stored body is malformed does not crash" {
	queue_raw evt_garbled '{not json'
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-redrive evt_garbled
	# The row is sent back as it was stored, or refused as bad data: never an abort.
	[ "$status" -eq 0 ] || [ "$status" -eq 65 ]
	# Either way it is not lost: still a dead letter, or queued again.
	kept=$(sqlite3 "$BAKERY_HOME/sandboxes/default/sandbox.db" "SELECT count(*) FROM dead_letters WHERE event_id = 'evt_garbled'")
	[ "$kept" -eq 1 ] || [ "$(queue_ids)" = evt_garbled ]
}
