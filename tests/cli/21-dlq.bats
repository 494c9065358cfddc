#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# With the kitchen refusing, pays an order for ada and consumes with
# immediate retries: its OrderPlaced and OrderPaid end in the DLQ. Sets id,
# placed and paid.
refused_order() {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	placed=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')
	paid=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	[ -n "$placed" ] && [ -n "$paid" ]
}

dlq_count() {
	bakery-queue stats | jq '."bakery-events-dlq" | .ready + .leased + .delayed'
}

@test "dlq drain moves the DLQ's messages into the sandbox's dead letters and prints them" {
	refused_order
	[ "$(dlq_count)" -eq 2 ]
	run --separate-stderr bakery-dlq drain
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	for line in "${lines[@]}"; do
		echo "$line" | jq -e '(keys == ["attempts","error","id","sandbox","type"])
			and .sandbox == "default" and .error == "Kitchen answered 503" and .attempts == 4'
	done
	run jq -sc '[.[] | [.id, .type]]' <<<"$output"
	assert_output "[[\"$placed\",\"OrderPlaced\"],[\"$paid\",\"OrderPaid\"]]"
	[ "$(dlq_count)" -eq 0 ]
	[ "$(bakery-dlq list | wc -l)" -eq 2 ]
}

@test "dlq drain with an empty DLQ prints nothing and succeeds" {
	run --separate-stderr bakery-dlq drain
	assert_success
	[ -z "$output" ]
	run bakery-dlq list
	assert_success
	[ -z "$output" ]
}

@test "dlq list prints each dead letter with id, type, sandbox, error, attempts and its envelope" {
	refused_order
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-dlq list
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	for line in "${lines[@]}"; do
		echo "$line" | jq -e 'has("id") and has("type") and has("sandbox") and has("error")
			and has("attempts") and has("envelope")
			and .envelope.id == .id and .envelope.type == .type and .envelope.specversion == "1.0"
			and .sandbox == "default" and .error == "Kitchen answered 503" and .attempts == 4 and .times == 1'
	done
	# The stored envelope is the one the order recorded.
	run jq -cS 'select(.id == "'"$paid"'") | .envelope' <<<"$output"
	assert_output "$(bakery-order events "$id" | jq -cS 'select(.type == "OrderPaid")')"
}

@test "dlq show ID prints that one dead letter" {
	refused_order
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-dlq show "$placed"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e --arg id "$placed" '.id == $id and .type == "OrderPlaced" and .envelope.id == $id and .error == "Kitchen answered 503"'
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "dlq show of an unknown id exits 66" {
	refused_order
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-dlq show evt_doesnotexist
	assert_failure 66
	[ -z "$output" ]
	[[ "$stderr" == *evt_doesnotexist* ]]
}

@test "dlq usage errors exit 64" {
	run bakery-dlq
	assert_failure 64
	run bakery-dlq frobnicate
	assert_failure 64
	run bakery-dlq show
	assert_failure 64
	run bakery-dlq list --follow
	assert_failure 64
}

@test "a drain killed after storing keeps one dead letter per id and empties the DLQ when run again" {
	sqlite_only "the lease's clock is BAKERY_NOW here, the server's on NATS"
	refused_order
	crash_at dlq.after_store bakery-dlq drain
	# Stored before the ack: the row is there and the message too.
	run bakery-dlq show "$placed"
	assert_success
	echo "$output" | jq -e '.times == 1'
	[ "$(dlq_count)" -eq 2 ]
	later=$(($(date +%s) + 31))
	run --separate-stderr env BAKERY_NOW="$later" bakery-dlq drain
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[ "$(dlq_count)" -eq 0 ]
	run bakery-dlq list
	[ "${#lines[@]}" -eq 2 ]
	run jq -sc '[.[] | [.id, .times]] | sort' <<<"$output"
	expected=$(jq -nc --arg a "$placed" --arg b "$paid" '[[$a, 2], [$b, 1]] | sort')
	assert_output "$expected"
	run sqlite3 "$BAKERY_HOME/sandboxes/default/sandbox.db" "SELECT count(*) FROM dead_letters WHERE event_id = '$placed'"
	assert_output 1
}

@test "a second dead-lettering of the same id updates its row" {
	refused_order
	bakery-dlq drain >/dev/null
	# The same envelope goes round again while its dead letter is kept.
	queue_raw "$placed" "$(bakery-dlq show "$placed" | jq -c .envelope)"
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1
	assert_success
	run jq -sc '[.[] | [.id, .delivery, .outcome]]' <<<"$output"
	assert_output "[[\"$placed\",1,\"retried\"],[\"$placed\",2,\"dead-lettered\"]]"
	run --separate-stderr bakery-dlq drain
	assert_success
	echo "$output" | jq -e --arg id "$placed" '.id == $id and .attempts == 2'
	run bakery-dlq list
	[ "${#lines[@]}" -eq 2 ]
	run bakery-dlq show "$placed"
	echo "$output" | jq -e '.times == 2 and .attempts == 2 and .error == "Kitchen answered 503"'
	run sqlite3 "$BAKERY_HOME/sandboxes/default/sandbox.db" "SELECT count(*) FROM dead_letters WHERE event_id = '$placed'"
	assert_output 1
}

@test "dead letters belong to their sandbox" {
	bakery-fault -s shop2 set refuses:kitchen
	id=$(bakery-order -s shop2 place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-consume -s shop2 --retry-delay 0 >/dev/null 2>&1
	run bakery-dlq drain
	assert_success
	echo "$output" | jq -e '.sandbox == "shop2" and .type == "OrderPlaced"'
	run bakery-dlq list
	assert_success
	[ -z "$output" ]
	run bakery-dlq -s shop2 list
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e '.sandbox == "shop2"'
}

@test "a dead-lettered message with a malformed body can be drained, listed and shown" {
	queue_raw evt_garbled '{not json'
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	run --separate-stderr bakery-dlq drain
	assert_success
	echo "$output" | jq -e '.id == "evt_garbled" and (.error | startswith("malformed envelope"))'
	run --separate-stderr bakery-dlq list
	assert_success
	echo "$output" | jq -e '.id == "evt_garbled" and (.error | startswith("malformed envelope"))'
	run --separate-stderr bakery-dlq show evt_garbled
	assert_success
	echo "$output" | jq -e '.id == "evt_garbled"'
}
