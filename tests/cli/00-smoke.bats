#!/usr/bin/env bats
load helpers

@test "a paid order reaches every subscriber once" {
	id=$(paid_order ada)
	run bakery-consume
	assert_success
	assert_effects_once "$id"
}

@test "libcurl, libnats and libcrypto are loaded only by a run that needs them" {
	command -v strace >/dev/null
	# Not linked at all: a command that needs none of them never maps them.
	# (The program itself: under make valgrind, PATH finds a wrapper.)
	run ldd "$TOP/bin/bakery-order"
	assert_success
	refute_output --regexp 'libcurl|libnats|libcrypto'
	# On a nats:// queue the send needs libnats (and the libcrypto it links);
	# on the embedded one nothing.
	local unused='libcurl|libnats|libcrypto'
	[ -z "${BAKERY_TEST_NATS:-}" ] || unused='libcurl'
	# LeakSanitizer cannot run in a traced process (make check SANITIZE=1):
	# the traced runs go without it.
	run strace -f -e trace=openat -o "$BATS_TEST_TMPDIR/place.trace" \
		env ASAN_OPTIONS=detect_leaks=0 \
		bakery-order place --customer ada --day 2026-12-01 cardamom-bun=1
	assert_success
	run grep -E "$unused" "$BATS_TEST_TMPDIR/place.trace"
	assert_failure
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		run grep -c libnats "$BATS_TEST_TMPDIR/place.trace"
		assert_success
	fi
	# The test gateway signs its webhook event: that run loads libcrypto.
	id=$(jq -r .id <<<"$(bakery-order place --customer ada --day 2026-12-01 cardamom-bun=1)")
	run strace -f -e trace=openat -o "$BATS_TEST_TMPDIR/pay.trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order pay "$id"
	assert_success
	run grep -c 'libcrypto' "$BATS_TEST_TMPDIR/pay.trace"
	assert_success
	run grep -E 'libcurl' "$BATS_TEST_TMPDIR/pay.trace"
	assert_failure
}
