#!/usr/bin/env bats
# The object's alarm: bakery-relay --due fires due alarms, re-arms while rows
# remain, and the re-arm guard stops it at 100 re-arms per object per UTC day.
# The clock is BAKERY_NOW: no test waits for real time.
load helpers
bats_require_minimum_version 1.5.0

T0=1796115600 # 2026-12-01T09:00:00Z

at() { BAKERY_NOW=$1 "${@:2}"; }
# Messages in bakery-events, whatever their state at the pinned clock.
queued() { bakery-queue stats | jq '."bakery-events" | .ready + .leased + .delayed'; }

@test "an alarm run sends what a killed command left in its outbox" {
	export BAKERY_NOW=$T0
	crash_at order.after_commit bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	id=$(echo "$output" | jq -r .id)
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 1
	assert_equal "$(bakery-show "order/$id" | jq -r .alarm.fire_at)" "2026-12-01T09:00:30.000Z"
	# Not due yet: nothing fires.
	run --separate-stderr at $((T0 + 29)) bakery-relay --due
	assert_success
	assert_output ""
	run --separate-stderr at $((T0 + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .address)" "order/$id"
	assert_equal "$(echo "$output" | jq .sent)" 1
	assert_equal "$(echo "$output" | jq .left)" 0
	assert_equal "$(queued)" 1
	assert_equal "$(bakery-show "order/$id" | jq .alarm.fire_at)" null
}

@test "the guard: 100 re-arms in a UTC day, the 101st refused and logged, the row kept" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	: >"$BATS_TEST_TMPDIR/relay.err"
	# An alarm run every 30 simulated seconds for 55 minutes.
	for k in $(seq 1 110); do
		BAKERY_NOW=$((T0 + 30 * k)) bakery-relay --due >>"$BATS_TEST_TMPDIR/relay.out" \
			2>>"$BATS_TEST_TMPDIR/relay.err" || true
	done
	assert_equal "$(jq -s '[.[] | select(.alarm == "rearmed")] | length' "$BATS_TEST_TMPDIR/relay.out")" 100
	assert_equal "$(jq -s '[.[] | select(.alarm == "guard")] | length' "$BATS_TEST_TMPDIR/relay.out")" 1
	# After the guard tripped, no run opened the object again.
	assert_equal "$(jq -s 'length' "$BATS_TEST_TMPDIR/relay.out")" 101
	run grep -c "alarm_guard object=order/$id sandbox=default rows=1" "$BATS_TEST_TMPDIR/relay.err"
	assert_output 1
	show=$(BAKERY_NOW=$((T0 + 3300)) bakery-show "order/$id")
	assert_equal "$(echo "$show" | jq .alarm.rearms_today)" 100
	assert_equal "$(echo "$show" | jq .alarm.fire_at)" null
	assert_equal "$(echo "$show" | jq '.outbox | length')" 1
	# One attempt by the command, then one per alarm run that fired.
	assert_equal "$(echo "$show" | jq '.outbox[0].attempts')" 102

	# The next UTC day the guard counts from 0: the object's next command
	# arms the alarm (uncounted) and the first alarm run re-arms once.
	day2=$((T0 + 86400))
	run --separate-stderr at $day2 bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	run --separate-stderr at $((day2 + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .alarm)" rearmed
	assert_equal "$(echo "$output" | jq .rearms_today)" 1

	# Once the fault clears, the object's next command sends the row.
	bakery-fault clear queue-refuses
	run --separate-stderr at $((day2 + 40)) bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	assert_equal "$(queued)" 1
}

@test "killed after the alarm's send: the row is sent once and the stale entry goes" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	bakery-fault clear queue-refuses
	crash_at alarm.after_send env BAKERY_NOW=$((T0 + 30)) bakery-relay --due
	assert_equal "$(queued)" 1
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	run --separate-stderr at $((T0 + 60)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .alarm)" disarmed
	run --separate-stderr at $((T0 + 90)) bakery-relay --due
	assert_output ""
	assert_equal "$(queued)" 1
}

