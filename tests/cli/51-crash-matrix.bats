#!/usr/bin/env bats
# The crash matrix (tests/crash-matrix.sh, `make crash`) covers every crash
# point in the code, and docs/reliability.md describes each one.
load helpers

code_points() {
	grep -rhoE 'bakery_crash_point\("[a-z_.]+"\)' "$TOP/lib" "$TOP/cmd" |
		sed -E 's/.*\("([^"]+)"\)/\1/' | sort -u
}

@test "every crash point in the code has a scenario in the matrix, and no scenario is stale" {
	[ "$(code_points | wc -l)" -ge 10 ]
	run diff <(code_points) <("$TOP/tests/crash-matrix.sh" --list)
	assert_success
}

@test "every crash point in the code is described in docs/reliability.md" {
	for p in $(code_points); do
		grep -q "^| \`$p\` |" "$TOP/docs/reliability.md" || { echo "not documented: $p" >&2; return 1; }
	done
}

@test "a point without a scenario fails the matrix" {
	# A copy of the tree with one more point in the code.
	mkdir -p "$BATS_TEST_TMPDIR/top/tests"
	cp "$TOP/tests/crash-matrix.sh" "$TOP/tests/matrix.bash" "$BATS_TEST_TMPDIR/top/tests/"
	cp -r "$TOP/cmd" "$BATS_TEST_TMPDIR/top/"
	cp -r "$TOP/lib" "$BATS_TEST_TMPDIR/top/"
	echo 'static void f(void) { bakery_crash_point("new.point"); }' >>"$BATS_TEST_TMPDIR/top/lib/base/crash.c"
	ln -s "$TOP/bin" "$BATS_TEST_TMPDIR/top/bin"
	ln -s "$TOP/share" "$BATS_TEST_TMPDIR/top/share"
	mkdir -p "$BATS_TEST_TMPDIR/top/build/tests"
	ln -s "$TOP/build/tests/checker" "$BATS_TEST_TMPDIR/top/build/tests/checker"
	cp "$TOP/tests/stripe-standin.py" "$BATS_TEST_TMPDIR/top/tests/"
	CRASH_MATRIX_ONLY=order.after_commit run "$BATS_TEST_TMPDIR/top/tests/crash-matrix.sh"
	assert_failure
	assert_output --partial 'new.point: a crash point in the code without a scenario'
}
