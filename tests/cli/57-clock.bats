#!/usr/bin/env bats
# Clocks that jump: the wall clock steps back (an NTP step of an hour) or
# forward (a day) between two commands. BAKERY_NOW is the lever: each
# command reads the clock it is given, as each would read a stepped wall
# clock. Nothing is lost or applied twice, a lease is never given to a
# second consumer early, the guard counts each UTC day once.
# Each test exports its own BAKERY_NOW, in its own subshell, on purpose.
# shellcheck disable=SC2030,SC2031
load helpers
bats_require_minimum_version 1.5.0

T0=1796176800 # 2026-12-02T02:00:00Z
HOUR=3600

at() { BAKERY_NOW=$1 "${@:2}"; }

# settles_at T ID [ARGS...]: a consumer at T (with ARGS) acks all it gets,
# and order ID's effects are there once, with nothing left in the queue.
settles_at() {
	local t=$1 id=$2
	run --separate-stderr at "$t" bakery-consume "${@:3}"
	assert_success
	local out=$output
	run jq -sc '[.[] | .outcome] | unique' <<<"$out"
	assert_output '["acked"]'
	at "$t" assert_effects_once "$id"
	[ -z "$(queue_ids)" ]
	output=$out
}

@test "clock back an hour: a held lease stays held for its visibility, then comes back, once" {
	sqlite_only "the lease's clock is BAKERY_NOW here, the server's on NATS"
	export BAKERY_NOW=$T0
	id=$(paid_order ada)
	crash_at consume.before_ack bakery-consume --visibility 30
	back=$((T0 - HOUR))
	# The step back: what the killed consumer's batch sent is ready at
	# once (not an hour later), and its leased OrderPlaced is still held.
	run --separate-stderr at $back bakery-consume --visibility 30
	assert_success
	run jq -sc '[.[] | [.type, .delivery, .outcome]]' <<<"$output"
	assert_output '[["OrderPaid",1,"acked"]]'
	# Within the 30 s the lease still had: nobody else holds it.
	run --separate-stderr at $((back + 20)) bakery-consume --visibility 30
	assert_success
	assert_output ""
	# Its visibility over, measured from the step: delivered again, not
	# an hour later.
	settles_at $((back + 31)) "$id" --visibility 30
	run jq -sc '[.[] | select(.type == "OrderPlaced") | [.delivery, .status, .outcome]]' <<<"$output"
	assert_output '[[2,200,"acked"]]'
}

@test "clock back an hour: a retry delay is not stretched by the step" {
	sqlite_only "the retry delay's clock is BAKERY_NOW here, the server's on NATS"
	export BAKERY_NOW=$T0
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 60
	assert_success
	bakery-fault clear refuses:kitchen
	back=$((T0 - HOUR))
	# The first receive after the step starts the delay again, whole.
	run --separate-stderr at $back bakery-consume --retry-delay 60
	assert_success
	assert_output ""
	run --separate-stderr at $((back + 59)) bakery-consume --retry-delay 60
	assert_success
	assert_output ""
	settles_at $((back + 61)) "$id" --retry-delay 60
}

@test "a wipe while the clock ran a day ahead, then the clock set right: new orders are not fenced off" {
	export BAKERY_NOW=$T0
	paid_order ada >/dev/null
	run --separate-stderr at $((T0 + 86400)) bakery-wipe --all
	assert_success
	id=$(paid_order bo)
	settles_at "$T0" "$id"
	# The next wipe still drops what was recorded before it.
	run --separate-stderr bakery-wipe --all
	assert_success
	assert_equal "$(bakery-show --list | wc -l)" 0
	[ -z "$(queue_ids)" ]
}

# A paid order settled, then the sandbox wiped, at the clock given.
settled_then_wiped() {
	paid_order ada >/dev/null
	bakery-consume >/dev/null
	run --separate-stderr bakery-wipe --all
	assert_success
}

@test "clock back an hour after the wipe: an order placed then is not fenced off" {
	export BAKERY_NOW=$T0
	settled_then_wiped
	# NTP steps the clock back an hour: the next order's events carry a
	# time before the wipe's fence.
	export BAKERY_NOW=$((T0 - HOUR))
	id=$(paid_order bo)
	settles_at "$BAKERY_NOW" "$id"
}

