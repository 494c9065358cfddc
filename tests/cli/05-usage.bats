#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# What every program promises its caller before it does anything (bakery(1),
# "Exit status"): -h and --help print the usage on stdout and exit 0, -V
# prints the program and its version, and a misuse exits 64 with nothing
# on stdout and the usage on stderr. One table, so that a program added to
# bin/ without them fails here.

# Every program of the toolkit, from bin/ (nats-server and sqlite3 are
# the tests' own, not bakery's).
programs() {
	local p
	for p in "$BATS_TEST_DIRNAME"/../../bin/bakery*; do
		basename "$p"
	done
}

@test "every program: -h and --help print the usage on stdout and exit 0" {
	local p n=0
	for p in $(programs); do
		for flag in -h --help; do
			run --separate-stderr "$p" "$flag"
			[ "$status" -eq 0 ] || fail "$p $flag: exit $status"
			[[ "${lines[0]}" == "usage: $p"* ]] || fail "$p $flag: '${lines[0]}'"
			[ -z "$stderr" ] || fail "$p $flag: stderr '$stderr'"
		done
		n=$((n + 1))
	done
	[ "$n" -ge 15 ]
}

@test "every program: -V prints the program and its version" {
	local p
	for p in $(programs); do
		run --separate-stderr "$p" -V
		[ "$status" -eq 0 ] || fail "$p -V: exit $status"
		[[ "$output" =~ ^$p\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "$p -V: '$output'"
	done
}

@test "every program: an unknown option exits 64 with the usage on stderr" {
	local p
	for p in $(programs); do
		run --separate-stderr "$p" --bogus
		[ "$status" -eq 64 ] || fail "$p --bogus: exit $status"
		[ -z "$output" ] || fail "$p --bogus: stdout '$output'"
		[[ "$stderr" == *"usage: $p"* ]] || fail "$p --bogus: stderr '$stderr'"
	done
}

# PROGRAM|ARGUMENTS|what stderr says: a missing or unknown command or
# operand, each 64 with the usage on stderr and nothing on stdout.
MISUSES='bakery-order||usage: bakery-order
bakery-order|nosuch|unknown command: '"'"'nosuch'"'"'
bakery-fault||usage: bakery-fault
bakery-fault|toggle queue-refuses|unknown command: '"'"'toggle'"'"'
bakery-queue||missing command
bakery-queue|receive|unknown command: '"'"'receive'"'"'
bakery-queue|stats extra|too many operands
bakery-show||missing ADDRESS
bakery-dlq||missing command
bakery-trace||missing EVENT_ID
bakery-backup||missing DIR'

@test "a missing or unknown command exits 64, names what is wrong, and prints the usage on stderr" {
	local p args says
	while IFS='|' read -r p args says; do
		# shellcheck disable=SC2086 # the arguments are words
		run --separate-stderr "$p" $args
		[ "$status" -eq 64 ] || fail "$p $args: exit $status"
		[ -z "$output" ] || fail "$p $args: stdout '$output'"
		[[ "$stderr" == *"$says"* ]] || fail "$p $args: stderr '$stderr'"
		[[ "$stderr" == *"usage: $p"* ]] || fail "$p $args: no usage: '$stderr'"
	done <<<"$MISUSES"
}

@test "the usage names each program's own commands and options" {
	run --separate-stderr bakery-order -h
	assert_line --index 0 --partial "usage: bakery-order place"
	run --separate-stderr bakery-fault -h
	assert_line --index 0 "usage: bakery-fault set NAME"
	assert_line --partial "faults: refuses:KIND"
	run --separate-stderr bakery-queue -h
	assert_line --index 0 "usage: bakery-queue init [--replicas N]"
	run --separate-stderr bakery-show -h
	assert_line --index 0 "usage: bakery-show ADDRESS..."
	run --separate-stderr bakery-relay -h
	assert_line --index 0 "usage: bakery-relay ADDRESS..."
}

@test "every program's -V says the version of debian/changelog's first entry, 0.2.0" {
	local version=0.2.0
	[ "$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)" = "$version" ]
	run bakery -V
	assert_line --index 0 "bakery $version"
	for p in "$TOP"/bin/bakery-*; do
		p=${p##*/}
		run --separate-stderr "$p" -V
		assert_line --index 0 "$p $version"
	done
}
