#!/usr/bin/env bats
load helpers

@test "a paid order reaches every subscriber once" {
	id=$(paid_order ada)
	run bakery-consume
	assert_success
	assert_effects_once "$id"
}