@test "killed before the re-arm: the alarm is still found and the row still sent" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	crash_at alarm.before_rearm env BAKERY_NOW=$((T0 + 30)) bakery-relay --due
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 1
	run --separate-stderr at $((T0 + 31)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .alarm)" rearmed
	bakery-fault clear queue-refuses
	run --separate-stderr at $((T0 + 61)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq .sent)" 1
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	assert_equal "$(queued)" 1
}

@test "a command arms an alarm the guard disarmed, without counting it" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(bakery-order place --key k2 --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	run --separate-stderr at $((T0 + 10)) bakery-order place --key k2 --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	assert_equal "$(bakery-show "order/$id" | jq .alarm.rearms_today)" 0
	assert_equal "$(bakery-show "order/$id" | jq -r .alarm.fire_at)" "2026-12-01T09:00:30.000Z"
}

@test "the due scan opens only the due objects among 10,000" {
	export BAKERY_NOW=$T0
	# 10,000 objects with alarms not yet due, and 10 that are: the 10 made
	# with the real tools, the rest as files a scan of folders would open.
	bakery-fault set queue-refuses
	for i in $(seq 10); do place "c$i" >/dev/null 2>&1; done
	mkdir -p "$BAKERY_HOME/sandboxes/default/customer"
	for i in $(seq 10000); do : >"$BAKERY_HOME/sandboxes/default/customer/n$i.db"; done
	far=$(( (T0 + 3600) * 1000 ))
	sqlite3 "$BAKERY_HOME/alarms.db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) INSERT INTO alarms(sandbox, address, fire_at) SELECT 'default', 'customer/n' || i, $far FROM n"
	assert_equal "$(sqlite3 "$BAKERY_HOME/alarms.db" 'SELECT count(*) FROM alarms')" 10010
	# LeakSanitizer cannot run under ptrace: off for this one run.
	run --separate-stderr strace -f -qq -e trace=openat -o "$BATS_TEST_TMPDIR/trace" env ASAN_OPTIONS=detect_leaks=0 BAKERY_NOW=$((T0 + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -s length)" 10
	opened=$(grep -o '"[^"]*/default/[a-z]*/[^"]*\.db"' "$BATS_TEST_TMPDIR/trace" | sort -u | wc -l)
	assert_equal "$opened" 10
}

@test "--watch fires an alarm when it falls due and stops cleanly on SIGTERM" {
	export BAKERY_ALARM_DELAY=1
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	bakery-fault clear queue-refuses
	bakery-relay --watch >"$BATS_TEST_TMPDIR/watch.out" 2>"$BATS_TEST_TMPDIR/watch.err" &
	watch=$!
	# Generous: a loaded machine or a sanitizer build is slow to start.
	for _ in $(seq 300); do
		[ "$(bakery-show "order/$id" | jq '.outbox | length')" = 0 ] && break
		sleep 0.1
	done
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	assert_equal "$(queued)" 1
	kill -TERM "$watch"
	wait "$watch"
	assert_equal "$(jq -r .address "$BATS_TEST_TMPDIR/watch.out")" "order/$id"
}

# The index's commits are not synced: a power loss may take the last ones.
# A new boot (BAKERY_BOOT_ID stands for the kernel's) tells the next alarm
# run, which writes the entries back from the objects' alarms.
@test "an alarm entry a power loss took is written back by the first alarm run of the next boot" {
	export BAKERY_NOW=$T0 BAKERY_BOOT_ID=boot-one
	bakery-fault set queue-refuses
	id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	bakery-fault clear queue-refuses
	sqlite3 "$BAKERY_HOME/alarms.db" "DELETE FROM alarms"
	run --separate-stderr env BAKERY_BOOT_ID=boot-two BAKERY_NOW=$((T0 + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .address)" "order/$id"
	assert_equal "$(echo "$output" | jq .sent)" 1
	assert_equal "$(queued)" 1
}

@test "in the boot the index was written in, an alarm run reads no object to restore it" {
	export BAKERY_NOW=$T0 BAKERY_BOOT_ID=boot-one
	bakery-fault set queue-refuses
	bakery-order place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null 2>&1
	bakery-fault clear queue-refuses
	sqlite3 "$BAKERY_HOME/alarms.db" "DELETE FROM alarms"
	run --separate-stderr at $((T0 + 30)) bakery-relay --due
	assert_success
	assert_output ""
	assert_equal "$(queued)" 0
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a bad BAKERY_BOOT_ID is refused with 78" {
	run --separate-stderr env BAKERY_BOOT_ID=../x bakery-relay --due
	assert_failure 78
	assert_equal "$stderr" "bakery-relay: error: bad BAKERY_BOOT_ID: '../x': want [a-z0-9][a-z0-9_.-]{0,63} without '..'"
}

# entries ADDRESS: the alarm index's entries for ADDRESS (of the default
# sandbox).
entries() {
	sqlite3 "$BAKERY_HOME/alarms.db" \
		"SELECT count(*) FROM alarms WHERE sandbox = 'default' AND address = '$1'"
}

# of ADDRESS FILTER: FILTER of the relay's line for ADDRESS (relay.out).
of() { jq -r --arg a "$1" "select(.address == \$a) | $2" "$BATS_TEST_TMPDIR/relay.out"; }

# holds_new PID FILE: PID has FILE (a .new.KEY, the making's lock) open.
holds_new() { holds_file "$1" "$BAKERY_HOME/sandboxes/default/billing/$2"; }

# relay_stopped_at POINT: an alarm run at T0 + 30 s, its lines in
# relay.out, stopped at POINT; its pid in $relay.
relay_stopped_at() {
	BAKERY_STOP_AT=$1 BAKERY_NOW=$((T0 + 30)) bakery-relay --due \
		>"$BATS_TEST_TMPDIR/relay.out" &
	relay=$!
	stopped "$relay"
}

# unborn_payment: an order placed with queue-refuses set, its id in $id,
# and a pay of it killed before its rename: billing/ID's entry stands and
# no file is there.
unborn_payment() {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	crash_at make.before_rename bakery-order pay "$id"
}

# assert_payment_fires: once the fault clears, an alarm run at T0 + 60 s
# sends billing/$id's row.
assert_payment_fires() {
	bakery-fault clear queue-refuses
	run --separate-stderr at $((T0 + 60)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq "select(.address == \"billing/$id\") | .sent")" 1
}

# A new object's file gets its name at its first commit, after its alarm's
# entry: an alarm run that finds the entry and no file meanwhile must not
# take the entry for an object's that is gone.
@test "an alarm run beside a new order between its entry and its rename leaves the entry" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	BAKERY_STOP_AT=make.before_rename bakery-order place --customer ada --day "$DAY" \
		cardamom-bun=1 >"$BATS_TEST_TMPDIR/placed" 2>/dev/null &
	maker=$!
	stopped "$maker"
	run --separate-stderr at $((T0 + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .alarm)" making
	go_on "$maker"
	id=$(jq -r .id "$BATS_TEST_TMPDIR/placed")
	assert_equal "$(entries "order/$id")" 1
	bakery-fault clear queue-refuses
	run --separate-stderr at $((T0 + 31)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .address)" "order/$id"
	assert_equal "$(echo "$output" | jq .sent)" 1
	assert_equal "$(queued)" 1
}

@test "a maker that reaches its rename after an alarm run found no file keeps its entry" {
	unborn_payment
	# The alarm run reads that entry and finds no file; then a pay writes
	# its entry and stands before its rename; then the run goes on.
	relay_stopped_at alarm.before_gone
	BAKERY_STOP_AT=make.before_rename bakery-order pay "$id" >/dev/null 2>&1 &
	payer=$!
	stopped "$payer"
	go_on "$relay"
	assert_equal "$(of "billing/$id" .alarm | sort -u)" making
	go_on "$payer"
	assert_equal "$(entries "billing/$id")" 1
	assert_payment_fires
}

@test "a maker that comes while an alarm run holds its making's lock waits, then writes its own entry" {
	unborn_payment
	assert_equal "$(entries "billing/$id")" 1
	relay_stopped_at alarm.gone_held
	bakery-order pay "$id" >"$BATS_TEST_TMPDIR/paid" 2>/dev/null &
	payer=$!
	wait_for 10 holds_new "$payer" ".new.$id"
	go_on "$relay"
	go_on "$payer"
	assert_equal "$(of "billing/$id" .alarm)" gone
	assert_equal "$(jq -r .status "$BATS_TEST_TMPDIR/paid")" succeeded
	assert_equal "$(entries "billing/$id")" 1
	assert_payment_fires
}

@test "an alarm run that finds no folder for an entry leaves the entry a maker wrote meanwhile" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	# An entry an earlier billing/ID left, its folder gone (a power loss
	# keeps an entry whose object's making never reached the disk).
	sqlite3 "$BAKERY_HOME/alarms.db" "INSERT INTO alarms(sandbox, address, fire_at)
		VALUES ('default', 'billing/$id', $((T0 * 1000)))"
	[ ! -e "$BAKERY_HOME/sandboxes/default/billing" ]
	relay_stopped_at alarm.gone_held
	# The pay finds that entry and still writes its own.
	run --separate-stderr bakery-order pay "$id"
	assert_success
	go_on "$relay"
	assert_equal "$(entries "billing/$id")" 1
	assert_payment_fires
}

@test "an alarm run stopped before it looks for a maker fires the object made meanwhile" {
	unborn_payment
	relay_stopped_at alarm.before_gone
	run --separate-stderr bakery-order pay "$id"
	assert_success
	bakery-fault clear queue-refuses
	go_on "$relay"
	# Fired as any object once its file opened: its row sent, once.
	run of "billing/$id" .alarm
	refute_output --partial gone
	assert_equal "$(of "billing/$id" .sent | jq -s add)" 1
	assert_equal "$(bakery-show "billing/$id" | jq '.outbox | length')" 0
}

@test "bakery-status and bakery-doctor flag an armed alarm that has no index entry" {
	id=$(unindexed_order)
	run --separate-stderr bakery-status
	assert_failure 1
	assert_output --partial "sandbox default: order/$id: alarm armed for"
	assert_output --partial "with no entry in the alarm index: no alarm run will fire it"
	assert_equal "$(bakery-status --json | jq '.sandboxes[0].alarms_unfound')" 1
	assert_equal "$(bakery-status --json | jq '.sandboxes[0].busy[0].alarm_indexed')" false
	run --separate-stderr bakery-doctor
	assert_failure 1
	assert_line "FAIL  alarms: 1 armed alarm with no entry in the alarm index: no alarm run fires it (sandbox default: order/$id; bakery-relay ADDRESS sends its outbox)"
	# Sent by hand, the alarm is disarmed: nothing to flag.
	bakery-fault clear queue-refuses
	bakery-relay "order/$id" >/dev/null
	run --separate-stderr bakery-status
	assert_success
	run --separate-stderr bakery-doctor
	assert_line --partial "ok    alarms: 0 armed, each in the alarm index"
}

@test "an index that awaits a new boot's restore is not taken for lost entries" {
	export BAKERY_BOOT_ID=boot-one
	unindexed_order >/dev/null
	run --separate-stderr env BAKERY_BOOT_ID=boot-two bakery-status --json
	assert_equal "$(echo "$output" | jq '.sandboxes[0].alarms_unfound')" 0
	run --separate-stderr bakery-status --json
	assert_equal "$(echo "$output" | jq '.sandboxes[0].alarms_unfound')" 1
}

# places N orders in sandbox SANDBOX at the pinned clock, in one batch,
# while the queue refuses: N armed alarms, each with its index entry.
refused_orders() {
	local n=$1 sandbox=$2
	bakery-fault -s "$sandbox" set queue-refuses >/dev/null
	for i in $(seq "$n"); do
		echo "{\"cmd\":\"place\",\"customer\":\"c$i\",\"day\":\"$DAY\",\"items\":[\"cardamom-bun=1\"]}"
	done | bakery-order -s "$sandbox" --batch >/dev/null 2>&1
	bakery-fault -s "$sandbox" clear queue-refuses >/dev/null
}

# as_units_user CMD...: runs CMD as nobody, as the units' user runs it:
# the programs and the menu copied to a folder it can reach (the checkout
# may be in a private folder), the test's own folders (0700) passable.
as_units_user() {
	if [ ! -d "$BATS_TEST_TMPDIR/bin" ]; then
		chmod o+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR"
		mkdir -m 0755 "$BATS_TEST_TMPDIR/bin"
		cp "$(command -v bakery-relay)" "$(command -v bakery-status)" \
			"$BATS_TEST_TMPDIR/bin/"
		cp "$BAKERY_MENU" "$BATS_TEST_TMPDIR/menu.tsv"
		chmod 0644 "$BATS_TEST_TMPDIR/menu.tsv"
	fi
	runuser -u nobody -- env PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" \
		BAKERY_HOME="$BAKERY_HOME" BAKERY_MENU="$BATS_TEST_TMPDIR/menu.tsv" \
		BAKERY_NOW="$BAKERY_NOW" "$@"
}

# A sandbox made by root in a home owned by the units' user (bakery(7):
# so until the next boot's tmpfiles): its files are root's, 0600, and the
# relay, run as that user, can fire none of its alarms. They come first
# in the index, more than a page of them; they stop no other alarm.
@test "alarms a sandbox made by root holds stop no other: the rest fire, the rest counted" {
	[ "$(id -u)" = 0 ] || skip "needs root to make files another user cannot open"
	sqlite_only "the units' user opens the embedded queue"
	export BAKERY_NOW=$T0
	refused_orders 120 rootbox
	export BAKERY_NOW=$((T0 + 1))
	refused_orders 1 good
	good=$(bakery-show -s good --list | jq -r .)
	chown -R nobody "$BAKERY_HOME"
	chown -R root "$BAKERY_HOME/sandboxes/rootbox"
	assert_equal "$(sqlite3 "$BAKERY_HOME/alarms.db" 'SELECT count(*) FROM alarms')" 121
	export BAKERY_NOW=$((T0 + 40))
	run --separate-stderr as_units_user bakery-relay --due
	assert_failure 77
	# The good sandbox's row, refused when it was placed, is sent.
	assert_equal "$(echo "$output" | jq -c 'select(.sandbox == "good") | [.address, .sent, .alarm]')" \
		"[\"$good\",1,\"disarmed\"]"
	assert_equal "$(queued)" 1
	# Each of the others reported once, counted, its entry kept.
	assert_equal "$(echo "$output" | jq -s '[.[] | select(.alarm == "failed" and .status == 77 and .sandbox == "rootbox") | .address] | unique | length')" 120
	assert_equal "$(echo "$output" | jq -s length)" 121
	[[ "$stderr" == *"alarm_run objects=121 failed=120"* ]]
	[[ "$stderr" == *"error: 120 of 121 due alarms could not be fired, each left for the next run; the first: sandbox rootbox: order/"* ]]
	assert_equal "$(sqlite3 "$BAKERY_HOME/alarms.db" "SELECT count(*) FROM alarms WHERE sandbox = 'rootbox'")" 120
	# bakery-status counts them once they are past --max-age.
	run --separate-stderr env BAKERY_NOW=$((T0 + 400)) bakery-status --json
	assert_failure 1
	assert_equal "$(echo "$output" | jq -c '[.sandboxes[] | [.sandbox, .alarms_overdue]]')" '[["good",0],["rootbox",120]]'
	echo "$output" | jq -e '.attention | any(test("^sandbox rootbox: 120 alarms overdue, the oldest order/ord_[0-9a-f]+ due at 2026-12-01T09:00:30.000Z \\(370 s ago\\): no alarm run fired them; bakery-relay --due says why"))'
	run --separate-stderr env BAKERY_NOW=$((T0 + 400)) bakery-status --prom -
	assert_line 'bakery_alarms_overdue{sandbox="rootbox"} 120'
	assert_line 'bakery_alarms_overdue{sandbox="good"} 0'
	# The units' user sees no object of that sandbox, yet its alarms.
	BAKERY_NOW=$((T0 + 400)) run --separate-stderr as_units_user bakery-status --json
	assert_failure 1
	assert_equal "$(echo "$output" | jq -c '.sandboxes[] | select(.sandbox == "rootbox") | [.objects, .alarms_overdue]')" '[0,120]'
	# Once the files are the units' user's again, the next run fires them.
	chown -R nobody "$BAKERY_HOME/sandboxes/rootbox"
	export BAKERY_NOW=$((T0 + 70))
	run --separate-stderr as_units_user bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -s '[.[] | select(.sent == 1)] | length')" 120
	assert_equal "$(queued)" 121
}

