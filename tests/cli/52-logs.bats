#!/usr/bin/env bats
# What the programs write to stderr: every message a JSON line under
# BAKERY_LOG=json, journald priorities when stderr is the journal, progress
# only on a terminal, no colour under NO_COLOR; and -V.
load helpers
bats_require_minimum_version 1.5.0

PROGS="bakery bakery-order bakery-relay bakery-consume bakery-dlq bakery-wipe
bakery-redrive bakery-queue bakery-fault bakery-show bakery-webhook bakery-status
bakery-trace"

# Every line of $1 is a JSON object with prog, level and event.
all_json() {
	[ -n "$1" ] || { echo "no stderr" >&2; return 1; }
	while IFS= read -r line; do
		jq -e 'type == "object" and (.prog | type) == "string" and (.level | type) == "string" and (.event | type) == "string"' <<<"$line" >/dev/null ||
			{ echo "not a JSON log line: $line" >&2; return 1; }
	done <<<"$1"
}

# shellcheck disable=SC2154 # $stderr, $stderr_lines: set by bats's run --separate-stderr
@test "BAKERY_LOG=json: per-item errors of show, redrive, relay, consume --stdin and queue send are JSON lines" {
	export BAKERY_LOG=json
	run --separate-stderr bakery-show order/nope kitchen/board
	assert_failure 66
	all_json "$stderr"
	jq -e '.level == "error" and .event == "error" and .message == "no such object: '\''order/nope'\''"' <<<"${stderr_lines[0]}"
	run --separate-stderr bakery-redrive evt_nope
	assert_failure 66
	all_json "$stderr"
	run --separate-stderr bakery-relay order/nope
	assert_failure 66
	all_json "$stderr"
	run --separate-stderr bash -c 'echo "{not json" | bakery-consume --stdin'
	assert_failure 65
	all_json "$stderr"
	jq -e '.message | startswith("line 1: ")' <<<"$stderr"
	run --separate-stderr bash -c 'printf "%s\n" "[]" | bakery-queue send'
	assert_failure 65
	all_json "$stderr"
	run --separate-stderr bakery-redrive --all
	assert_success
}

@test "BAKERY_LOG=json: usage errors and bad options are one JSON line carrying the usage" {
	export BAKERY_LOG=json
	for args in "bakery-order" "bakery-order --bogus list" "bakery-order place --day" \
	    "bakery-show" "bakery-status extra" "bakery-trace" "bakery nope"; do
		run --separate-stderr $args
		assert_failure 64
		assert_equal "${#stderr_lines[@]}" 1
		all_json "$stderr"
		jq -e '.event == "usage_error" and (.usage | startswith("usage: "))' <<<"$stderr"
	done
	run --separate-stderr bakery-order --bogus list
	jq -e '.message == "unknown option: '\''--bogus'\''"' <<<"$stderr"
	run --separate-stderr bakery-order list --day
	jq -e '.message == "option needs a value: '\''--day'\''"' <<<"$stderr"
}

@test "plain text: a bad option is named once, then the usage" {
	run --separate-stderr bakery-show -x
	assert_failure 64
	assert_equal "${stderr_lines[0]}" "bakery-show: error: unknown option: '-x'"
	assert_equal "${stderr_lines[1]}" "usage: bakery-show ADDRESS..."
	run --separate-stderr bakery-show --list=yes
	assert_equal "${stderr_lines[0]}" "bakery-show: error: option takes no value: '--list'"
}

@test "journald: priority prefixes when JOURNAL_STREAM names stderr, none otherwise" {
	err="$BATS_TEST_TMPDIR/journal"
	: >"$err"
	stream=$(stat -c '%d:%i' "$err")
	bakery-fault set queue-refuses
	JOURNAL_STREAM=$stream bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null 2>>"$err"
	JOURNAL_STREAM=$stream bakery-show order/nope >/dev/null 2>>"$err" || true
	JOURNAL_STREAM=$stream bakery-wipe --all -v >/dev/null 2>>"$err"
	run cat "$err"
	assert_line --regexp '^<4>bakery-order: warning: relay_error '
	assert_line "<3>bakery-show: error: no such object: 'order/nope'"
	assert_line '<6>bakery-wipe: info: wipe_done'
	# Another stream (stderr redirected elsewhere): no prefix.
	run --separate-stderr env JOURNAL_STREAM=1:1 bakery-show order/nope
	assert_equal "$stderr" "bakery-show: error: no such object: 'order/nope'"
	# JSON lines stay JSON under the journal.
	JOURNAL_STREAM=$stream BAKERY_LOG=json bakery-show order/nope 2>"$err" || true
	jq -e '.level == "error"' "$err"
}

