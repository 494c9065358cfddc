#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# The number of messages of TYPE in the main queue (or the DLQ with --dlq).
queued() {
	bakery-queue peek --limit 1000 "${@:2}" |
		jq -s --arg t "$1" '[.[] | select(.envelope.type == $t)] | length'
}

# Files under the test's folder that are neither in BAKERY_HOME, nor the
# working folder, nor bats' own.

order_db() {
	echo "$BAKERY_HOME/sandboxes/default/order/$1.db"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "place prints the order as JSON with an id, status placed and nothing else on stdout" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=2
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" ""
	[[ "$(jq -r .id <<<"$output")" =~ ^ord_[0-9a-f]{24}$ ]]
	assert_equal "$(jq -r .status <<<"$output")" placed
	assert_equal "$(jq -r .customer <<<"$output")" ada
	assert_equal "$(jq -r .day <<<"$output")" "$DAY"
}

@test "place computes total_cents from the menu prices and quantities" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=2 country-loaf=1 cinnamon-roll=3
	assert_success
	# 2*450 + 1*900 + 3*425
	assert_equal "$(jq -r .total_cents <<<"$output")" 3075
	assert_equal "$(jq -c '[.items[] | [.item, .qty, .price_cents]]' <<<"$output")" \
		'[["cardamom-bun",2,450],["country-loaf",1,900],["cinnamon-roll",3,425]]'
}

@test "show prints the same order that place printed" {
	placed=$(bakery-order place --customer ada --day "$DAY" rye-sourdough=1)
	id=$(jq -r .id <<<"$placed")
	run --separate-stderr bakery-order show "$id"
	assert_success
	assert_equal "$(jq -S . <<<"$output")" "$(jq -S . <<<"$placed")"
}

@test "place with the same --key twice gives the same id and records one OrderPlaced" {
	a=$(bakery-order place --customer ada --day "$DAY" --key k1 cardamom-bun=2 | jq -r .id)
	b=$(bakery-order place --customer ada --day "$DAY" --key k1 cardamom-bun=2 | jq -r .id)
	assert_equal "$a" "$b"
	run --separate-stderr bakery-order events "$a"
	assert_success
	assert_equal "$(jq -s '[.[] | select(.type == "OrderPlaced")] | length' <<<"$output")" 1
	assert_equal "$(bakery-order list | wc -l)" 1
	assert_equal "$(queued OrderPlaced)" 1
}

@test "a --key reused with other items exits 65 and changes nothing" {
	id=$(bakery-order place --customer ada --day "$DAY" --key k1 cardamom-bun=2 | jq -r .id)
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --key k1 country-loaf=2
	assert_failure 65
	assert_output ""
	[[ "$stderr" == *"bakery-order: error: "*"k1"* ]]
	assert_equal "$(bakery-order show "$id" | jq -c '[.items[] | .item]')" '["cardamom-bun"]'
	assert_equal "$(bakery-order list | wc -l)" 1
}

@test "an unknown item exits 64 and creates no order" {
	refuses 64 "unknown item: 'nosuch'" bakery-order place --customer ada --day "$DAY" nosuch=1
	assert_equal "$(bakery-order list | wc -l)" 0
}

@test "a quantity of 0 exits 64" {
	refuses 64 "bad quantity" bakery-order place --customer ada --day "$DAY" cardamom-bun=0
	assert_equal "$(bakery-order list | wc -l)" 0
}

@test "a quantity of 100 and an item without quantity exit 64" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=100
	assert_failure 64
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun
	assert_failure 64
	assert_equal "$(bakery-order list | wc -l)" 0
}

@test "a day that does not exist like 2026-02-30 exits 64" {
	refuses 64 "bad day: '2026-02-30'" bakery-order place --customer ada --day 2026-02-30 cardamom-bun=1
	assert_equal "$(bakery-order list | wc -l)" 0
}

@test "place without items exits 64" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY"
	assert_failure 64
	assert_output ""
}

@test "place without --customer exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-order" bakery-order place --day "$DAY" cardamom-bun=1
}

@test "a bad customer name exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	for c in ../x ADA 'a/b' ''; do
		run --separate-stderr bakery-order place --customer "$c" --day "$DAY" cardamom-bun=1
		assert_failure 64
	done
	assert_equal "$(outside_home)" ""
}

@test "an empty --key exits 64" {
	run --separate-stderr bakery-order place --customer ada --day "$DAY" --key "" cardamom-bun=1
	assert_failure 64
}

@test "a bad sandbox -s ../x exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	refuses 64 "bad sandbox name" bakery-order -s ../x place --customer ada --day "$DAY" cardamom-bun=1
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	[ ! -e "$BAKERY_HOME/../x" ]
	assert_equal "$(outside_home)" ""
}

