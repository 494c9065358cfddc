#!/usr/bin/env bats
# A standby home (bakery-standby(1), lib/replica/): the primary's commits
# recorded in BAKERY_REPLICA and applied on a second home, the lease, the
# takeover and its fence, against a real nats-server on a free loopback
# port. The primary is BAKERY_HOME; the standby is $STANDBY, a home of
# its own on the same server, as a second host's would be.
load helpers
load ../nats
bats_require_minimum_version 1.5.0

teardown() {
	local p
	for p in "${LOOPS[@]:-}"; do
		[ -z "$p" ] || { kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; } || true
	done
	[ -z "${NATS_PID:-}" ] || nats_stop "$NATS_PID"
}

# One server, the queue on it, an empty standby home beside the primary.
start() {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	STANDBY=$BATS_TEST_TMPDIR/standby
	LOOPS=()
}

# start, then BAKERY_HOME made the primary and $STANDBY its standby.
pair() {
	start
	bakery-standby --primary >/dev/null
	bakery-standby -H "$STANDBY" --standby >/dev/null
}

tool() { "$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" "$@"; }

# conf HOME KEY: a line of HOME/.replica.
conf() { sed -n "s/^$2 //p" "$1/.replica"; }

# The stream's subjects, as a JSON array.
subjects() { tool info BAKERY_REPLICA | jq -c .config.subjects; }

# record FILE SEQ VERSION BODY [HEADER=VALUE...]: publishes a record of
# FILE (relative to the home) in the primary's epoch, BODY a file.
record() {
	local file=$1 seq=$2 version=$3 body=$4 epoch tok
	shift 4
	epoch=$(conf "$BAKERY_HOME" epoch)
	tok=$(printf '%s' "$file" | sed -e 's/\./~/g' -e 's|/|.|g')
	tool pubfile "bakery.replica.$epoch.$tok" "$body" \
		"Nats-Msg-Id=test:$file:$seq:$RANDOM$RANDOM" "Bakery-File=$file" \
		"Bakery-Seq=$seq" "Bakery-Version=$version" \
		"Bakery-Host=0123456789abcdef" "$@" >/dev/null
}

# A changeset of a fault set in a sandbox's file, made with SQLite's
# session extension on a copy of such a file, in $BATS_TEST_TMPDIR/fault.cs;
# prints the file's schema version.
fault_changeset() {
	local other=$BATS_TEST_TMPDIR/other
	BAKERY_HOME=$other BAKERY_QUEUE='' bakery-fault set queue-refuses
	cp "$other/sandboxes/default/sandbox.db" "$BATS_TEST_TMPDIR/copy.db"
	sqlite3 "$BATS_TEST_TMPDIR/copy.db" >/dev/null <<EOF
.session open main s
.session attach faults
INSERT INTO faults VALUES ('refuses:crm', 1);
.session changeset $BATS_TEST_TMPDIR/fault.cs
EOF
	sqlite3 "$BATS_TEST_TMPDIR/copy.db" "PRAGMA user_version"
}

