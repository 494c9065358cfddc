#!/usr/bin/env bats
# A replicated home's commits recorded in the stream BAKERY_REPLICA before
# anything of them is answered (lib/store/capture.h), against a real
# nats-server started here on a free loopback port and stopped by pid.
load helpers
load ../nats
bats_require_minimum_version 1.5.0

teardown() {
	[ -z "${NATS_PID:-}" ] || nats_stop "$NATS_PID"
}

primary() {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-standby --primary --replicas 1 >/dev/null
}

nats_again() {
	"$NATS_SERVER_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js \
		-sd "$BATS_TEST_TMPDIR/nats/store" \
		-l "$BATS_TEST_TMPDIR/nats/server2.log" &
	NATS_PID=$!
	nats_wait_port "$NATS_PORT"
}

# The stream's records of the file at RELPATH (relative to the home).
records_of() {
	local tok=${1//./\~}
	tok=${tok//\//.}
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" scan BAKERY_REPLICA |
		jq -s --arg t "$tok" \
		'[.[] | select(.subject? and (.subject | endswith("." + $t)))] | length'
}

unsent() {
	sqlite3 "$BAKERY_HOME/$1" "select count(*) from bakery_replica_log"
}

@test "a primary's place is in the stream when it answers, and its files hold nothing unsent" {
	primary
	id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=2 | jq -r .id)
	[ "$(records_of "sandboxes/default/order/$id.db")" -ge 1 ]
	[ "$(records_of alarms.db)" -ge 1 ]
	assert_equal "$(unsent "sandboxes/default/order/$id.db")" 0
	assert_equal "$(unsent alarms.db)" 0
	# Each record numbered in its file, in order.
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" \
		"select seq from bakery_replica")" "$(records_of "sandboxes/default/order/$id.db")"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "the stream gone: a place is not answered (75) and its record stays; the retry with its key sends it first" {
	primary
	nats_stop "$NATS_PID"
	NATS_PID=
	run --separate-stderr bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$status" 75
	assert_equal "$output" ""
	[[ "$stderr" == *"not yet recorded"* ]]
	# Its first commit, the alarm index's entry, is kept with its record.
	assert_equal "$(unsent alarms.db)" 1
	nats_again
	run --separate-stderr bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	f=sandboxes/default/order/$(jq -r .id <<<"$output").db
	for f in "$f" alarms.db; do
		assert_equal "$(unsent "$f")" 0
		assert_equal "$(sqlite3 "$BAKERY_HOME/$f" "select seq from bakery_replica")" "$(records_of "$f")"
	done
}

@test "a standby's home refuses every writer with 69 and says why" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-standby --standby >/dev/null
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$status" 69
	[[ "$stderr" == *"standby"* ]]
	run --separate-stderr bakery-consume --drain
	assert_equal "$status" 69
	run --separate-stderr bakery-relay --all
	assert_equal "$status" 69
	# Those that only look still look.
	run bakery-order list
	assert_success
}

@test "a .replica bakery did not write is refused (78) by every program, and a primary's queue is nats://" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-standby --primary --replicas 1 >/dev/null
	unset BAKERY_QUEUE
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$status" 78
	[[ "$stderr" == *"nats://"* ]]
	printf 'role primary\nhost ../../etc\nepoch x\n' >"$BAKERY_HOME/.replica"
	for cmd in "bakery-order list" "bakery-status" "bakery-show kitchen/board"; do
		run $cmd
		assert_equal "$status" 78
	done
	rm "$BAKERY_HOME/.replica"
	ln -s /etc/passwd "$BAKERY_HOME/.replica"
	run bakery-order list
	assert_equal "$status" 78
}

@test "a home that is not replicated records nothing: no replica tables in its files" {
	id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	run sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" .tables
	refute_output --partial bakery_replica
	run sqlite3 "$BAKERY_HOME/alarms.db" .tables
	refute_output --partial bakery_replica
}

@test "a wipe on a primary records the sandbox's removal before it removes it" {
	primary
	bakery-order -s s1 place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-wipe -s s1 >/dev/null
	[ ! -e "$BAKERY_HOME/sandboxes/s1" ]
	assert_equal "$(records_of sandboxes/s1)" 1
}

# retried KEY: the place of KEY again, which must answer; its file and
# the alarm index hold nothing unsent, and each has one record in the
# stream a commit it numbered.
retried() {
	run --separate-stderr bakery-order place --key "$1" --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	local f
	f=sandboxes/default/order/$(jq -r .id <<<"$output").db
	for f in "$f" alarms.db; do
		assert_equal "$(unsent "$f")" 0
		assert_equal "$(sqlite3 "$BAKERY_HOME/$f" "select seq from bakery_replica")" "$(records_of "$f")"
	done
}