# Two orders for the kitchen, dead-lettered and drained to the DLQ.
two_dead() {
	bakery-fault set refuses:kitchen
	place "$1" >/dev/null
	place "$2" >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
}

@test "progress: on a terminal redrive and wipe count on stderr; not on a file" {
	two_dead ada bo
	run --separate-stderr bakery-redrive --all
	assert_success
	assert_equal "$stderr" ""
	bakery-consume --max-retries 0 >/dev/null 2>&1 || true
	two_dead cy di
	run script -qec "bakery-redrive --all >/dev/null" /dev/null
	assert_success
	[[ "$output" == *$'\r'"bakery-redrive: redrive 2/2"* ]]
	run script -qec "bakery-wipe --all >/dev/null" /dev/null
	assert_success
	[[ "$output" == *"bakery-wipe: wipe 1/1"* ]]
	run script -qec "BAKERY_LOG=json bakery-redrive --all >/dev/null" /dev/null
	[[ "$output" != *"redrive 0/0"* ]]
}

@test "NO_COLOR: the demo on a terminal uses colour, and none with NO_COLOR" {
	export TMPDIR="$BATS_TEST_TMPDIR"
	run script -qec "NO_COLOR=1 $TOP/tests/demo.sh" /dev/null
	assert_success
	[[ "$output" != *$'\033'* ]]
	run script -qec "$TOP/tests/demo.sh" /dev/null
	assert_success
	[[ "$output" == *$'\033[1m'* ]]
}

@test "-V: every program names bakery, SQLite, libjq, libcurl and nats.c" {
	for p in $PROGS; do
		run --separate-stderr $p -V
		assert_success
		assert_line --index 0 --regexp "^$p [0-9]+\.[0-9]+\.[0-9]+\$"
		assert_line --index 1 --regexp "^sqlite $(sqlite3 -version | cut -d' ' -f1) \((static|shared), journal_mode=(truncate|wal)\)\$"
		assert_line --index 2 --regexp '^libjq 1\.[0-9].* \(compile time\)$'
		assert_line --index 3 --regexp '^libcurl [0-9]+\.[0-9]+\.[0-9]+'
		assert_line --index 4 --regexp '^nats\.c [0-9]+\.[0-9]+\.[0-9]+'
	done
}

@test "-V: static SQLite is a fixed one in WAL with bin/sqlite3 its shell; shared is the system's" {
	run --separate-stderr bakery-order -V
	assert_success
	link=$(sed -nE 's/^sqlite [0-9.]+ \((static|shared), .*/\1/p' <<<"${lines[1]}")
	version=$(cut -d' ' -f2 <<<"${lines[1]}")
	if [ "$link" = static ]; then
		assert_line --index 1 --regexp '^sqlite 3\.[0-9]+\.[0-9]+ \(static, journal_mode=wal\)$'
		mode=wal
		run "$TOP/bin/sqlite3" -version
		assert_success
		assert_output --regexp "^$version "
	else
		assert_equal "$link" shared
		# The system's library and shell (Debian 12: 3.40.1, which has
		# the WAL-reset race, so a rollback journal).
		assert_equal "$version" "$(sqlite3 -version | cut -d' ' -f1)"
		assert_line --index 1 --regexp '^sqlite [0-9.]+ \(shared, journal_mode=(truncate|wal)\)$'
		mode=$(sed -nE 's/.*journal_mode=([a-z]+)\)$/\1/p' <<<"${lines[1]}")
		[ ! -e "$TOP/bin/sqlite3" ]
	fi
	# WAL is recorded in the file; a rollback journal is a connection's
	# setting, and a new connection reports SQLite's default.
	id=$(bakery-order place --customer ada --day 2026-12-01 cardamom-bun=1 | jq -r .id)
	run sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "PRAGMA journal_mode"
	if [ "$mode" = wal ]; then assert_output wal; else assert_output delete; fi
}