# Every table of every file of home $1 but queue.db and bakery_replica*,
# as SQLite dumps them, file by file; the lines of a file sorted, as a
# table keyed by text gets its hidden rowids in the order of the record's
# changes, which no query of bakery's reads.
contents() {
	local f
	(cd "$1" && find . -name '*.db' ! -name queue.db | sort) | while read -r f; do
		echo "== $f"
		sqlite3 "$1/$f" .dump | grep -v bakery_replica | sort
	done
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "usage: the modes exclude each other, and the numbers are checked" {
	local args
	for args in "--primary --standby" "--standby --promote" \
	    "--primary --replicas 4" "--primary --replicas 0" "--replicas 2" \
	    "--lease-seconds 1" "--lease-seconds 3601" "--standby --lease-seconds 5" \
	    "--once --promote" "--auto --primary" "extra"; do
		# shellcheck disable=SC2086 # the arguments are words
		run --separate-stderr bakery-standby $args
		[ "$status" -eq 64 ] || fail "$args: exit $status"
		[[ "$stderr" == *"usage: bakery-standby"* ]] || fail "$args: $stderr"
	done
}

@test "--primary and --standby make .replica, the stream and the lease; each again is the same" {
	start
	run --separate-stderr bakery-standby --primary
	assert_success
	local host epoch
	host=$(jq -r .host <<<"$output")
	epoch=$(jq -r .epoch <<<"$output")
	[[ "$host" =~ ^[0-9a-f]{16}$ && "$epoch" =~ ^[0-9a-f]{16}$ ]]
	[ "$(jq -r .role <<<"$output")" = primary ]
	until1=$(jq .until_ms <<<"$output")
	[ "$(stat -c %a "$BAKERY_HOME/.replica")" = 600 ]
	assert_equal "$(conf "$BAKERY_HOME" role) $(conf "$BAKERY_HOME" host) $(conf "$BAKERY_HOME" epoch)" "primary $host $epoch"
	assert_equal "$(subjects)" "[\"bakery.replica.$epoch.>\"]"
	sleep 0.01
	run --separate-stderr bakery-standby --primary
	assert_success
	assert_equal "$(jq -r '.host + " " + .epoch' <<<"$output")" "$host $epoch"
	[ "$(jq .until_ms <<<"$output")" -gt "$until1" ]

	run --separate-stderr bakery-standby -H "$STANDBY" --standby
	assert_success
	local shost
	shost=$(jq -r .host <<<"$output")
	[ "$(jq -c '[.role, .epoch]' <<<"$output")" = '["standby","none"]' ]
	[ "$shost" != "$host" ]
	run --separate-stderr bakery-standby -H "$STANDBY" --standby
	assert_success
	assert_equal "$(jq -r .host <<<"$output")" "$shost"

	# What each role refuses.
	run --separate-stderr bakery-standby --standby
	[ "$status" -eq 78 ]
	run --separate-stderr bakery-standby -H "$STANDBY" --primary
	[ "$status" -eq 78 ]
	[[ "$stderr" == *"--promote"* ]]
	run --separate-stderr bakery-standby -H "$STANDBY" --promote --queue "sqlite:$BATS_TEST_TMPDIR/q.db"
	[ "$status" -eq 78 ]
	run --separate-stderr bakery-order -H "$STANDBY" place --customer ada --day "$DAY" cardamom-bun=1
	[ "$status" -eq 69 ]
	[[ "$stderr" == *"standby"* ]]
	[ ! -e "$STANDBY/sandboxes/default/order" ]
	# A primary's queue is nats://; a home with files is no standby.
	local full=$BATS_TEST_TMPDIR/full
	run --separate-stderr bakery-standby -H "$full" --primary --queue "sqlite:$full/queue.db"
	[ "$status" -eq 78 ]
	BAKERY_HOME=$full BAKERY_QUEUE='' place ada >/dev/null
	run --separate-stderr bakery-standby -H "$full" --standby
	[ "$status" -eq 78 ]
	[[ "$stderr" == *"empty home"* ]]
	[ ! -e "$full/.replica" ]
}

@test "orders placed and paid on the primary are on the standby after --once, the same rows" {
	pair
	local ids=() i
	for i in 1 2 3; do
		ids+=("$(paid_order "ada$i")")
	done
	bakery-consume --drain >/dev/null
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_success
	[ "$(jq .applied <<<"$output")" -gt 10 ]
	[ "$(jq -c '[.skipped, .refused]' <<<"$output")" = '[0,0]' ]
	assert_equal "$(contents "$STANDBY")" "$(contents "$BAKERY_HOME")"
	for i in "${ids[@]}"; do
		assert_equal "$(bakery-show -H "$STANDBY" "order/$i")" "$(bakery-show "order/$i")"
	done
	# Nothing more: a second run applies nothing.
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_success
	assert_equal "$output" '{"applied":0,"skipped":0,"refused":0}'
	[ "$(conf "$STANDBY" epoch)" = "$(conf "$BAKERY_HOME" epoch)" ]
}

# once_settled: bakery-standby --once on $STANDBY until it is not 75 (a
# gap met while a killed run's records wait to be delivered again, up to
# the consumer's 5 s); its last output and status as run leaves them.
once_settled() {
	local i
	for i in $(seq 40); do
		run --separate-stderr bakery-standby -H "$STANDBY" --once
		[ "$status" -eq 75 ] || return 0
		sleep 0.5
	done
}

@test "a standby killed mid-batch, between its files' commits or before its acks, loses and doubles nothing" {
	pair
	local i
	for i in 1 2 3 4 5 6; do
		printf '{"cmd":"place","customer":"c%s","day":"%s","items":["cardamom-bun=1"],"key":"k%s"}\n' \
			"$i" "$DAY" "$i"
	done | bakery-order --batch >"$BATS_TEST_TMPDIR/placed"
	jq -c '{cmd: "pay", order: .result.id}' "$BATS_TEST_TMPDIR/placed" |
		bakery-order --batch >/dev/null
	bakery-consume --drain >/dev/null
	# Killed once the first batch's second file is committed: its
	# records are skipped when delivered again, the rest applied.
	crash_at standby.after_file:2 bakery-standby -H "$STANDBY" --once
	once_settled
	assert_success
	[ "$(jq .skipped <<<"$output")" -ge 2 ]
	[ "$(jq .refused <<<"$output")" -eq 0 ]
	assert_equal "$(contents "$STANDBY")" "$(contents "$BAKERY_HOME")"

	# Killed after every file of its batch is committed, before its
	# third ack: two acked, the others skipped, none applied twice (a
	# row inserted twice would be a conflict, 65).
	place ada >/dev/null
	place bo >/dev/null
	crash_at standby.before_ack:3 bakery-standby -H "$STANDBY" --once
	once_settled
	assert_success
	[ "$(jq .applied <<<"$output")" -eq 0 ]
	[ "$(jq .skipped <<<"$output")" -ge 2 ]
	assert_equal "$(contents "$STANDBY")" "$(contents "$BAKERY_HOME")"
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_equal "$output" '{"applied":0,"skipped":0,"refused":0}'
}

@test "--promote: refused while the lease is held, --auto waits for its end; the old primary is fenced" {
	pair
	id=$(paid_order ada)
	# The lease renewed for 3 seconds from now.
	local until old host
	until=$(bakery-standby --primary --lease-seconds 3 | jq .until_ms)
	old=$(conf "$BAKERY_HOME" epoch)
	host=$(conf "$BAKERY_HOME" host)
	run --separate-stderr bakery-standby -H "$STANDBY" --promote
	[ "$status" -eq 75 ]
	[[ "$stderr" == *"held by host $host (epoch $old) until 20"* ]]
	[ "$(conf "$STANDBY" role)" = standby ]
	assert_equal "$(subjects)" "[\"bakery.replica.$old.>\"]"
	run --separate-stderr bakery-standby -H "$STANDBY" --promote --auto
	assert_success
	[ "$(date +%s%3N)" -ge "$until" ] # it waited for the lease's end
	[ "$(jq -r .promoted <<<"$output")" = true ]
	[ "$(jq .applied <<<"$output")" -gt 0 ]
	local new
	new=$(jq -r .epoch <<<"$output")
	[ "$new" != "$old" ]
	assert_equal "$(conf "$STANDBY" role) $(conf "$STANDBY" epoch)" "primary $new"
	assert_equal "$(subjects)" "[\"bakery.replica.$new.>\"]"
	assert_equal "$(bakery-show -H "$STANDBY" "order/$id")" "$(bakery-show "order/$id")"
	# A record of the old epoch finds no stream; nor does the old
	# primary's next command, which stops with 69.
	echo x >"$BATS_TEST_TMPDIR/x"
	run tool pubfile "bakery.replica.$old.alarms~db" "$BATS_TEST_TMPDIR/x"
	assert_failure
	[[ "$output" == *"no responders"* ]]
	run --separate-stderr bakery-order place --customer bo --day "$DAY" cardamom-bun=1
	[ "$status" -eq 69 ]
	# The new primary writes, and the old one, made primary again, is
	# told it was taken over from.
	run --separate-stderr bakery-order -H "$STANDBY" place --customer cy --day "$DAY" cardamom-bun=1
	assert_success
	run --separate-stderr bakery-standby --primary
	[ "$status" -eq 69 ]
	[[ "$stderr" == *"is no more"* ]]
}

@test "the loops: the primary renews its lease; killed, the standby with --auto takes over and goes on as the primary" {
	start
	bakery-standby --primary --lease-seconds 2 >/dev/null
	bakery-standby -H "$STANDBY" --standby >/dev/null
	# As its unit runs it on either host: --auto, which a primary takes too.
	bakery-standby --auto --lease-seconds 2 2>"$BATS_TEST_TMPDIR/primary.err" &
	LOOPS+=($!)
	local primary=$!
	bakery-standby -H "$STANDBY" --auto --lease-seconds 2 \
		>"$BATS_TEST_TMPDIR/standby.out" 2>"$BATS_TEST_TMPDIR/standby.err" &
	LOOPS+=($!)
	id=$(paid_order ada)
	# One process applies a standby's home at a time.
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	[ "$status" -eq 75 ]
	[[ "$stderr" == *"another bakery-standby applies"*"bakery-standby (pid "* ]]
	# The lease is renewed past its first two seconds: no takeover.
	sleep 3
	[ ! -s "$BATS_TEST_TMPDIR/standby.out" ]
	[ "$(conf "$STANDBY" role)" = standby ]
	[ -e "$STANDBY/sandboxes/default/order/$id.db" ] # applied as it came
	kill -KILL "$primary"
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/standby.out" ] && break
		sleep 0.1
	done
	run jq -r '.promoted' "$BATS_TEST_TMPDIR/standby.out"
	assert_output true
	[ "$(conf "$STANDBY" role)" = primary ]
	# It renews the lease now: the old primary's loop, started again,
	# finds it taken and stops with 69.
	sleep 2.5
	run --separate-stderr bakery-standby --lease-seconds 2
	[ "$status" -eq 69 ]
	[[ "$stderr" == *"$(conf "$STANDBY" host)"* ]]
}

@test "hostile records are refused and nothing is written outside the home; a record twice is applied once; a gap stops with 70" {
	pair
	local v
	v=$(fault_changeset)
	head -c 100 /dev/urandom >"$BATS_TEST_TMPDIR/garbage"
	record ../../etc/passwd 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	record ../outside.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	record sandboxes/default/nokind/x.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/garbage"
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_success
	assert_equal "$output" '{"applied":1,"skipped":1,"refused":4}'
	[ "$(grep -c replica_refused <<<"$stderr")" = 4 ]
	[ ! -e "$BATS_TEST_TMPDIR/outside.db" ] && [ ! -e "$BATS_TEST_TMPDIR/etc" ]
	[ ! -e "$STANDBY/sandboxes/default/nokind" ]
	assert_equal "$(bakery-fault -H "$STANDBY" list | jq -r .name)" refuses:crm
	# Terminated, never delivered again: a second run has nothing.
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_equal "$output" '{"applied":0,"skipped":0,"refused":0}'

	# Record 3 of a file whose last is 1: a gap, which stops the standby
	# and is given back for the next run, which stops there again.
	record sandboxes/default/sandbox.db 3 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	[ "$status" -eq 70 ]
	[[ "$stderr" == *"sandbox.db': record 3 comes after record 1: record 2 is missing"* ]]
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	[ "$status" -eq 70 ]
}

@test "a record that conflicts with the standby's rows stops it with 65, nothing applied" {
	pair
	local v
	v=$(fault_changeset)
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	# The same insert as record 2: the row is there already.
	record sandboxes/default/sandbox.db 2 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	[ "$status" -eq 65 ]
	[[ "$stderr" == *"record 2 conflicts"*"table faults"* ]]
	assert_equal "$(sqlite3 "$STANDBY/sandboxes/default/sandbox.db" "SELECT seq FROM bakery_replica")" 1
}

@test "a sandbox wiped on the primary is removed on the standby" {
	pair
	local v epoch
	v=$(fault_changeset)
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	epoch=$(conf "$BAKERY_HOME" epoch)
	: >"$BATS_TEST_TMPDIR/empty"
	tool pubfile "bakery.replica.$epoch.sandboxes.default" "$BATS_TEST_TMPDIR/empty" \
		Nats-Msg-Id=wipe Bakery-File=sandboxes/default Bakery-Op=remove \
		Bakery-Host=0123456789abcdef >/dev/null
	# Made again after the wipe: its records start from 1.
	record sandboxes/default/sandbox.db 1 "$v" "$BATS_TEST_TMPDIR/fault.cs"
	run --separate-stderr bakery-standby -H "$STANDBY" --once
	assert_success
	assert_equal "$output" '{"applied":3,"skipped":0,"refused":0}'
	assert_equal "$(bakery-fault -H "$STANDBY" list | jq -r .name)" refuses:crm
	[ ! -e "$STANDBY/.wipe-standby-default" ]
}

@test "bakery-standby.1 examples work, on NATS" {
	start
	local script
	script=$(awk '
		/^\.Sh / { ex = ($2 == "EXAMPLES"); lit = 0; next }
		ex && /^\.Bd -literal/ { lit = 1; next }
		ex && lit && /^\.Ed/ { lit = 0; next }
		ex && lit { print }
	' "$TOP/docs/man/bakery-standby.1" | sed -e 's/\\&//g' -e 's/\\e/\\/g')
	[ -n "$script" ]
	cd "$BATS_TEST_TMPDIR"
	run bash -euo pipefail -c "$script" </dev/null
	[ "$status" -eq 0 ] || printf 'examples:\n%s\n' "$script" >&2
	assert_success
	[[ "$output" == *"exit 75"* && "$output" == *'"promoted":true'* ]]
}
