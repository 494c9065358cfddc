#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# A paid, consumed order with a delivery; prints its id.
consumed_order() {
	local id
	id=$(bakery-order place --customer ada --day "$DAY" --delivery "1 Mill Lane" cardamom-bun=2 | jq -r .id) || return 1
	bakery-order pay "$id" >/dev/null || return 1
	bakery-consume >/dev/null || return 1
	echo "$id"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "an order shows its address, sandbox and state with status" {
	id=$(place ada)
	run --separate-stderr bakery-show "order/$id"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq -r .address <<<"$output")" "order/$id"
	assert_equal "$(jq -r .sandbox <<<"$output")" default
	assert_equal "$(jq -r .state.status <<<"$output")" placed
	assert_equal "$(jq -r .state.id <<<"$output")" "$id"
}

@test "after a paid, consumed order the order's .state.status is paid" {
	id=$(consumed_order)
	run --separate-stderr bakery-show "order/$id"
	assert_success
	assert_equal "$(jq -r .state.status <<<"$output")" paid
	assert_equal "$(jq '.outbox | length' <<<"$output")" 0
}

@test "the kitchen board has one card {order,status} confirmed and one ticket for a paid order" {
	id=$(consumed_order)
	run --separate-stderr bakery-show kitchen/board
	assert_success
	assert_equal "$(jq -c --arg o "$id" '[.state.cards[] | select(.order == $o) | {order, status}]' <<<"$output")" \
		"[{\"order\":\"$id\",\"status\":\"confirmed\"}]"
	assert_equal "$(jq --arg o "$id" '[.state.tickets[] | select(.order == $o)] | length' <<<"$output")" 1
}

@test "a placed but unpaid order shows a placed card and a hold, no ticket and no reservation" {
	id=$(place ada)
	bakery-consume >/dev/null
	run --separate-stderr bakery-show kitchen/board "schedule/$DAY"
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq -c --arg o "$id" '[.state.cards[] | select(.order == $o) | .status]' <<<"${lines[0]}")" '["placed"]'
	assert_equal "$(jq '.state.tickets | length' <<<"${lines[0]}")" 0
	assert_equal "$(jq --arg o "$id" '[.state.holds[] | select(.order == $o)] | length' <<<"${lines[1]}")" 1
	assert_equal "$(jq '.state.reservations | length' <<<"${lines[1]}")" 0
}

@test "the schedule turns the hold into one reservation for a paid order" {
	id=$(consumed_order)
	run --separate-stderr bakery-show "schedule/$DAY"
	assert_success
	assert_equal "$(jq '.state.holds | length' <<<"$output")" 0
	assert_equal "$(jq -c '[.state.reservations[] | .order]' <<<"$output")" "[\"$id\"]"
}

@test "the inbox holds one receipt for a paid order" {
	id=$(consumed_order)
	run --separate-stderr bakery-show inbox/ada
	assert_success
	assert_equal "$(jq -c '[.state.receipts[] | .order]' <<<"$output")" "[\"$id\"]"
	assert_equal "$(jq -r '.state.receipts[0].total_cents' <<<"$output")" 900
}

@test "dispatch has one confirmed stop {order,status} for a paid delivery" {
	id=$(consumed_order)
	run --separate-stderr bakery-show "dispatch/$DAY"
	assert_success
	assert_equal "$(jq -c '[.state.stops[] | {order, status}]' <<<"$output")" \
		"[{\"order\":\"$id\",\"status\":\"confirmed\"}]"
}

@test "the customer lists the paid order once" {
	id=$(consumed_order)
	run --separate-stderr bakery-show customer/ada
	assert_success
	assert_equal "$(jq -c '[.state.orders[] | .order]' <<<"$output")" "[\"$id\"]"
}

@test "the billing object holds one payment for a paid order" {
	id=$(consumed_order)
	run --separate-stderr bakery-show "billing/$id"
	assert_success
	assert_equal "$(jq -c '[.state.payments[] | .order]' <<<"$output")" "[\"$id\"]"
}

@test "several addresses print one line each in order" {
	id=$(consumed_order)
	run --separate-stderr bakery-show kitchen/board "order/$id" customer/ada
	assert_success
	assert_equal "${#lines[@]}" 3
	assert_equal "$(jq -r .address <<<"$output" | tr '\n' ' ')" "kitchen/board order/$id customer/ada "
}

@test "--list prints every object of the sandbox as an address" {
	id=$(consumed_order)
	run --separate-stderr bakery-show --list
	assert_success
	assert_equal "$(jq -r . <<<"$output" | sort | tr '\n' ' ')" \
		"billing/$id crm/customers customer/ada dispatch/$DAY inbox/ada kitchen/board order/$id schedule/$DAY "
}

@test "--list of an empty or other sandbox prints nothing" {
	run --separate-stderr bakery-show --list
	assert_success
	assert_output ""
	place ada >/dev/null
	run --separate-stderr bakery-show -s other --list
	assert_success
	assert_output ""
}

@test "a missing object exits 66 and prints nothing on stdout" {
	refuses 66 "no such object: 'kitchen/board'" bakery-show kitchen/board
}

