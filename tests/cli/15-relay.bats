#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

ready() {
	bakery-queue stats | jq '."bakery-events".ready'
}

outbox_rows() {
	sqlite3 "$BAKERY_HOME/sandboxes/default/$1.db" "select count(*) from outbox"
}

# An order placed while the queue refused: its OrderPlaced waits in the
# outbox. Leaves the fault set; prints the id.
unsent_order() {
	bakery-fault set queue-refuses
	place "$@" 2>/dev/null
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "relaying an object whose outbox is empty prints sent 0, left 0 and exits 0" {
	id=$(place ada)
	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c . <<<"$output")" \
		"{\"address\":\"order/$id\",\"sandbox\":\"default\",\"sent\":0,\"left\":0}"
}

@test "relaying sends the rows the queue refused before and deletes them" {
	id=$(unsent_order ada)
	assert_equal "$(outbox_rows "order/$id")" 1
	assert_equal "$(ready)" 0
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$(jq -r '"\(.sent) \(.left)"' <<<"$output")" "1 0"
	assert_equal "$(outbox_rows "order/$id")" 0
	assert_equal "$(ready)" 1
	assert_equal "$(bakery-queue peek | jq -r .envelope.subject)" "order/$id"
}

@test "relaying again after a send sends nothing new" {
	id=$(unsent_order ada)
	bakery-fault clear queue-refuses
	bakery-relay "order/$id" >/dev/null
	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$(jq -r .sent <<<"$output")" 0
	assert_equal "$(ready)" 1
}

@test "the queue refusing exits 69, keeps every row and counts the attempt" {
	id=$(unsent_order ada)
	db="$BAKERY_HOME/sandboxes/default/order/$id.db"
	assert_equal "$(sqlite3 "$db" "select attempts from outbox")" 1
	run --separate-stderr bakery-relay "order/$id"
	assert_failure 69
	assert_equal "$(jq -r '"\(.sent) \(.left)"' <<<"$output")" "0 1"
	[[ "$stderr" == *"relay_error"* ]]
	[[ "$stderr" == *"order/$id"* ]]
	assert_equal "$(sqlite3 "$db" "select attempts from outbox")" 2
	[[ "$(sqlite3 "$db" "select last_error from outbox")" == *queue-refuses* ]]
	run bakery-relay "order/$id"
	assert_failure 69
	assert_equal "$(sqlite3 "$db" "select attempts from outbox")" 3
	assert_equal "$(ready)" 0
}

@test "a paid order's events all arrive once after the queue comes back" {
	id=$(unsent_order ada)
	bakery-order pay "$id" >/dev/null 2>&1
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay "order/$id" "billing/$id"
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq -s 'map(.sent) | add' <<<"$output")" 2
	bakery-consume >/dev/null
	run bakery-relay --all
	assert_success
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "--all relays every object of the sandbox" {
	a=$(unsent_order ada)
	b=$(place bob 2>/dev/null)
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay --all
	assert_success
	assert_equal "$(jq -r .address <<<"$output" | sort)" "$(printf 'order/%s\n' "$a" "$b" | sort)"
	assert_equal "$(jq -s 'map(.sent) | add' <<<"$output")" 2
	assert_equal "$(jq -s 'map(.left) | add' <<<"$output")" 0
	assert_equal "$(ready)" 2
}

@test "--all of an empty sandbox prints nothing and exits 0" {
	run --separate-stderr bakery-relay --all
	assert_success
	assert_output ""
}

@test "--all relays only the chosen sandbox" {
	a=$(unsent_order ada)
	bakery-fault -s other set queue-refuses
	b=$(bakery-order -s other place --customer bob --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay -s other --all
	assert_failure 69
	assert_equal "$(jq -r .address <<<"$output")" "order/$b"
	assert_equal "$(jq -r .sandbox <<<"$output")" other
	assert_equal "$(ready)" 0
	assert_equal "$(outbox_rows "order/$a")" 1
}

@test "--all with the queue refusing exits 69 and leaves every row" {
	a=$(unsent_order ada)
	b=$(unsent_order bob)
	run --separate-stderr bakery-relay --all
	assert_failure 69
	assert_equal "$(jq -s 'map(.left) | add' <<<"$output")" 2
	assert_equal "$(outbox_rows "order/$a")" 1
	assert_equal "$(outbox_rows "order/$b")" 1
}

@test "addresses on stdin are relayed one per line" {
	a=$(unsent_order ada)
	b=$(unsent_order bob)
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay <<<"$(printf 'order/%s\n' "$a" "$b")"
	assert_success
	assert_equal "$(jq -r .address <<<"$output" | tr '\n' ' ')" "order/$a order/$b "
	assert_equal "$(ready)" 2
}

@test "bakery-show --list piped into bakery-relay relays every object" {
	a=$(unsent_order ada)
	bakery-fault clear queue-refuses
	run --separate-stderr bash -c 'bakery-show --list | jq -r . | bakery-relay'
	assert_success
	assert_equal "$(jq -r .address <<<"$output")" "order/$a"
	assert_equal "$(ready)" 1
}

@test "a bad address exits 64 and still relays the good ones" {
	a=$(unsent_order ada)
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay order/../x "order/$a"
	assert_failure 64
	[[ "$stderr" == *"bad address: 'order/../x'"* ]]
	assert_equal "$(jq -r .address <<<"$output")" "order/$a"
	assert_equal "$(ready)" 1
}

@test "bad addresses exit 64 and create no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	for a in order/../x order/A nosuch/x order ../x /etc/passwd; do
		run --separate-stderr bakery-relay "$a"
		assert_failure 64
		assert_output ""
		[[ "$stderr" == *"bad address"* ]]
	done
	run --separate-stderr bakery-relay <<<"order/../x"
	assert_failure 64
	assert_output ""
	assert_equal "$(outside_home)" ""
}

@test "a bad address on stdin exits 64 even after a missing object" {
	run --separate-stderr bakery-relay <<<"$(printf 'order/ord_000000000000000000000000\nnosuch/x\n')"
	assert_failure 64
}

@test "a missing object exits 66 and is not created" {
	refuses 66 "no such object" bakery-relay order/ord_000000000000000000000000
	[ ! -e "$BAKERY_HOME/sandboxes/default/order/ord_000000000000000000000000.db" ]
}

@test "a bad sandbox -s ../x exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	refuses 64 "bad sandbox name" bakery-relay -s ../x --all
	run --separate-stderr bakery-relay -s ../x order/ord_x
	assert_failure 64
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	assert_equal "$(outside_home)" ""
}

@test "--all with an address exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-relay" bakery-relay --all order/ord_x
}

@test "a queue URL that names no driver exits 78 and keeps the rows" {
	id=$(unsent_order ada)
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-relay --queue nats:/127.0.0.1:1 "order/$id"
	assert_failure 78
	[[ "$stderr" == *"bad queue URL"* ]]
	assert_output ""
	assert_equal "$(outbox_rows "order/$id")" 1
}

@test "stdout that cannot be written exits 74" {
	id=$(place ada)
	run --separate-stderr bash -c "bakery-relay 'order/$id' >/dev/full"
	assert_failure 74
}