@test "killed after a local commit, before its record: the retry with its key records it once and answers" {
	primary
	# A place commits the alarm index's entry first, then the order's
	# file: killed before the first one's record, then the second's.
	crash_at replica.before_send bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	retried k1
	crash_at replica.before_send:2 bakery-order place --key k2 --customer ada --day "$DAY" cardamom-bun=1
	retried k2
}

@test "killed after its record, before its note and its answer: the retry sends it again and the stream keeps it once" {
	primary
	crash_at replica.after_send bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	retried k1
	crash_at replica.after_send:2 bakery-order place --key k2 --customer ada --day "$DAY" cardamom-bun=1
	retried k2
}

@test "bakery-status (--json, --prom) and bakery-doctor show the role, the lease and each standby's lag" {
	primary
	standby=$BATS_TEST_TMPDIR/standby
	bakery-standby -H "$standby" --standby >/dev/null
	bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-standby -H "$standby" --once >/dev/null
	host=$(sed -n 's/^host //p' "$standby/.replica")
	# One more order: the standby is behind by its records.
	bakery-order place --customer bea --day "$DAY" cardamom-bun=1 >/dev/null
	run --separate-stderr bakery-status --json
	[ "$(jq -r .replica.role <<<"$output")" = primary ]
	[ "$(jq -r .replica.lease.host <<<"$output")" = "$(sed -n 's/^host //p' "$BAKERY_HOME/.replica")" ]
	[ "$(jq -r --arg h "$host" '.replica.standbys[] | select(.host == $h) | .records' <<<"$output")" -ge 2 ]
	run bakery-status --prom -
	assert_line --regexp "^bakery_replica_lag_records\{standby=\"$host\"\} [1-9][0-9]*$"
	assert_line 'bakery_replica_role{role="primary"} 1'
	run bakery-doctor
	assert_line --regexp '^ok    replica: primary'
	sleep 2
	run bakery-doctor --max-lag 1
	assert_failure 1
	assert_line --regexp '^FAIL  replica: replica: standby [0-9a-f]{16} is [0-9]+ s behind'
	run bakery-doctor --max-lag 0
	assert_failure 64
	# Caught up, the standby's own status says so.
	bakery-standby -H "$standby" --once >/dev/null
	run --separate-stderr bakery-status -H "$standby" --json
	[ "$(jq -r .replica.role <<<"$output")" = standby ]
	[ "$(jq -r --arg h "$host" '.replica.standbys[] | select(.host == $h) | .records' <<<"$output")" = 0 ]
}

@test "a lease no primary renews needs attention" {
	primary
	bakery-standby --primary --lease-seconds 2 >/dev/null
	sleep 3
	run --separate-stderr bakery-status --json
	assert_failure 1
	jq -e '.attention | any(test("no primary renews it"))' <<<"$output"
}

# places N KEY: N --batch lines placing orders with keys KEY-I.
places() {
	local i
	for i in $(seq "$1"); do
		printf '{"cmd":"place","customer":"c%d","day":"%s","items":["cardamom-bun=1"],"key":"%s-%d"}\n' \
			"$((i % 7))" "$DAY" "$2" "$i"
	done
}

# traced_batch N KEY: N places (keys KEY-1..) in one --batch under
# strace, every line answered 0; its syncs in $BATS_TEST_TMPDIR/trace,
# its answers in $BATS_TEST_TMPDIR/placed (LeakSanitizer cannot run
# under ptrace: SANITIZE=1).
traced_batch() {
	places "$1" "$2" >"$BATS_TEST_TMPDIR/in"
	strace -f -y -e trace=fsync,fdatasync -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order --batch \
		<"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/placed"
	assert_equal "$(jq -s 'map(select(.exit == 0)) | length' "$BATS_TEST_TMPDIR/placed")" "$1"
}

@test "a --batch's records go together: every line answered once the stream took its group's, the standby has every file" {
	primary
	bakery-order gateway test >/dev/null
	standby=$BATS_TEST_TMPDIR/standby
	bakery-standby -H "$standby" --standby >/dev/null
	# 70 lines: a group of 64, then one of 6.
	places 70 k | bakery-order --batch >"$BATS_TEST_TMPDIR/placed"
	jq -c '{cmd: "pay", order: .result.id}' "$BATS_TEST_TMPDIR/placed" |
		bakery-order --batch >"$BATS_TEST_TMPDIR/paid"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/placed" "$BATS_TEST_TMPDIR/paid" | jq -s 'map(select(.exit == 0)) | length')" 140
	run --separate-stderr bakery-standby -H "$standby" --once
	assert_success
	assert_equal "$(cd "$standby" && find sandboxes -name '*.db' | sort)" \
		"$(cd "$BAKERY_HOME" && find sandboxes -name '*.db' | sort)"
	for id in $(jq -r .result.id "$BATS_TEST_TMPDIR/placed" | head -3); do
		assert_equal "$(bakery-show -H "$standby" "order/$id" | jq -c .state)" \
			"$(bakery-show "order/$id" | jq -c .state)"
	done
}

