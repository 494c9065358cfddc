#!/usr/bin/env bats
# make demo's scenario runs to its end with the outcomes it narrates.
load helpers

@test "the demo's five steps reach their outcomes" {
	run env TMPDIR="$BATS_TEST_TMPDIR" "$TOP/tests/demo.sh"
	assert_success
	for step in "== 1." "== 2." "== 3." "== 4." "== 5." "== Summary"; do
		assert_output --partial "$step"
	done
	assert_output --partial "dead letter OrderPlaced: Kitchen answered 503 after 4 deliveries"
	assert_output --partial "dead letter OrderPaid: Kitchen answered 503 after 4 deliveries"
	assert_output --partial "dead letter OrderPaid again: Kitchen answered 409"
	assert_output --partial "dead letters: 0"
	assert_output --partial "oven tickets: 5 for 5 orders"
	refute_output --partial "demo: error"
}