# newer_schema N: N orders of sandbox old, due at T0 + 30 s, whose files
# a later bakery wrote (user_version 99): no alarm run can open them (78).
newer_schema() {
	BAKERY_NOW=$T0 refused_orders "$1" old
	local f
	for f in "$BAKERY_HOME"/sandboxes/old/order/*.db; do
		printf "ATTACH '%s' AS o; PRAGMA o.synchronous = OFF;" "$f"
		printf " PRAGMA o.user_version = 99; DETACH o;\n"
	done | sqlite3
}

@test "a run visits every due alarm once, past more than a page it cannot fire, and exits with the first failure" {
	newer_schema 120
	BAKERY_NOW=$((T0 + 1)) refused_orders 1 good
	good=$(bakery-show -s good --list | jq -r .)
	run --separate-stderr at $((T0 + 40)) bakery-relay --due
	assert_failure 78
	assert_equal "$(echo "$output" | jq -c 'select(.sandbox == "good") | [.address, .sent]')" "[\"$good\",1]"
	assert_equal "$(queued)" 1
	assert_equal "$(echo "$output" | jq -s '[.[] | select(.alarm == "failed" and .status == 78)] | length')" 120
	assert_equal "$(echo "$output" | jq -s '[.[].address] | unique | length')" 121
	[[ "$stderr" == *"error: 120 of 121 due alarms could not be fired"* ]]
	# The next run reads each of those once more, and nothing else.
	run --separate-stderr at $((T0 + 70)) bakery-relay --due
	assert_failure 78
	assert_equal "$(echo "$output" | jq -s '[.[].address] | unique | length')" 120
	assert_equal "$(echo "$output" | jq -s 'length')" 120
	assert_equal "$(echo "$output" | jq -s '[.[] | select(.alarm != "failed")] | length')" 0
	# Under --max-age they are not counted yet; past it they are.
	run --separate-stderr at $((T0 + 70)) bakery-status --json
	assert_equal "$(echo "$output" | jq '[.sandboxes[].alarms_overdue] | add')" 0
	run --separate-stderr at $((T0 + 40)) bakery-status --json --max-age 5
	assert_equal "$(echo "$output" | jq -c '[.sandboxes[] | [.sandbox, .alarms_overdue]]')" '[["good",0],["old",120]]'
}

@test "--watch goes on past an alarm it cannot fire, trying it again an alarm delay later" {
	export BAKERY_ALARM_DELAY=1
	newer_schema 1
	bakery-fault set queue-refuses
	id=$(place ada 2>/dev/null)
	bakery-fault clear queue-refuses
	bakery-relay --watch >"$BATS_TEST_TMPDIR/watch.out" 2>"$BATS_TEST_TMPDIR/watch.err" &
	watch=$!
	wait_for 30 grep -q "\"order/$id\"" "$BATS_TEST_TMPDIR/watch.out"
	sleep 2
	kill -0 "$watch"
	kill -TERM "$watch"
	wait "$watch"
	assert_equal "$(queued)" 1
	# Tried about once a second (once a run), not every 100 ms.
	tries=$(jq -s '[.[] | select(.alarm == "failed")] | length' "$BATS_TEST_TMPDIR/watch.out")
	[ "$tries" -ge 2 ] && [ "$tries" -le 6 ]
}