@test "paying with 4242424242424242 succeeds and after bakery-consume the order is paid" {
	id=$(place ada)
	run --separate-stderr bakery-order pay "$id" --card 4242424242424242
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" succeeded
	assert_equal "$(jq -r .order <<<"$output")" "$id"
	assert_equal "$(jq -r .amount_cents <<<"$output")" 450
	[[ "$(jq -r .payment_intent <<<"$output")" == pi_* ]]
	run bakery-consume
	assert_success
	run bakery-order show "$id"
	assert_equal "$(jq -r .status <<<"$output")" paid
	assert_effects_once "$id"
}

@test "paying without --card uses the succeeding test card" {
	id=$(place ada)
	run --separate-stderr bakery-order pay "$id"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" succeeded
}

# declined CARD CODE: paying a new order with CARD exits 1 with a
# decline of CODE; sets id.
declined() {
	id=$(place ada)
	run --separate-stderr bakery-order pay "$id" --card "$1"
	assert_failure 1
	assert_equal "$(jq -r .status <<<"$output")" declined
	assert_equal "$(jq -r .decline_code <<<"$output")" "$2"
	[[ "$stderr" == *"payment declined"* ]]
}

@test "a declined card 4000000000000002 exits 1 and leaves the order placed with no payment" {
	declined 4000000000000002 card_declined
	bakery-consume >/dev/null
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	assert_equal "$(queued PaymentSucceeded)" 0
	run bakery-show "billing/$id"
	assert_failure 66
	assert_equal "$(bakery-order events "$id" | jq -s '[.[] | select(.type == "OrderPaid")] | length')" 0
}

@test "insufficient funds 4000000000009995 exits 1 and leaves the order placed with no payment" {
	declined 4000000000009995 insufficient_funds
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	assert_equal "$(queued PaymentSucceeded)" 0
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
	run bakery-show "billing/$id"
	assert_failure 66
}

@test "a declined card followed by a good card pays the order once" {
	id=$(place ada)
	run bakery-order pay "$id" --card 4000000000000002
	assert_failure 1
	run bakery-order pay "$id" --card 4242424242424242
	assert_success
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "an unknown test card exits 64" {
	id=$(place ada)
	run --separate-stderr bakery-order pay "$id" --card 1234
	assert_failure 64
	assert_output ""
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
}

@test "paying twice records one PaymentSucceeded" {
	id=$(place ada)
	run bakery-order pay "$id"
	assert_success
	first=$(jq -r .payment_intent <<<"$output")
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(jq -r .payment_intent <<<"$output")" "$first"
	assert_equal "$(queued PaymentSucceeded)" 1
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "select count(*) from events where type = 'PaymentSucceeded'")" 1
	assert_equal "$(bakery-show "billing/$id" | jq '.state.payments | length')" 1
}

@test "paying an order that is already paid answers paid and records nothing new" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	run --separate-stderr bakery-order pay "$id"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" paid
	bakery-consume >/dev/null
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "select count(*) from events")" 1
	assert_effects_once "$id"
	assert_equal "$(bakery-order events "$id" | jq -s '[.[] | select(.type == "OrderPaid")] | length')" 1
}

@test "paying an unknown order exits 66" {
	refuses 66 "no such order" bakery-order pay ord_000000000000000000000000
	run bakery-show billing/ord_000000000000000000000000
	assert_failure 66
}

@test "paying a bad order id exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run --separate-stderr bakery-order pay ../x
	assert_failure 64
	run --separate-stderr bakery-order pay ORD
	assert_failure 64
	assert_equal "$(outside_home)" ""
}

@test "pay without an order exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-order" bakery-order pay
}

@test "show and events of an unknown order exit 66" {
	run --separate-stderr bakery-order show ord_000000000000000000000000
	assert_failure 66
	assert_output ""
	run --separate-stderr bakery-order events ord_000000000000000000000000
	assert_failure 66
	assert_output ""
}

@test "list prints one line per order" {
	run --separate-stderr bakery-order list
	assert_success
	assert_output ""
	a=$(place ada)
	b=$(place bob country-loaf=1)
	c=$(place ada seeded-baguette=2)
	run --separate-stderr bakery-order list
	assert_success
	assert_equal "${#lines[@]}" 3
	assert_equal "$(jq -r .id <<<"$output" | sort)" "$(printf '%s\n' "$a" "$b" "$c" | sort)"
}

@test "list is per sandbox" {
	place ada >/dev/null
	run --separate-stderr bakery-order -s other list
	assert_success
	assert_output ""
}

@test "list with an operand exits 64" {
	run --separate-stderr bakery-order list extra
	assert_failure 64
	assert_output ""
}

@test "events prints envelopes that bakery-queue send accepts" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	run --separate-stderr bakery-order events "$id"
	assert_success
	assert_equal "$(jq -r .type <<<"$output" | sort | tr '\n' ' ')" "OrderPaid OrderPlaced "
	assert_equal "$(jq -r .specversion <<<"$output" | sort -u)" 1.0
	assert_equal "$(jq -r .subject <<<"$output" | sort -u)" "order/$id"
	events=$output
	run --separate-stderr bakery-queue send <<<"$events"
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq -r .status <<<"$output" | sort -u)" sent
}

