#!/usr/bin/env bats
# mk/layers and mk/exits, the rules `make lint` checks of lib/: each
# breach on a copy of the tree, named, and the tree as it is clean.
bats_require_minimum_version 1.5.0
load helpers

setup() {
	COPY=$BATS_TEST_TMPDIR/tree
	mkdir -p "$COPY/docs"
	cp -r "$TOP/lib" "$COPY/"
	cp "$TOP/docs/design.md" "$COPY/docs/"
	cd "$COPY" || return 1
}

@test "the tree as it is passes both" {
	run "$TOP/mk/layers"
	assert_success
	assert_output ""
	run "$TOP/mk/exits"
	assert_success
}

@test "a file directly under lib/, or in a folder of no layer, is a breach" {
	echo 'int x;' >lib/loose.c
	mkdir lib/misc && echo 'int y;' >lib/misc/y.c
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --partial 'lib/loose.c: not in a folder of a layer'
	assert_output --partial 'lib/misc/y.c: not in a folder of a layer'
}

@test "a storage file including a domain header is a breach" {
	echo '#include "../ops/status.h"' >>lib/store/file.c
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --regexp 'lib/store/file.c:[0-9]+: storage file includes lib/ops/status.h, of the domain layer above it'
}

@test "an include cycle is a breach naming its modules" {
	sed -i 's|^#include "routing.h"$|#include "routing.h"\n#include "subscriber.h"|' lib/flow/routing.c
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --partial 'an include cycle among these modules: lib/flow/routing lib/flow/subscriber'
	# Three files around, in the store.
	cp "$TOP/lib/flow/routing.c" lib/flow/routing.c
	echo '#include "home.h"' >>lib/store/schema.h
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --partial 'an include cycle among these modules:'
	assert_output --partial 'lib/store/schema'
	assert_output --partial 'lib/store/home'
}

@test "a driver's private header is its folder's" {
	echo '#include "../queue/queue-internal.h"' >>lib/console/dead.c
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --regexp 'lib/console/dead.c:[0-9]+: includes lib/queue/queue-internal.h, private to its folder'
}

@test "a path of the module table that is not in the tree is a breach" {
	mv lib/ops/wipe.c lib/ops/wiping.c
	run "$TOP/mk/layers"
	assert_failure 1
	assert_output --partial 'docs/design.md: names lib/ops/wipe.c, which is not in the tree'
}

@test "an exit below cmd/ where lib/base/util.h does not say it may is a breach" {
	echo 'static void f(void) { exit(1); }' >>lib/ops/wipe.c
	run "$TOP/mk/exits"
	assert_failure 1
	assert_output --regexp 'lib/ops/wipe.c:[0-9]+:static void f\(void\) \{ exit\(1\); \}'
}
