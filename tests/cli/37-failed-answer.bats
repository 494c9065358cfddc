#!/usr/bin/env bats
# An answer of failure leaves nothing behind. A new file's name given, its
# folder's sync failing after (BAKERY_FAIL_SYNC_OF=/KIND/NAME matches the
# folder's sync, whose path is the file's, and not the copy's, .new.NAME):
# the command answers the failure, and no file, no event and no alarm
# stand, so that a script retrying the line makes one order, not two.
load helpers
bats_require_minimum_version 1.5.0

eval "helpers_$(declare -f setup)"
setup() {
	helpers_setup
	bakery-order -V | grep -q 'journal_mode=wal)' ||
		skip "WAL only: a rollback journal makes a file at its name"
	cd "$BATS_TEST_TMPDIR" || return 1
}

files_of() { find "$BAKERY_HOME/sandboxes/default/$1" -mindepth 1 2>/dev/null | sort; }
queue_ready() { bakery-queue stats | jq '."bakery-events".ready'; }
cards() { bakery-show kitchen/board | jq '[.state.cards[]?] | length'; }
# alarm_run: an alarm run an hour on: every entry due, fired or dropped.
alarm_run() { BAKERY_NOW=$(($(date +%s) + 3600)) bakery-relay --due; }

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a place whose folder sync fails after the name answers 74 and leaves no order, event or alarm" {
	run --separate-stderr env BAKERY_FAIL_SYNC_OF=/order/ord_ \
		bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_failure 74
	assert_equal "$output" ""
	[[ "$stderr" == *"cannot sync '$BAKERY_HOME/sandboxes/default/order/ord_"* ]]
	# Taken back: no file at the name, no -wal or -shm, no copy.
	assert_equal "$(files_of order)" ""
	assert_equal "$(bakery-order list)" ""
	assert_equal "$(queue_ready)" 0
	# Its alarm's entry finds no file and goes; nothing is sent.
	run --separate-stderr alarm_run
	assert_success
	echo "$output" | jq -e '.alarm == "gone" and .sent == 0'
	assert_equal "$(queue_ready)" 0
	# The script retries the line: one order, one card.
	id=$(place ada)
	bakery-consume --drain >/dev/null
	assert_equal "$(bakery-order list | jq -r .id)" "$id"
	assert_equal "$(cards)" 1
}

@test "a --batch line whose folder sync fails answers 74 alone; a retry of it pays once" {
	id=$(place ada)
	printf '%s\n' \
		'{"cmd":"place","customer":"bo","day":"'"$DAY"'","items":["cardamom-bun=1"],"key":"k1"}' \
		'{"cmd":"pay","order":"'"$id"'"}' \
		'{"cmd":"place","customer":"cy","day":"'"$DAY"'","items":["cardamom-bun=1"],"key":"k2"}' >in
	run --separate-stderr env BAKERY_FAIL_SYNC_OF="/billing/$id" \
		bakery-order --batch <in
	assert_failure 74
	assert_equal "$(jq -c '[.line, .exit, .sent]' <<<"$output" | paste -sd' ')" \
		"[1,0,true] [2,74,null] [3,0,true]"
	[[ "$(jq -r 'select(.line == 2) | .error' <<<"$output")" == *"cannot sync"* ]]
	assert_equal "$(files_of billing)" ""
	# The two places of the batch and the one before; no PaymentSucceeded.
	assert_equal "$(bakery-queue peek | jq -r .envelope.type | sort | uniq -c | awk '{print $1, $2}')" "3 OrderPlaced"
	run --separate-stderr alarm_run
	assert_success
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	# The line again: paid once, one card confirmed.
	printf '{"cmd":"pay","order":"%s"}\n' "$id" | bakery-order --batch | jq -e '.exit == 0'
	bakery-consume --drain >/dev/null
	assert_effects_once "$id"
}

@test "a pay whose folder sync fails answers 74 and leaves no payment; paid again, paid once" {
	id=$(place ada)
	run --separate-stderr env BAKERY_FAIL_SYNC_OF="/billing/$id" bakery-order pay "$id"
	assert_failure 74
	assert_equal "$output" ""
	assert_equal "$(files_of billing)" ""
	assert_equal "$(bakery-queue peek | jq -r .envelope.type)" OrderPlaced
	run --separate-stderr alarm_run
	assert_success
	assert_equal "$(bakery-queue peek | jq -r .envelope.type)" OrderPlaced
	bakery-order pay "$id" >/dev/null
	bakery-consume --drain >/dev/null
	assert_effects_once "$id"
}

@test "a consumer's new file whose folder sync fails is taken back: its deliveries come again, applied once" {
	a=$(paid_order ada)
	bakery-consume --once --batch 20 >/dev/null # OrderPlaced, PaymentSucceeded
	run --separate-stderr env BAKERY_FAIL_SYNC_OF=/customer/ada bakery-consume --retry-delay 0 --once --batch 20
	assert_success
	run jq -sc '[.[] | [.type, .status, .outcome]]' <<<"$output"
	assert_output '[["OrderPaid",503,"retried"]]'
	assert_equal "$(files_of customer)" ""
	bakery-consume --retry-delay 0 --drain >/dev/null
	assert_effects_once "$a"
	[ "$(bakery-show customer/ada | jq '.seen | length')" -eq 1 ]
}
