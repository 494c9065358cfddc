#!/usr/bin/env bats
# The console in a real browser: headless Chromium (Debian's chromium,
# chromium-driver and python3-selenium, from make deps) walks issue 29's
# path against a real lighttpd and a real bakery-consume --follow
# (tests/console-browser.py), once with JavaScript and once without; the
# checker then passes the home. Screenshots of each step are kept in
# build/console-browser/{js,no-js}/.
load helpers
load lighttpd

PASSWORD=cardamom-and-rye-42

setup() {
	export BAKERY_HOME="$BATS_TEST_TMPDIR/home"
	unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_NOW BAKERY_CRASH_AT BAKERY_LOG
	bakery-order gateway test >/dev/null
	[ -x /usr/bin/chromedriver ] && /usr/bin/python3 -c 'import selenium' ||
		fail "make deps installs chromium, chromium-driver and python3-selenium"
	echo "$PASSWORD" | bakery-console user add ada >/dev/null
	lighttpd_start
	# Short retry delays: the three retries of a refused event take
	# seconds, not the 155 s of the default.
	bakery-consume --follow --retry-delay 1 >"$BATS_TEST_TMPDIR/consume.out" \
		2>"$BATS_TEST_TMPDIR/consume.err" 3>&- &
	CONSUMER=$!
}

teardown() {
	kill "$CONSUMER" 2>/dev/null || true
	wait "$CONSUMER" 2>/dev/null || true
	lighttpd_stop
}

# walk MODE [--no-js]: the path in the browser, its screenshots in
# build/console-browser/MODE; then the home passes the checker.
walk() {
	local shots=$TOP/build/console-browser/$1
	rm -rf "$shots"
	shift
	run /usr/bin/python3 "$TOP/tests/console-browser.py" "$BASE" ada "$PASSWORD" "$shots" "$@"
	echo "$output"
	assert_success
	id=${output##*ok }
	ls "$shots"/*-dead-letters.png "$shots"/*-card-confirmed.png >/dev/null
	kill "$CONSUMER"
	wait "$CONSUMER" || true
	run "$TOP/build/tests/checker" --drained "$BAKERY_HOME"
	assert_success
	assert_equal "$(echo "$output" | jq -c '[.lost, .applied_twice]')" "[0,0]"
	run bakery-show -s ada kitchen/board
	assert_equal "$(echo "$output" | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | map(.status)' -c)" '["confirmed"]'
	assert_equal "$(bakery-dlq -s ada list)" ""
}

@test "in Chromium: sign in, refuse, order, pay, dead letters, redrive, the card once" {
	walk js
}

@test "the same path with JavaScript disabled" {
	walk no-js --no-js
}
