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
