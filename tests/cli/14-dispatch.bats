#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "bakery order list runs bakery-order list" {
	a=$(place ada)
	b=$(place bob)
	run --separate-stderr bakery order list
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -r .id <<<"$output" | sort)" "$(printf '%s\n' "$a" "$b" | sort)"
	assert_equal "$output" "$(bakery-order list)"
}

@test "bakery passes options and operands through to the command" {
	id=$(bakery order place --customer ada --day "$DAY" country-loaf=2 | jq -r .id)
	assert_equal "$(bakery-order show "$id" | jq -r .total_cents)" 1800
	run --separate-stderr bakery show "order/$id"
	assert_success
	assert_equal "$(jq -r .state.status <<<"$output")" placed
	run --separate-stderr bakery fault -s other set queue-refuses
	assert_success
	assert_equal "$(bakery-fault -s other list | jq -r .name)" queue-refuses
	assert_output ""
}

@test "bakery passes the command's exit code through" {
	run --separate-stderr bakery order pay ord_000000000000000000000000
	assert_failure 66
	[[ "$stderr" == *"bakery-order: error: no such order"* ]]
	id=$(place ada)
	run --separate-stderr bakery order pay "$id" --card 4000000000000002
	assert_failure 1
	assert_equal "$(jq -r .status <<<"$output")" declined
}

@test "bakery passes stdin through to the command" {
	id=$(place ada)
	run --separate-stderr bash -c "bakery-order events '$id' | bakery queue send"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" sent
}

@test "bakery runs the programs beside it even when they are not on PATH" {
	run --separate-stderr env PATH=/usr/bin:/bin "$TOP/bin/bakery" order list
	assert_success
	assert_output ""
	run --separate-stderr env PATH=/usr/bin:/bin "$TOP/bin/bakery" queue stats
	assert_success
	assert_equal "$(jq '."bakery-events".ready' <<<"$output")" 0
}

@test "a command's -h goes through bakery" {
	run --separate-stderr bakery order -h
	assert_success
	assert_line --index 0 --partial "usage: bakery-order place"
}

@test "bakery nosuch exits 64 with an error naming the command and the usage on stderr" {
	refuses 64 "bakery: error: unknown command: 'nosuch'" bakery nosuch
	[[ "$stderr" == *"usage: bakery COMMAND"* ]]
}

@test "a command name that is a path or has a dot exits 64 and runs nothing" {
	for c in ../bin/bakery-order /bin/true order/.. show.x ORDER ''; do
		run --separate-stderr bakery "$c" list
		assert_failure 64
		assert_output ""
		[[ "$stderr" == *"unknown command"* ]]
	done
}

@test "bakery without a command exits 64 with the usage on stderr" {
	refuses 64 "missing command" bakery
	[[ "$stderr" == *"usage: bakery COMMAND"* ]]
}

@test "-h and --help print the usage and the commands on stdout and exit 0" {
	for h in -h --help; do
		run --separate-stderr bakery "$h"
		assert_success
		assert_line --index 0 "usage: bakery COMMAND [ARGS...]"
		assert_line --partial "commands: order relay consume dlq redrive queue fault show"
		assert_equal "$stderr" ""
	done
}

@test "-V and --version print bakery and the version" {
	for v in -V --version; do
		run --separate-stderr bakery "$v"
		assert_success
		assert_line --index 0 --regexp '^bakery [0-9]+\.[0-9]+\.[0-9]+$'
		assert_line --index 1 --regexp '^sqlite '
	done
}

@test "every command listed in the usage runs through bakery, its -h naming each common option once" {
	for c in $(bakery_commands); do
		run --separate-stderr bakery "$c" -h
		assert_success
		assert_line --index 0 --partial "usage: bakery-$c"
		[ "$(grep -c '^common options:' <<<"$output")" -eq 1 ] &&
			[ "$(grep -c -- '--home DIR' <<<"$output")" -eq 1 ] ||
			{ echo "bakery-$c -h: the common options not once" >&2; false; }
	done
}

@test "stdout that cannot be written exits 74 for -h" {
	run --separate-stderr bash -c 'bakery -h >/dev/full'
	assert_failure 74
}

# The pages as man finds them once installed, for bakery help.
man_tree() {
	mkdir -p "$BATS_TEST_TMPDIR/man/man1" "$BATS_TEST_TMPDIR/man/man7"
	cp "$TOP"/docs/man/*.1 "$BATS_TEST_TMPDIR/man/man1/"
	cp "$TOP"/docs/man/*.7 "$BATS_TEST_TMPDIR/man/man7/"
}

@test "bakery help CMD shows the command's page through man and exits 0" {
	man_tree
	run --separate-stderr timeout 60 env MANPATH="$BATS_TEST_TMPDIR/man" \
	    MANPAGER=cat PAGER=cat bakery help order
	assert_success
	assert_line --regexp '^BAKERY-ORDER\(1\)'
	assert_line --partial 'bakery-order — place, pay, show and list orders'
}

@test "bakery help shows bakery's own page through man and exits 0" {
	man_tree
	run --separate-stderr timeout 60 env MANPATH="$BATS_TEST_TMPDIR/man" \
	    MANPAGER=cat PAGER=cat bakery help
	assert_success
	assert_line --regexp '^BAKERY\(1\)'
}

@test "bakery help CMD without its page prints the command's usage on stdout and exits 0" {
	mkdir "$BATS_TEST_TMPDIR/noman"
	run --separate-stderr timeout 60 env MANPATH="$BATS_TEST_TMPDIR/noman" \
	    MANPAGER=cat PAGER=cat bakery help wipe
	assert_success
	assert_line --index 0 --partial "usage: bakery-wipe"
	assert_equal "$stderr" ""
}

@test "bakery help without man on PATH prints the usage and exits 0" {
	bakery=$(command -v bakery)
	run --separate-stderr env PATH=/nonexistent "$bakery" help status
	assert_success
	assert_line --index 0 --partial "usage: bakery-status"
	run --separate-stderr env PATH=/nonexistent "$bakery" help
	assert_success
	assert_line --index 0 "usage: bakery COMMAND [ARGS...]"
}

@test "bakery help with an unknown command exits 64 and shows nothing on stdout" {
	for c in nosuch ../bin/bakery-order show.x; do
		run --separate-stderr bakery help "$c"
		assert_failure 64
		assert_output ""
		[[ "$stderr" == *"unknown command"* ]]
	done
}
