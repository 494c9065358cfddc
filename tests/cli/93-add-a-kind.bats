#!/usr/bin/env bats
# docs/design.md's "How to add a kind", followed: bakery built with one
# kind more (tests/kind/tally.c, its line in lib/objects/kinds.c and its
# routes; make extra-kind, into build/extra-kind/) places, pays, consumes
# and shows with it, each event counted once however often it comes. A
# recipe that no longer builds a kind fails here, and so does one that
# stops naming what this builds.
bats_require_minimum_version 1.5.0
load helpers

EXTRA=$TOP/build/extra-kind
# The variant's programs first: bakery's own, linked with the kind.
export PATH="$EXTRA/bin:$PATH"

# Built by make test and make check (make extra-kind); one older than
# what it is made of would prove the recipe of another day.
setup_file() {
	local made src
	for made in bin/bakery-consume tests/checker tests/kind.t share/routes; do
		[ -e "$EXTRA/$made" ] || { echo "no $EXTRA/$made: run make extra-kind" >&2; return 1; }
	done
	for src in tests/kind/tally.c lib/objects/kinds.c; do
		[ "$TOP/$src" -ot "$EXTRA/bin/bakery-consume" ] ||
			{ echo "$EXTRA is older than $src: run make extra-kind" >&2; return 1; }
	done
	for src in tests/kind/tally.routes share/routes; do
		[ "$TOP/$src" -ot "$EXTRA/share/routes" ] ||
			{ echo "$EXTRA is older than $src: run make extra-kind" >&2; return 1; }
	done
}

# tally/all's state.heard as {"TYPE":EVENTS}.
heard() {
	bakery-show tally/all | jq -c '.state.heard | map_values(.events)'
}

@test "the variant is the shipped tree with the recipe's file and its one line, and its routes" {
	cmp "$TOP/tests/kind/tally.c" "$EXTRA/lib/objects/tally.c"
	run diff "$TOP/lib/objects/kinds.c" "$EXTRA/lib/objects/kinds.c"
	assert_failure 1
	# The last line of the list gains its continuation, and X(tally) follows.
	assert_equal "$(grep '^>' <<<"$output" | tail -1)" "> 	X(tally)"
	[ "$(grep -c '^>' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^<' <<<"$output")" -eq 1 ]
	assert_equal "$(cat "$TOP/share/routes" "$TOP/tests/kind/tally.routes")" "$(cat "$EXTRA/share/routes")"
	# The shipped build knows no tally.
	run "$TOP/bin/bakery-show" tally/all
	assert_failure 64
	assert_output --partial 'unknown kind'
	run "$TOP/bin/bakery-fault" set refuses:tally
	assert_failure 64
}

@test "the kinds' unit test passes with the kind: a new file's schema is an old one's migrated" {
	run "$EXTRA/tests/kind.t"
	assert_success
	assert_output --regexp 'ok [0-9]+ - tally: the schema'"'"'s create runs'
	refute_output --partial 'not ok'
}

@test "bakery-consume --routes routes OrderPlaced and PaymentSucceeded to tally/all" {
	run bakery-consume --routes
	assert_success
	run jq -c 'select(.subscriber == "builtin:tally") | [.type, .from, .to]' <<<"$output"
	assert_output - <<-'EOF'
		["OrderPlaced","order","tally/all"]
		["PaymentSucceeded","billing","tally/all"]
	EOF
}

@test "place, pay, consume, show: tally/all heard each once, and the checker finds it all applied" {
	id=$(paid_order ada)
	place bob >/dev/null
	run bakery-show tally/all
	assert_failure 66
	run bakery-consume
	assert_success
	assert_equal "$(heard)" '{"OrderPlaced":2,"PaymentSucceeded":1}'
	assert_effects_once "$id"
	# Where an operator meets it: the sandbox's list and the trace.
	bakery-show --list | grep -qx '"tally/all"'
	bakery-trace "$id" | grep -q 'applied  *tally/all'
	run "$EXTRA/tests/checker" --drained "$BAKERY_HOME"
	assert_success
	assert_equal "$(jq -c '[.orders, .paid, .lost, .applied_twice]' <<<"$output")" '[2,1,0,0]'
}

