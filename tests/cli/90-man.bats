#!/usr/bin/env bats
# The man pages: one per program, lint-clean, and every EXAMPLES block
# works as written against a fresh home.
load helpers

MAN="$TOP/docs/man"

# The shell text of a page's EXAMPLES: every `.Bd -literal` block of that
# section, in order, with the roff escapes \e and \& undone.
examples() {
	awk '
		/^\.Sh / { ex = ($2 == "EXAMPLES"); lit = 0; next }
		ex && /^\.Bd -literal/ { lit = 1; next }
		ex && lit && /^\.Ed/ { lit = 0; next }
		ex && lit { print }
	' "$1" | sed -e 's/\\&//g' -e 's/\\e/\\/g'
}

# Runs a page's examples as one script; any failing command fails it.
run_examples() {
	local page="$MAN/$1" script
	[ -f "$page" ] || { echo "no page $1" >&2; return 1; }
	script=$(examples "$page")
	[ -n "$script" ] || { echo "$1 has no EXAMPLES block" >&2; return 1; }
	cd "$BATS_TEST_TMPDIR" || return 1
	# A sanitizer build (make check SANITIZE=1) checks leaks at exit by
	# stopping the process's threads with ptrace; timeout(1), as the
	# --follow examples use it, sends SIGCONT to its process group right
	# after its SIGTERM, which can undo that stop: the check then waits
	# for ever. The examples run without the leak check there; the other
	# tests run with it.
	if ldd "$TOP/bin/bakery-dlq" 2>/dev/null | grep -q libasan; then
		export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	fi
	run bash -euo pipefail -c "$script" </dev/null
	if [ "$status" -ne 0 ]; then
		printf 'examples of %s:\n%s\n' "$1" "$script" >&2
	fi
	assert_success
}

@test "every program has a page, and every page is mandoc -Tlint clean" {
	local src prog page sec
	for src in "$TOP"/cmd/*.c; do
		prog=$(basename "$src" .c)
		[ -f "$MAN/$prog.1" ] || { echo "no page for $prog" >&2; return 1; }
		for sec in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES \
		    "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -qx ".Sh $sec" "$MAN/$prog.1" ||
				{ echo "$prog.1 lacks $sec" >&2; return 1; }
		done
	done
	[ -f "$MAN/bakery.7" ]
	[ -f "$MAN/bakery-envelope.5" ]
	[ -f "$MAN/bakery-routes.5" ]
	for page in "$MAN"/*.[1-9]; do
		run mandoc -Tlint -W warning "$page"
		assert_success
		assert_output ""
	done
}

@test "bakery.1 examples work" { run_examples bakery.1; }
@test "bakery-order.1 examples work" { run_examples bakery-order.1; }
@test "bakery-relay.1 examples work" { run_examples bakery-relay.1; }
@test "bakery-consume.1 examples work" { run_examples bakery-consume.1; }
@test "bakery-dlq.1 examples work" { run_examples bakery-dlq.1; }
@test "bakery-redrive.1 examples work" { run_examples bakery-redrive.1; }
@test "bakery-queue.1 examples work" { run_examples bakery-queue.1; }
@test "bakery-fault.1 examples work" { run_examples bakery-fault.1; }
@test "bakery-show.1 examples work" { run_examples bakery-show.1; }
@test "bakery-envelope.5 examples work" { run_examples bakery-envelope.5; }
@test "bakery-routes.5 examples work" { run_examples bakery-routes.5; }
@test "bakery.7 examples work" { run_examples bakery.7; }
@test "bakery-wipe.1 examples work" { run_examples bakery-wipe.1; }
@test "bakery-status.1 examples work" { run_examples bakery-status.1; }
@test "bakery-trace.1 examples work" { run_examples bakery-trace.1; }
@test "bakery-doctor.1 examples work" { run_examples bakery-doctor.1; }
@test "bakery-backup.1 examples work" { run_examples bakery-backup.1; }
@test "bakery-console.1 examples work" { run_examples bakery-console.1; }

@test "bakery-order.1 documents paying through Stripe: options, environment, exits 69 and 70" {
	local page="$MAN/bakery-order.1"
	section() { awk -v s="$2" '/^\.Sh / { on = ($0 == ".Sh " s); next } on' "$1"; }
	for opt in payment-method stripe-key-file card; do
		section "$page" SYNOPSIS | grep -q "Fl -$opt" || { echo "SYNOPSIS lacks --$opt" >&2; return 1; }
		section "$page" OPTIONS | grep -q "^\.It Fl -$opt" || { echo "OPTIONS lacks --$opt" >&2; return 1; }
	done
	section "$page" ENVIRONMENT | grep -q '^\.It Ev BAKERY_STRIPE_KEY$'
	section "$page" "EXIT STATUS" | grep -qx '\.It 69'
	section "$page" "EXIT STATUS" | grep -qx '\.It 70'
}

@test "every long option of a program is in its page" {
	local src prog opt
	for src in "$TOP"/cmd/*.c; do
		prog=$(basename "$src" .c)
		for opt in $(grep -o '{ "[a-z-]*", [a-z_]*_argument' "$src" | cut -d'"' -f2); do
			grep -q -- "Fl -$opt" "$MAN/$prog.1" ||
				{ echo "$prog.1 lacks --$opt" >&2; return 1; }
		done
	done
}

@test "the routes bakery.7 shows are lines bakery-consume --routes prints for the default" {
	awk '/^\.Sh ROUTING/ { r = 1; next } /^\.Sh / { r = 0 } r && /^\{"type"/' \
		"$MAN/bakery.7" >"$BATS_TEST_TMPDIR/shown"
	[ -s "$BATS_TEST_TMPDIR/shown" ]
	bakery-consume --routes >"$BATS_TEST_TMPDIR/printed"
	run grep -vxFf "$BATS_TEST_TMPDIR/printed" "$BATS_TEST_TMPDIR/shown"
	assert_output ""
}

# The .Li words of PAGE from the line after the one matching START up to
# the first line matching END, one a line.
li_words() {
	awk -v start="$2" -v end="$3" '
		on && $0 ~ end { exit }
		on && /^\.Li / { sub(/^\.Li /, ""); gsub(/ [,;]/, ""); n = split($0, w, " "); for (i = 1; i <= n; i++) print w[i] }
		$0 ~ start { on = 1 }
	' "$MAN/$1" | sort
}

@test "the kinds the pages name are the kinds of lib/objects/kinds.c, and the routes' subscribers" {
	kinds=$(sed -n 's/^[[:space:]]*X(\([a-z0-9_]*\)).*/\1/p' "$TOP/lib/objects/kinds.c" | sort)
	[ -n "$kinds" ]
	assert_equal "$(li_words bakery-show.1 '^The kinds are$' '^\(a program')" "$kinds"
	builtin=$(sed -n 's/^[A-Za-z]*[[:space:]]*builtin:\([a-z0-9_]*\).*/\1/p' "$TOP/share/routes" | sort -u)
	assert_equal "$(li_words bakery-fault.1 '^The built-in subscriber of that kind$' '^\.Nm')" "$builtin"
	for k in $builtin; do
		echo "$kinds" | grep -qx "$k"
	done
}