@test "a missing object among present ones exits 66 and still prints the present ones" {
	id=$(place ada)
	run --separate-stderr bakery-show "order/$id" order/ord_000000000000000000000000
	assert_failure 66
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq -r .address <<<"$output")" "order/$id"
}

@test "a bad address wins over a missing object with exit 64" {
	run --separate-stderr bakery-show order/ord_000000000000000000000000 order/../x
	assert_failure 64
}

@test "bad addresses exit 64 and create no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	for a in order/../x order/A nosuch/x order order/ /x ../x; do
		run --separate-stderr bakery-show "$a"
		assert_failure 64
		assert_output ""
		[[ "$stderr" == *"bad address"* ]]
	done
	assert_equal "$(outside_home)" ""
}

@test "a bad sandbox -s ../x exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run --separate-stderr bakery-show -s ../x kitchen/board
	assert_failure 64
	[[ "$stderr" == *"bad sandbox name"* ]]
	run --separate-stderr bakery-show -s ../x --list
	assert_failure 64
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	assert_equal "$(outside_home)" ""
}

@test "showing an object does not create it" {
	run bakery-show kitchen/board
	assert_failure 66
	[ ! -e "$BAKERY_HOME/sandboxes/default/kitchen/board.db" ]
	run --separate-stderr bakery-show --list
	assert_output ""
}

@test "--list with an address exits 64" {
	refuses 64 "usage: bakery-show" bakery-show --list kitchen/board
}

@test "an unknown option exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-show" bakery-show --bogus kitchen/board
}

@test "a kitchen board that has refused every event was never made: show exits 66" {
	bakery-fault set refuses:kitchen
	place ada >/dev/null
	bakery-consume >/dev/null
	run --separate-stderr bakery-show kitchen/board
	assert_failure 66
	run bakery-show --list
	refute_output --partial kitchen/
}

@test "a kitchen board with no card left shows cards and tickets arrays" {
	id=$(place ada)
	bakery-consume >/dev/null
	sqlite3 "$BAKERY_HOME/sandboxes/default/kitchen/board.db" "DELETE FROM cards; DELETE FROM tickets"
	run --separate-stderr bakery-show kitchen/board
	assert_success
	assert_equal "$(jq -c '[.state.cards, .state.tickets]' <<<"$output")" '[[],[]]'
}

@test "--rows pages a list: --limit and --after walk the day's holds, the pages together the whole list" {
	for c in a b c d e f g; do place "$c" >/dev/null; done
	bakery-consume >/dev/null
	whole=$(bakery-show "schedule/$DAY" | jq -c '.state.holds[]')
	assert_equal "$(wc -l <<<"$whole")" 7
	pages="" after=""
	while :; do
		page=$(bakery-show "schedule/$DAY" --rows holds --limit 3 ${after:+--after "$after"})
		[ -n "$page" ] || break
		[ "$(wc -l <<<"$page")" -le 3 ]
		pages+="$page"$'\n'
		after=$(tail -1 <<<"$page" | jq -r .order)
	done
	assert_equal "${pages%$'\n'}" "$whole"
	# Without --limit, a page of 100.
	assert_equal "$(bakery-show "schedule/$DAY" --rows holds | jq -c .)" "$whole"
	assert_equal "$(bakery-show "schedule/$DAY" --rows reservations)" ""
}

@test "--rows refuses a list the kind does not keep, an order the list does not hold, and a bad limit" {
	place ada >/dev/null
	bakery-consume >/dev/null
	refuses 64 "no list 'cards' in schedule/$DAY: its lists: holds, reservations" \
		bakery-show "schedule/$DAY" --rows cards
	refuses 64 "no list 'cards' in kitchen/board: its kind keeps no list" \
		bakery-show kitchen/board --rows cards
	refuses 66 "no record of order 'ord_nope' in the list holds" \
		bakery-show "schedule/$DAY" --rows holds --after ord_nope
	for n in 0 100001 -1 ' 5' 5x ''; do
		refuses 64 "bad limit" bakery-show "schedule/$DAY" --rows holds --limit "$n"
	done
	refuses 64 "--after and --limit go with --rows" bakery-show "schedule/$DAY" --limit 5
	refuses 64 "--rows takes one ADDRESS" bakery-show "schedule/$DAY" kitchen/board --rows holds
	refuses 66 "no such object" bakery-show schedule/2026-12-31 --rows holds
}

@test "--list names a kind's folder it cannot read, lists the rest, and exits 66" {
	id=$(consumed_order)
	rm -r "$BAKERY_HOME/sandboxes/default/kitchen"
	echo x >"$BAKERY_HOME/sandboxes/default/kitchen"
	run --separate-stderr bakery-show --list
	assert_failure 66
	assert_equal "$(jq -r . <<<"$output" | sort | tr '\n' ' ')" \
		"billing/$id crm/customers customer/ada dispatch/$DAY inbox/ada order/$id schedule/$DAY "
	assert_equal "$stderr" "bakery-show: error: cannot read the folder '$BAKERY_HOME/sandboxes/default/kitchen': Not a directory"
}
