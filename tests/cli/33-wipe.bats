#!/usr/bin/env bats
# The daily wipe: every sandbox reset, resumably, without touching anything
# else and without letting a wiped sandbox's events come back.
load helpers
bats_require_minimum_version 1.5.0

teardown() {
	# Background workers of a failed test must not outlive it.
	touch "$BATS_TEST_TMPDIR/stop"
	for p in ${workers:-}; do
		kill -TERM "$p" 2>/dev/null || true
		kill -CONT "$p" 2>/dev/null || true
	done
}

# Every event an object of the default sandbox applied was recorded by an
# order or billing object that still exists.
assert_applied_were_recorded() {
	local recorded="$BATS_TEST_TMPDIR/recorded" f a
	: >"$recorded"
	for f in "$BAKERY_HOME"/sandboxes/default/order/*.db "$BAKERY_HOME"/sandboxes/default/billing/*.db; do
		[ -e "$f" ] && sqlite3 "$f" "SELECT id FROM events" >>"$recorded"
	done
	for a in $(bakery-show --list | jq -r .); do
		bakery-show "$a" | jq -r '.seen[]'
	done | sort -u >"$BATS_TEST_TMPDIR/applied"
	run comm -23 "$BATS_TEST_TMPDIR/applied" <(sort -u "$recorded")
	assert_output ""
}

# A sandbox with objects, a dead letter (immediate retries), a fault, queued
# messages and an armed alarm.
fill() {
	local s=$1 id
	id=$(bakery-order -s "$s" place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-order -s "$s" pay "$id" >/dev/null
	bakery-fault -s "$s" set refuses:kitchen
	bakery-consume -s "$s" --retry-delay 0 >/dev/null 2>&1
	bakery-dlq -s "$s" drain >/dev/null
	bakery-fault -s "$s" set queue-refuses
	bakery-order -s "$s" place --customer bo --day "$DAY" country-loaf=1 >/dev/null 2>&1
	bakery-fault -s "$s" clear queue-refuses
	bakery-order -s "$s" place --customer cy --day "$DAY" country-loaf=1 >/dev/null
}

assert_empty() {
	local s=$1
	assert_equal "$(bakery-show -s "$s" --list | wc -l)" 0
	assert_equal "$(bakery-dlq -s "$s" list | wc -l)" 0
	assert_equal "$(bakery-fault -s "$s" list | wc -l)" 0
	assert_equal "$(bakery-queue peek | jq -s --arg s "$s" '[.[] | select(.sandbox == $s)] | length')" 0
	assert_equal "$(bakery-queue peek --dlq | jq -s --arg s "$s" '[.[] | select(.sandbox == $s)] | length')" 0
	assert_equal "$(sqlite3 "$BAKERY_HOME/alarms.db" "SELECT count(*) FROM alarms WHERE sandbox = '$s'")" 0
}

@test "a wipe resets every sandbox and prints one line per sandbox" {
	fill default
	fill s2
	assert_equal "$(bakery-dlq list | wc -l)" 2
	run --separate-stderr bakery-wipe --all
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox | sort | tr '\n' ' ')" "default s2 "
	assert_empty default
	assert_empty s2
	# The sandboxes work again afterwards.
	id=$(paid_order ada)
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "a wipe killed midway resumes where it stopped and touches nothing else" {
	fill default
	fill s2
	objects=$(bakery-show -s s2 --list | wc -l)
	echo keep >"$BAKERY_HOME/notes.txt"
	secret=$(cat "$BAKERY_HOME/webhook-secret")
	crash_at wipe.midway:2 bakery-wipe --all
	# The first sandbox is done, the second not yet.
	assert_empty default
	assert_equal "$(bakery-show -s s2 --list | wc -l)" "$objects"
	assert [ "$objects" -gt 0 ]
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" s2
	assert_empty default
	assert_empty s2
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_output ""
	assert_equal "$(cat "$BAKERY_HOME/notes.txt")" keep
	assert_equal "$(cat "$BAKERY_HOME/webhook-secret")" "$secret"
	run ls -a "$BAKERY_HOME"
	refute_output --partial .wipe-
	for db in "$BAKERY_HOME"/*.db; do
		assert_equal "$(sqlite3 "$db" 'PRAGMA integrity_check')" ok
	done
}

@test "--resume with no unfinished wipe does nothing" {
	fill default
	objects=$(bakery-show --list | wc -l)
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_output ""
	assert_equal "$(bakery-show --list | wc -l)" "$objects"
}

@test "events recorded before the wipe cannot come back by a relay or a consumer" {
	id=$(paid_order ada)
	bakery-order events "$id" >"$BATS_TEST_TMPDIR/old.jsonl"
	bakery-show "billing/$id" >/dev/null
	sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "SELECT envelope FROM events" >>"$BATS_TEST_TMPDIR/old.jsonl"
	run --separate-stderr bakery-wipe --all
	assert_success
	# A relay that read these rows before the wipe sends them now: the
	# queue accepts and drops them.
	run --separate-stderr bakery-queue send <"$BATS_TEST_TMPDIR/old.jsonl"
	assert_success
	assert_equal "$(bakery-queue peek | wc -l)" 0
	# A consumer that leased them before the wipe applies nothing.
	run --separate-stderr bakery-consume --stdin <"$BATS_TEST_TMPDIR/old.jsonl"
	assert_success
	assert_equal "$(echo "$output" | jq -s '[.[] | select(.status == 205)] | length')" 2
	assert_equal "$(bakery-show --list | wc -l)" 0
}

# has_open PID FILE: process PID has FILE open.
has_open() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = "$2" ] && return 0
	done
	return 1
}

# stamp: each line of stdin after the time it came, in microseconds.
stamp() { while IFS= read -r l; do printf '%s %s\n' "${EPOCHREALTIME/./}" "$l"; done; }

# stamped FROM TO FILE...: the lines of FILEs (stamped) from after FROM up
# to TO that match the last argument's pattern.
stamped() {
	local from=$1 to=$2 re=${*: -1}
	cat "${@:3:$#-3}" 2>/dev/null | awk -v a="$from" -v b="$to" -v re="$re" \
		'$1 > a && $1 <= b && $0 ~ re' | wc -l
}

# worked FROM [TO]: from after FROM (up to TO), the client paid three
# orders and the consumers acked a message.
worked() {
	local to=${2:-9999999999999999}
	[ "$(stamped "$1" "$to" "$BATS_TEST_TMPDIR/paid" ord_)" -ge 3 ] &&
		[ "$(stamped "$1" "$to" "$BATS_TEST_TMPDIR"/c[12].out '"acked"')" -ge 1 ]
}

@test "a wipe while clients, relays and consumers run corrupts nothing and brings nothing back" {
	stop="$BATS_TEST_TMPDIR/stop"
	(while [ ! -e "$stop" ]; do
		id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id) &&
			bakery-order pay "$id" >/dev/null 2>&1 && echo "$id"
	done | stamp >"$BATS_TEST_TMPDIR/paid") &
	client=$!
	(while [ ! -e "$stop" ]; do bakery-relay --all >/dev/null 2>&1 || true; done) &
	relay=$!
	bakery-consume --follow > >(stamp >"$BATS_TEST_TMPDIR/c1.out") 2>"$BATS_TEST_TMPDIR/c1.err" &
	c1=$!
	bakery-consume --follow > >(stamp >"$BATS_TEST_TMPDIR/c2.out") 2>"$BATS_TEST_TMPDIR/c2.err" &
	c2=$!
	workers="$client $relay $c1 $c2"
	wait_for 60 worked 0
	run --separate-stderr bakery-wipe --all
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" default
	fence=$(date -d "$(jq -r .wiped_at <<<"$output")" +%s%6N)
	kill -0 "$client" "$relay" "$c1" "$c2"
	wait_for 60 worked "$fence"
	touch "$stop"
	wait "$client" "$relay" || true
	kill -TERM "$c1" "$c2"
	wait "$c1" "$c2"
	# By the wipe's own record, its fence fell in the middle of the work:
	# orders paid and messages acked before it, and after it.
	worked 0 "$fence"
	worked "$fence"
	bakery-relay --all >/dev/null 2>&1 || true
	bakery-consume >/dev/null
	# Nothing corrupt.
	find "$BAKERY_HOME" -name '*.db' | while read -r db; do
		[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || { echo "corrupt: $db" >&2; exit 1; }
	done
	# The orders paid before the fence went with the wipe; the last one,
	# placed after it, has every effect once.
	for id in $(awk -v f="$fence" '$1 <= f { print $2 }' "$BATS_TEST_TMPDIR/paid"); do
		run bakery-order show "$id"
		assert_failure 66
	done
	assert_effects_once "$(tail -n1 "$BATS_TEST_TMPDIR/paid" | cut -d' ' -f2)"
	# Every event any object applied was recorded by an object that still
	# exists: nothing from before the wipe came back, and no order placed
	# while the wipe ran was moved aside with its sandbox while its events
	# went on.
	assert_applied_were_recorded
}

@test "no object is open between the wipe's fence and its rename; a command waits and lands in the new sandbox" {
	old=$(paid_order ada)
	BAKERY_STOP_AT=wipe.midway bakery-wipe --all >"$BATS_TEST_TMPDIR/wipe.out" &
	wipe=$!
	workers=$wipe
	stopped "$wipe"
	# The fence is set and the folder not yet aside: an order placed now
	# would be moved aside with it while its events, after the fence, went
	# on to a new kitchen and schedule. The sandbox's lock makes it wait.
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=300 \
		bakery-order place --customer bo --day "$DAY" cardamom-bun=1
	assert_failure 75
	run bakery-show --list
	assert_output --partial "order/$old"
	bakery-order place --customer cy --day "$DAY" cardamom-bun=1 >"$BATS_TEST_TMPDIR/placed" &
	placer=$!
	workers="$wipe $placer"
	# It has the sandbox's lock file open, waiting for the wipe to let go.
	wait_for 30 has_open "$placer" "$BAKERY_HOME/.default.lock"
	kill -0 "$placer"
	kill -CONT "$wipe"
	wait "$wipe"
	wait "$placer"
	assert_equal "$(jq -r .sandbox "$BATS_TEST_TMPDIR/wipe.out")" default
	id=$(jq -r .id "$BATS_TEST_TMPDIR/placed")
	bakery-order pay "$id" >/dev/null
	bakery-relay --all >/dev/null
	bakery-consume >/dev/null
	# The order that waited is in the new sandbox, with all its effects;
	# nothing of the wiped one is.
	assert_effects_once "$id"
	run bakery-show --list
	refute_output --partial "$old"
	assert_applied_were_recorded
}

# has_deleted PID NAME: process PID has a removed file ending in NAME open.
has_deleted() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		case $(readlink "$fd") in *"$2 (deleted)") return 0 ;; esac
	done
	return 1
}

@test "a wipe beside a consumer that keeps its objects open finishes at once, and the next order lands in new files" {
	old=$(paid_order ada)
	bakery-consume --follow >"$BATS_TEST_TMPDIR/c.out" 2>"$BATS_TEST_TMPDIR/c.err" &
	consumer=$!
	workers=$consumer
	board="$BAKERY_HOME/sandboxes/default/kitchen/board.db"
	# The consumer applied the order and, idle, keeps the board's file
	# open (and not the sandbox's lock).
	wait_for 30 assert_effects_once "$old"
	wait_for 30 has_open "$consumer" "$board"
	run --separate-stderr timeout 10 env BAKERY_BUSY_TIMEOUT_MS=2000 \
		bakery-wipe --all
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" default
	kill -0 "$consumer"
	# The board it kept open went with the wipe: the next order's card is
	# on the new board, and the old file is let go.
	new=$(paid_order bo)
	wait_for 30 assert_effects_once "$new"
	has_open "$consumer" "$board"
	run has_deleted "$consumer" kitchen/board.db
	assert_failure
	run bakery-show --list
	refute_output --partial "$old"
	assert_applied_were_recorded
	kill -TERM "$consumer"
	wait "$consumer"
}

@test "a wipe after a consumer's first look at the fence, before its objects open: nothing recorded before the wipe is applied" {
	{
		cat "$TOP/share/routes"
		echo "OrderPlaced exec:$TOP/share/examples/dedupe-receiver name=archive"
	} >"$BAKERY_HOME/routes"
	export BAKERY_SUBSCRIBER_RECEIVER_DIR="$BATS_TEST_TMPDIR/receiver"
	old=$(paid_order ada)
	# A payment's events leased; the first group past the fence, before
	# its object's open (the kitchen's, the order's or the external's).
	BAKERY_STOP_AT=consume.before_open bakery-consume --batch 10 \
		>"$BATS_TEST_TMPDIR/c.out" 2>"$BATS_TEST_TMPDIR/c.err" &
	consumer=$!
	workers=$consumer
	stopped "$consumer"
	run --separate-stderr timeout 20 env BAKERY_BUSY_TIMEOUT_MS=2000 \
		bakery-wipe --all
	assert_success
	go_on "$consumer"
	wait "$consumer"
	# Every delivery was answered 205, dropped as wiped, by every
	# subscriber: the look under each object's lock saw the new fence.
	[ -s "$BATS_TEST_TMPDIR/c.out" ]
	run jq -r '.status' "$BATS_TEST_TMPDIR/c.out"
	refute_output --partial 200
	assert_output --partial 205
	run bakery-show --list
	refute_output --partial "$old"
	# An object the consumer opened after the wipe, if any, is empty.
	for a in $(bakery-show --list | jq -r .); do
		assert_equal "$(bakery-show "$a" | jq -c .seen)" "[]"
	done
	assert_applied_were_recorded
	# The external subscriber was never called.
	[ ! -e "$BATS_TEST_TMPDIR/receiver/calls.log" ]
}

@test "a wipe that removes a message a consumer holds: its lost lease says the wipe removed it" {
	sqlite_only "the embedded queue's reason"
	paid_order ada >/dev/null
	BAKERY_STOP_AT=consume.before_ack bakery-consume --batch 10 \
		>"$BATS_TEST_TMPDIR/c.out" 2>"$BATS_TEST_TMPDIR/c.err" &
	consumer=$!
	workers=$consumer
	stopped "$consumer"
	run --separate-stderr timeout 20 bakery-wipe --all
	assert_success
	go_on "$consumer"
	wait "$consumer"
	run jq -r .outcome "$BATS_TEST_TMPDIR/c.out"
	assert_output --partial lease-lost
	grep -q "lease_lost id=evt_[0-9a-f]* error=\"lease lost: 'evt_[0-9a-f]*': its sandbox 'default' was wiped while it was leased, and the wipe removed it\"" "$BATS_TEST_TMPDIR/c.err"
	run grep -c "it expired" "$BATS_TEST_TMPDIR/c.err"
	assert_output 0
}

# Every file of the home with its checksum, and every row of every
# database: what a dry run must leave as it found. A -shm file is SQLite's
# index of the WAL beside it, which any reader (the dump below) rewrites.
home_state() {
	(cd "$BAKERY_HOME" && find . -type f ! -name '*-shm' -exec sha256sum {} + | sort)
	find "$BAKERY_HOME" -name '*.db' | sort | while read -r db; do
		echo "== $db"
		sqlite3 -readonly "$db" .dump
	done
}

@test "-s S wipes only sandbox S and prints only its line" {
	fill default
	fill trial
	objects=$(bakery-show --list | wc -l)
	dead=$(bakery-dlq list | wc -l)
	run --separate-stderr bakery-wipe -s trial
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" trial
	assert_empty trial
	assert_equal "$(bakery-show --list | wc -l)" "$objects"
	assert [ "$dead" -gt 0 ]
	assert_equal "$(bakery-dlq list | wc -l)" "$dead"
	assert_equal "$(bakery-fault list | wc -l)" 1
}

@test "BAKERY_SANDBOX=S wipes only sandbox S" {
	fill default
	fill trial
	objects=$(bakery-show --list | wc -l)
	BAKERY_SANDBOX=trial run --separate-stderr bakery-wipe
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" trial
	assert_empty trial
	assert_equal "$(bakery-show --list | wc -l)" "$objects"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a wipe with neither -s nor --all exits 64 with the usage and removes nothing" {
	fill default
	before=$(home_state)
	refuses 64 "-s SANDBOX, or --all" bakery-wipe
	[[ "$stderr" == *"usage: bakery-wipe"* ]]
	assert_equal "$(home_state)" "$before"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "--all with -s or BAKERY_SANDBOX exits 64 and removes nothing" {
	fill default
	before=$(home_state)
	run --separate-stderr bakery-wipe --all -s default
	assert_failure 64
	[[ "$stderr" == *"--all and a sandbox"*"exclude each other"* ]]
	BAKERY_SANDBOX=default run --separate-stderr bakery-wipe --all
	assert_failure 64
	[[ "$stderr" == *"--all and a sandbox"*"exclude each other"* ]]
	assert_equal "$(home_state)" "$before"
}

@test "a killed wipe of one sandbox resumes that sandbox and no other" {
	fill default
	fill trial
	objects=$(bakery-show --list | wc -l)
	crash_at wipe.midway bakery-wipe -s trial
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" trial
	assert_empty trial
	assert_equal "$(bakery-show --list | wc -l)" "$objects"
}

@test "a wipe of one sandbox leaves a killed wipe of every sandbox for --resume" {
	fill default
	fill s2
	fill trial
	crash_at wipe.midway:2 bakery-wipe --all
	objects=$(bakery-show -s s2 --list | wc -l)
	# s2 is the killed run's, not this one's: -s trial wipes trial alone,
	# and -s trial --resume finishes no run of every sandbox.
	run --separate-stderr bakery-wipe -s trial
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" trial
	run --separate-stderr bakery-wipe -s trial --resume
	assert_success
	assert_output ""
	assert_equal "$(bakery-show -s s2 --list | wc -l)" "$objects"
	# The killed run finishes what it began: s2, and trial, which it
	# listed too.
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output" | tr '\n' ' ')" "s2 trial "
	assert_empty s2
}

@test "--dry-run prints one line per sandbox that would go and changes no file or row" {
	fill default
	fill trial
	before=$(home_state)
	run --separate-stderr bakery-wipe --all --dry-run
	assert_success
	assert_equal "$(jq -c '[.sandbox, .run]' <<<"$output" | tr '\n' ' ')" '["default",null] ["trial",null] '
	assert_equal "$(jq -r 'select(.sandbox == "default") | .objects' <<<"$output")" "$(bakery-show --list | wc -l)"
	assert_equal "$(home_state)" "$before"
	run --separate-stderr bakery-wipe -s trial --dry-run
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output")" trial
	assert_equal "$(home_state)" "$before"
}

@test "--dry-run counts objects, not a symlink named like one; the wipe removes the link and not what it points to" {
	id=$(place ada)
	objects=$(bakery-show --list 2>/dev/null | wc -l)
	echo precious >"$BATS_TEST_TMPDIR/elsewhere.db"
	ln -s "$BATS_TEST_TMPDIR/elsewhere.db" "$BAKERY_HOME/sandboxes/default/order/ord_link.db"
	run --separate-stderr bakery-wipe --all --dry-run
	assert_success
	assert_equal "$(jq -r .objects <<<"$output")" "$objects"
	run --separate-stderr bakery-wipe --all
	assert_success
	[ ! -e "$BAKERY_HOME/sandboxes/default/order/$id.db" ]
	assert_equal "$(cat "$BATS_TEST_TMPDIR/elsewhere.db")" precious
}

@test "--dry-run --resume names what a killed wipe has left and changes nothing" {
	fill default
	fill s2
	crash_at wipe.midway:2 bakery-wipe --all
	before=$(home_state)
	run --separate-stderr bakery-wipe --all --resume --dry-run
	assert_success
	assert_equal "$(jq -c '[.sandbox, .run]' <<<"$output")" '["s2",1]'
	assert_equal "$(home_state)" "$before"
}

@test "an unfinished wipe recorded before wipes had scopes is one of every sandbox: --dry-run reads it as it is, --all --resume finishes it" {
	fill default
	fill s2
	# wipe.db as a bakery before scopes left it, killed after default.
	sqlite3 "$BAKERY_HOME/wipe.db" "
		CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at INTEGER NOT NULL, finished_at INTEGER);
		CREATE TABLE steps(run INTEGER NOT NULL, sandbox TEXT NOT NULL, done_at INTEGER, PRIMARY KEY (run, sandbox));
		INSERT INTO runs VALUES (1, 1, NULL);
		INSERT INTO steps VALUES (1, 'default', 1), (1, 's2', NULL);
		PRAGMA user_version = 1;"
	before=$(home_state)
	run --separate-stderr bakery-wipe --all --resume --dry-run
	assert_success
	assert_equal "$(jq -c '[.sandbox, .run]' <<<"$output")" '["s2",1]'
	assert_equal "$(home_state)" "$before"
	run --separate-stderr bakery-wipe -s s2 --resume
	assert_success
	assert_output ""
	run --separate-stderr bakery-wipe --all --resume
	assert_success
	assert_equal "$(jq -c '[.sandbox, .run]' <<<"$output")" '["s2",1]'
	assert_empty s2
	assert_equal "$(sqlite3 "$BAKERY_HOME/wipe.db" 'PRAGMA user_version')" 2
}
