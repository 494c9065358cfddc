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
	run ldd "$(command -v bakery-order)"
	assert_success
	refute_output --regexp 'libcurl|libnats|libcrypto'
	run strace -f -e trace=openat -o "$BATS_TEST_TMPDIR/place.trace" \
		bakery-order place --customer ada --day 2026-12-01 cardamom-bun=1
	assert_success
	run grep -E 'libcurl|libnats|libcrypto' "$BATS_TEST_TMPDIR/place.trace"
	assert_failure
	# The test gateway signs its webhook event: that run loads libcrypto.
	id=$(jq -r .id <<<"$(bakery-order place --customer ada --day 2026-12-01 cardamom-bun=1)")
	run strace -f -e trace=openat -o "$BATS_TEST_TMPDIR/pay.trace" \
		bakery-order pay "$id"
	assert_success
	run grep -c 'libcrypto' "$BATS_TEST_TMPDIR/pay.trace"
	assert_success
	run grep -E 'libcurl|libnats' "$BATS_TEST_TMPDIR/pay.trace"
	assert_failure
}