@test "a wipe's clock floor that is not a time is no floor: orders go on, stamped by the clock" {
	export BAKERY_NOW=$T0
	settled_then_wiped
	# The floor the wipe left: its time in milliseconds, one line.
	assert_equal "$(cat "$BAKERY_HOME/.default.lock")" "$(printf %020d $((T0 * 1000)))"
	local t=$((T0 + HOUR))
	for floor in 'junk\n' '17961768000000000000000\n' '253402300800000\n' '-5\n' '1796176800000'; do
		# shellcheck disable=SC2059 # the floor's escapes are meant
		printf -- "$floor" >"$BAKERY_HOME/.default.lock"
		t=$((t + 60))
		id=$(at "$t" paid_order bo)
		# Every event of the order is stamped by the clock, none by the
		# garbled floor.
		assert_equal "$(bakery-queue peek --limit 1000 | jq -r .envelope.time | sort -u)" \
			"$(date -u -d "@$t" +%Y-%m-%dT%H:%M:%S.000Z)"
		settles_at "$t" "$id"
	done
}

@test "an alarm armed before a step back fires within its delay, not an hour late" {
	export BAKERY_NOW=$T0
	crash_at order.after_commit bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	id=$(echo "$output" | jq -r .id)
	back=$((T0 - HOUR))
	run --separate-stderr at $((back + 30)) bakery-relay --due
	assert_success
	assert_equal "$(echo "$output" | jq -r .address)" "order/$id"
	assert_equal "$(echo "$output" | jq .sent)" 1
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
}

@test "the re-arm guard's day: a step back over midnight does not reset the count twice" {
	export BAKERY_NOW=1796170800 # 2026-12-02T00:20:00Z
	bakery-fault set queue-refuses
	id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	# 00:40: the first re-arm of 2026-12-02.
	run --separate-stderr at 1796172000 bakery-relay --due
	assert_equal "$(echo "$output" | jq -r .alarm)" rearmed
	assert_equal "$(echo "$output" | jq .rearms_today)" 1
	# Stepped back to 23:50 the day before: the count is still the one
	# of 2026-12-02, which it has not left.
	run --separate-stderr at 1796169000 bakery-relay --due
	assert_equal "$(echo "$output" | jq -r .alarm)" rearmed
	assert_equal "$(echo "$output" | jq .rearms_today)" 2
	# Past midnight again: the same day, the count goes on.
	run --separate-stderr at 1796172600 bakery-relay --due
	assert_equal "$(echo "$output" | jq -r .alarm)" rearmed
	assert_equal "$(echo "$output" | jq .rearms_today)" 3
	assert_equal "$(at 1796172600 bakery-show "order/$id" | jq .alarm.rearms_today)" 3
	# A day forward: a new day, counted from 0 once.
	run --separate-stderr at $((1796172600 + 86400)) bakery-relay --due
	assert_equal "$(echo "$output" | jq .rearms_today)" 1
}

@test "the daily wipe: a step back over 10:00 does not wipe twice, a day forward wipes once" {
	ten=1796205600 # 2026-12-02T10:00:00Z
	export BAKERY_NOW=$ten
	paid_order ada >/dev/null
	run --separate-stderr bakery-wipe --all --daily
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" default
	# NTP steps the clock back an hour; an order comes, then the timer
	# reaches 10:00 again.
	id=$(BAKERY_NOW=$((ten - HOUR)) paid_order bo)
	run --separate-stderr at $((ten + 1)) bakery-wipe --all --daily
	assert_success
	assert_output ""
	run bakery-order show "$id"
	assert_success
	# A day forward: the day it lands on gets its wipe, once.
	run --separate-stderr at $((ten + 86400 + 5)) bakery-wipe --all --daily
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" default
	run --separate-stderr at $((ten + 86400 + 60)) bakery-wipe --all --daily
	assert_success
	assert_output ""
	assert_equal "$(bakery-show --list | wc -l)" 0
	# A plain bakery-wipe --all is the operator's: it always wipes.
	BAKERY_NOW=$((ten + 86400 + 90)) paid_order cy >/dev/null
	run --separate-stderr at $((ten + 86400 + 120)) bakery-wipe --all
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" default
	run -64 bakery-wipe --all --daily --resume
}

@test "a wipe of one sandbox is not the day's wipe of every sandbox" {
	ten=1796205600 # 2026-12-02T10:00:00Z
	export BAKERY_NOW=$((ten - 60))
	paid_order ada >/dev/null
	bakery-order -s trial place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	run --separate-stderr bakery-wipe -s trial
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" trial
	run --separate-stderr at "$ten" bakery-wipe --all --daily
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox)" default
	assert_equal "$(bakery-show --list | wc -l)" 0
}