@test "the stream gone during a --batch: no line answered 0; the lines again with their keys are" {
	primary
	nats_stop "$NATS_PID"
	NATS_PID=
	places 3 g | bakery-order --batch >"$BATS_TEST_TMPDIR/out" || true
	assert_equal "$(jq -s 'map(select(.exit == 0)) | length' "$BATS_TEST_TMPDIR/out")" 0
	nats_again
	run --separate-stderr bash -c "$(declare -f places); DAY=$DAY places 3 g | bakery-order --batch"
	assert_success
	assert_equal "$(jq -s 'map(select(.exit == 0)) | length' <<<"$output")" 3
	# The group committed here before its records failed: the lines
	# again find their orders, whose files send what they hold as they
	# are opened.
	for f in $(cd "$BAKERY_HOME" && find sandboxes -name '*.db'); do
		assert_equal "$(unsent "$f")" 0
	done
	# The alarm index, which the lines again did not write, sends its
	# records with its next writer's (a new host rebuilds it from the
	# objects' alarms in any case: alarm_index_boot).
	bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	assert_equal "$(unsent alarms.db)" 0
	[ "$(records_of alarms.db)" -ge 4 ]
}

@test "the alarm index's commits: synced once a --batch group, and before a command's record is sent" {
	primary
	bakery-order gateway test >/dev/null
	bakery-order place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	# syncs N KEY: the syncs of the index's log in a --batch of N
	# places (traced_batch).
	syncs() {
		traced_batch "$1" "$2"
		# A checkpoint syncs the log, the file, the log: not counted.
		local wal db
		wal=$(grep -c 'alarms\.db-wal>' "$BATS_TEST_TMPDIR/trace" || true)
		db=$(grep -c 'alarms\.db>' "$BATS_TEST_TMPDIR/trace" || true)
		echo $((wal - 2 * db))
	}
	# 6 lines are one group, 70 two (64, then 6): 64 more commits of
	# the index, one more sync of its log (a sync a line: 64 more).
	six=$(syncs 6 t)
	seventy=$(syncs 70 s)
	[ "$six" -ge 1 ] && [ "$seventy" -ge 2 ] && [ "$seventy" -le $((six + 3)) ]
	assert_equal "$(unsent alarms.db)" 0
	[ "$(records_of alarms.db)" -ge 77 ]
	# synced_first ARGS...: bakery-order ARGS, traced: the index's log
	# synced before the first of its records is published.
	synced_first() {
		local trace=$BATS_TEST_TMPDIR/one.trace synced sent
		strace -f -y -s 200 -e trace=fdatasync,sendto,write -o "$trace" \
			env ASAN_OPTIONS=detect_leaks=0 bakery-order "$@" >/dev/null
		synced=$(grep -n 'fdatasync([0-9]*<[^>]*alarms\.db-wal>' "$trace" | head -1 | cut -d: -f1)
		sent=$(grep -n 'PUB bakery\.replica\.[^ ]*\.alarms~db ' "$trace" | head -1 | cut -d: -f1)
		[ -n "$synced" ] && [ -n "$sent" ] && [ "$synced" -lt "$sent" ]
	}
	# One command: the index's commit synced before its record goes.
	synced_first place --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$(unsent alarms.db)" 0
	# A place killed after the index's commit, before its record: the
	# next program that opens the index syncs it before it sends what
	# the killed one left (a commit no sync made durable).
	crash_at replica.before_send bakery-order place --key k1 --customer ada \
		--day "$DAY" cardamom-bun=1
	[ "$(unsent alarms.db)" -ge 1 ]
	synced_first place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_equal "$(unsent alarms.db)" 0
}

@test "a born file's log, still empty, is not synced when its birth's record goes: an order's log synced once a --batch place (its outbox's note)" {
	primary
	bakery-order gateway test >/dev/null
	traced_batch 6 e
	assert_equal "$(grep -c '/order/ord_[0-9a-f]*\.db-wal>' "$BATS_TEST_TMPDIR/trace")" 6
	# Every order's records in the stream: its birth, its outbox's note.
	for id in $(jq -r .result.id "$BATS_TEST_TMPDIR/placed"); do
		[ "$(records_of "sandboxes/default/order/$id.db")" -ge 1 ]
	done
}