@test "applying twice does not double: a replay and a redelivery change nothing" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	before=$(bakery-show tally/all | jq -S .)
	assert_equal "$(heard)" '{"OrderPlaced":1,"PaymentSucceeded":1}'
	# The OrderPlaced again, applied directly.
	bakery-order events "$id" | jq -c 'select(.type == "OrderPlaced")' >"$BATS_TEST_TMPDIR/placed.jsonl"
	run --separate-stderr bakery-consume --stdin <"$BATS_TEST_TMPDIR/placed.jsonl"
	assert_success
	echo "$output" | jq -e '.status == 200 and .outcome == "applied"'
	# The PaymentSucceeded through the queue once more, past its repeat
	# check, as after a lost ack.
	paid=$(sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" \
		"SELECT envelope FROM events WHERE type = 'PaymentSucceeded'")
	[ -n "$paid" ]
	queue_raw "$(jq -r .id <<<"$paid")" "$paid"
	run --separate-stderr bakery-consume
	assert_success
	echo "$output" | jq -e '.type == "PaymentSucceeded" and .status == 200 and .outcome == "acked"'
	assert_equal "$(bakery-show tally/all | jq -S .)" "$before"
	assert_effects_once "$id"
	run "$EXTRA/tests/checker" --drained "$BAKERY_HOME"
	assert_success
	assert_equal "$(jq -c .applied_twice <<<"$output")" 0
}

@test "refuses:tally makes it refuse its events, and the others apply; cleared, it hears them once" {
	id=$(place ada)
	bakery-fault set refuses:tally >/dev/null
	bakery-order events "$id" >"$BATS_TEST_TMPDIR/placed.jsonl"
	run --separate-stderr bakery-consume --stdin <"$BATS_TEST_TMPDIR/placed.jsonl"
	echo "$output" | jq -e '.status == 503 and .error == "Tally answered 503"'
	run bakery-show tally/all
	assert_failure 66
	[ "$(bakery-show kitchen/board | jq '.state.cards | length')" -eq 1 ]
	bakery-fault clear refuses:tally >/dev/null
	bakery-consume --stdin <"$BATS_TEST_TMPDIR/placed.jsonl" >/dev/null
	bakery-consume --stdin <"$BATS_TEST_TMPDIR/placed.jsonl" >/dev/null
	assert_equal "$(heard)" '{"OrderPlaced":1}'
}

@test "the recipe names the files and line this test builds with, and the descriptor it fills" {
	design=$TOP/docs/design.md
	recipe=$(sed -n '/^## How to add a kind/,/^\*\*A schema version\*\*/p' "$design")
	[ -n "$recipe" ]
	for name in 'lib/objects/kinds.c' '`X(loyalty)`' 'share/routes' 'make extra-kind' \
		'tests/kind/tally.c' 'tests/kind/tally.routes' 'tests/cli/93-add-a-kind.bats' \
		'tests/unit/kind.c'; do
		grep -qF "$name" <<<"$recipe" || { echo "the recipe does not name $name" >&2; return 1; }
	done
	# Every field of the recipe's descriptor is one of kind.h's, and
	# every field the kind here fills the recipe speaks of.
	fields=$(sed -n '/^typedef struct object_kind {/,/^} object_kind;/p' "$TOP/lib/core/kind.h")
	field='s/^[[:space:]]*\.\([a-z_]*\)\(\[[^]]*\]\)\{0,1\} = .*/\1/p'
	example=$(sed -n "$field" <<<"$recipe" | sort -u)
	[ "$(wc -l <<<"$example")" -ge 6 ]
	for f in $example; do
		grep -Eq "[ *]$f(\[[A-Z_0-9]*\])?;" <<<"$fields" ||
			{ echo "the recipe's .$f is no field of object_kind" >&2; return 1; }
	done
	for f in $(sed -n "$field" "$TOP/tests/kind/tally.c" | sort -u); do
		grep -qF ".$f" <<<"$recipe" ||
			{ echo "tests/kind/tally.c fills .$f, which the recipe does not name" >&2; return 1; }
	done
}