@test "place records the event, the outbox row, the state, the command key and the alarm in the order file" {
	crash_at order.after_commit bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	id=$(jq -r .id <<<"$output")
	db=$(order_db "$id")
	[ -f "$db" ]
	assert_equal "$(sqlite3 "$db" "select count(*) from events where type = 'OrderPlaced'")" 1
	evt=$(sqlite3 "$db" "select id from events")
	assert_equal "$(sqlite3 "$db" "select event_id from outbox")" "$evt"
	assert_equal "$(sqlite3 "$db" "select json from state" | jq -r '.id + " " + .status')" "$id placed"
	assert_equal "$(sqlite3 "$db" "select count(*) from commands_seen where key = 'place:$id'")" 1
	[ -n "$(sqlite3 "$db" "select fire_at from alarm where fire_at is not null")" ]
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
}

@test "after a place that ran to the end the event is either still in the outbox or in the queue once" {
	id=$(place ada)
	db=$(order_db "$id")
	evt=$(sqlite3 "$db" "select id from events where type = 'OrderPlaced'")
	[ -n "$evt" ]
	in_outbox=$(sqlite3 "$db" "select count(*) from outbox where event_id = '$evt'")
	in_queue=$(bakery-queue peek | jq -s --arg e "$evt" '[.[] | select(.id == $e)] | length')
	assert_equal "$((in_outbox + in_queue))" 1
	assert_equal "$(sqlite3 "$db" "select json from state" | jq -r .status)" placed
	assert_equal "$(sqlite3 "$db" "select count(*) from commands_seen")" 1
	assert_equal "$(sqlite3 "$db" "select count(*) from alarm")" 1
}

@test "place answers even when the queue refuses, and the outbox keeps the row" {
	bakery-fault set queue-refuses
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	id=$(jq -r .id <<<"$output")
	assert_equal "$(jq -r .status <<<"$output")" placed
	[[ "$stderr" == *relay_error* ]]
	[[ "$stderr" == *"order/$id"* ]]
	db=$(order_db "$id")
	assert_equal "$(sqlite3 "$db" "select attempts from outbox")" 1
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0

	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$(jq -r .sent <<<"$output")" 1
	assert_equal "$(jq -r .left <<<"$output")" 0
	assert_equal "$(queued OrderPlaced)" 1
	assert_equal "$(sqlite3 "$db" "select count(*) from outbox")" 0

	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$(jq -r .sent <<<"$output")" 0
	assert_equal "$(queued OrderPlaced)" 1
}

@test "stdout that cannot be written exits 74" {
	place ada >/dev/null
	run --separate-stderr bash -c 'bakery-order list >/dev/full'
	assert_failure 74
	[[ "$stderr" == *"bakery-order: error: "* ]]
}

@test "a bad BAKERY_SYNC exits 78" {
	run --separate-stderr env BAKERY_SYNC=bogus bakery-order list
	assert_failure 78
	assert_output ""
}

@test "list names each order's file it cannot read, lists the rest, and exits with the first one's status" {
	a=$(place ada)
	b=$(place bob)
	c=$(place cy)
	for id in "$b" "$c"; do
		f=$BAKERY_HOME/sandboxes/default/order/$id.db
		rm -f "$f-wal" "$f-shm"
		head -c 4096 /dev/urandom >"$f"
	done
	run --separate-stderr bakery-order list
	assert_failure 65
	assert_equal "$(jq -r .id <<<"$output")" "$a"
	assert_equal "$(grep -c "^bakery-order: error: .*'$BAKERY_HOME/sandboxes/default/order/\($b\|$c\)\.db'" <<<"$stderr")" 2
	assert_equal "$(wc -l <<<"$stderr")" 2
}

@test "list names the orders' folder it cannot read" {
	place ada >/dev/null
	mv "$BAKERY_HOME/sandboxes/default/order" "$BATS_TEST_TMPDIR/order"
	echo x >"$BAKERY_HOME/sandboxes/default/order"
	run --separate-stderr bakery-order list
	assert_failure 66
	assert_output ""
	assert_equal "$stderr" "bakery-order: error: cannot read the folder '$BAKERY_HOME/sandboxes/default/order': Not a directory"
}

@test "an order of a newer schema fails bakery-order list, naming it, rather than be left out" {
	a=$(place ada)
	id=$(place bob)
	sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "PRAGMA user_version = 99"
	run --separate-stderr bakery-order list
	assert_failure 78
	assert_equal "$(jq -r .id <<<"$output")" "$a"
	[[ $stderr == *"order/$id.db': schema version 99 is newer than this bakery knows"* ]]
	refuses 78 "order/$id.db': schema version 99 is newer than this bakery knows" bakery-order show "$id"
}
