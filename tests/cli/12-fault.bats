#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "list of a fresh sandbox prints nothing and exits 0" {
	run --separate-stderr bakery-fault list
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
}

@test "set prints nothing and list then shows the fault with its name and time" {
	run --separate-stderr bakery-fault set queue-refuses
	assert_success
	assert_output ""
	run --separate-stderr bakery-fault list
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq -r .name <<<"$output")" queue-refuses
	[[ "$(jq -r .set_at <<<"$output")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]]
}

@test "setting a fault twice lists it once" {
	bakery-fault set refuses:kitchen
	bakery-fault set refuses:kitchen
	run --separate-stderr bakery-fault list
	assert_success
	assert_equal "$(jq -r .name <<<"$output")" refuses:kitchen
	assert_equal "${#lines[@]}" 1
}

@test "both faults can be set and clear removes only the one named" {
	bakery-fault set refuses:kitchen
	bakery-fault set queue-refuses
	run bakery-fault list
	assert_equal "$(jq -r .name <<<"$output" | sort | tr '\n' ' ')" "queue-refuses refuses:kitchen "
	run --separate-stderr bakery-fault clear queue-refuses
	assert_success
	assert_output ""
	run bakery-fault list
	assert_equal "$(jq -r .name <<<"$output")" refuses:kitchen
	assert_equal "${#lines[@]}" 1
}

@test "clearing a fault that is not set exits 0" {
	run --separate-stderr bakery-fault clear refuses:kitchen
	assert_success
	run bakery-fault list
	assert_output ""
}

@test "an unknown fault exits 64 with the usage on stderr and sets nothing" {
	refuses 64 "unknown fault: 'nosuch'" bakery-fault set nosuch
	[[ "$stderr" == *"usage: bakery-fault"* ]]
	run --separate-stderr bakery-fault clear nosuch
	assert_failure 64
	run bakery-fault list
	assert_output ""
}

@test "faults are per sandbox" {
	bakery-fault set queue-refuses
	run --separate-stderr bakery-fault -s other list
	assert_success
	assert_output ""
	bakery-fault -s other set refuses:kitchen
	run bakery-fault -s other list
	assert_equal "$(jq -r .name <<<"$output")" refuses:kitchen
	run bakery-fault list
	assert_equal "$(jq -r .name <<<"$output")" queue-refuses
	assert_equal "${#lines[@]}" 1
}

@test "BAKERY_SANDBOX selects the sandbox like -s" {
	BAKERY_SANDBOX=other bakery-fault set queue-refuses
	run bakery-fault -s other list
	assert_equal "$(jq -r .name <<<"$output")" queue-refuses
	run bakery-fault list
	assert_output ""
}

@test "queue-refuses in one sandbox does not stop sends of another" {
	bakery-fault -s other set queue-refuses
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	[[ "$stderr" != *relay_error* ]]
	run --separate-stderr bakery-order -s other place --customer bob --day "$DAY" cardamom-bun=1
	assert_success
	[[ "$stderr" == *relay_error* ]]
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
	assert_equal "$(bakery-queue peek | jq -r .sandbox)" default
}

@test "queue-refuses makes bakery-queue send exit 69 and clearing it lets the same send through" {
	bakery-fault set queue-refuses
	id=$(place ada)
	env=$(bakery-order events "$id")
	run --separate-stderr bakery-queue send <<<"$env"
	assert_failure 69
	assert_output ""
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
	bakery-fault clear queue-refuses
	run --separate-stderr bakery-queue send <<<"$env"
	assert_success
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
}

# refused KIND: sets refuses:KIND, places an order (its id in $id) and
# consumes it; the OrderPlaced is answered 503 by that kind ("Kind answered
# 503").
refused() {
	bakery-fault set "refuses:$1"
	id=$(place ada)
	run --separate-stderr bakery-consume
	assert_equal "$(jq -r .status <<<"${lines[0]}")" 503
	[[ "$output" == *"${1^} answered 503"* ]]
}

@test "refuses:kitchen makes the kitchen answer 503 and clearing it lets the event apply" {
	refused kitchen
	# Nothing applied there: no board was made.
	run bakery-show kitchen/board
	assert_failure 66
	bakery-fault clear refuses:kitchen
	bakery-order events "$id" | bakery-consume --stdin >/dev/null
	run bakery-show kitchen/board
	assert_equal "$(jq -c --arg o "$id" '[.state.cards[] | select(.order == $o) | .status]' <<<"$output")" '["placed"]'
}

@test "refuses:schedule makes the schedule answer 503 while the kitchen applies" {
	refused schedule
	[[ "$output" != *"Kitchen answered"* ]]
	run bakery-show kitchen/board
	assert_equal "$(jq -c --arg o "$id" '[.state.cards[] | select(.order == $o) | .status]' <<<"$output")" '["placed"]'
}

@test "refuses: with a kind that is no subscriber, or no kind, exits 64 and sets nothing" {
	for name in refuses:billing refuses:external refuses:nonesuch refuses: refuses:../x; do
		run --separate-stderr bakery-fault set "$name"
		assert_failure 64
		[[ "$stderr" == *"unknown fault: '$name'"* ]]
	done
	run bakery-fault list
	assert_output ""
}

@test "a bad sandbox -s ../x exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	refuses 64 "bad sandbox name" bakery-fault -s ../x set queue-refuses
	run --separate-stderr bakery-fault -s ../x list
	assert_failure 64
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	assert_equal "$(outside_home)" ""
}

@test "a fault name that looks like a path exits 64" {
	run --separate-stderr bakery-fault set ../x
	assert_failure 64
	assert_output ""
}

@test "set without a name exits 64 and list with an operand exits 64" {
	run --separate-stderr bakery-fault set
	assert_failure 64
	[[ "$stderr" == *"usage: bakery-fault"* ]]
	run --separate-stderr bakery-fault list queue-refuses
	assert_failure 64
	run --separate-stderr bakery-fault set queue-refuses refuses:kitchen
	assert_failure 64
	run bakery-fault list
	assert_output ""
}

@test "an unknown option exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-fault" bakery-fault --bogus list
}
