#!/usr/bin/env bats
# bakery-backup DIR: a consistent copy of the home taken while it runs;
# the copy is a home the checker passes once it is consumed to the end.
load helpers
bats_require_minimum_version 1.5.0

CHECKER="$TOP/build/tests/checker"

# What a test started in the background goes, whatever failed.
# has_lines N FILE: FILE is there with N lines or more.
has_lines() { [ "$(wc -l <"$2" 2>/dev/null || echo 0)" -ge "$1" ]; }

teardown() {
	local p
	for p in ${consumer:-} ${clients:-} ${backup:-} ${placer:-}; do
		kill -CONT "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
	done
}

# The tools on a restored home, with the clock moved past every lease
# the running consumer held when the copy was taken and every alarm.
finish_restored() {
	export BAKERY_HOME=$1 BAKERY_NOW=$(($(date +%s) + 3600))
	bakery-relay --due >/dev/null
	bakery-consume --drain >/dev/null
	bakery-dlq drain >/dev/null
	unset BAKERY_NOW
}

@test "a backup is a home with the order and its effects" {
	sqlite_only "copies the embedded queue"
	id=$(paid_order ada)
	bakery-consume >/dev/null
	run bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_success
	assert_equal "$(echo "$output" | jq -r .backup)" "$BATS_TEST_TMPDIR/copy"
	export BAKERY_HOME=$BATS_TEST_TMPDIR/copy
	assert_effects_once "$id"
	assert_equal "$(bakery-order show "$id" | jq -r .status)" paid
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
}

@test "a queue outside the home becomes the copy's queue.db" {
	sqlite_only "a sqlite: queue"
	export BAKERY_QUEUE=sqlite:$BATS_TEST_TMPDIR/queue.db
	bakery-queue init >/dev/null
	id=$(paid_order ada)
	queued=$(queue_ids)
	[ -n "$queued" ]
	bakery-backup "$BATS_TEST_TMPDIR/copy" >/dev/null
	unset BAKERY_QUEUE
	export BAKERY_HOME=$BATS_TEST_TMPDIR/copy
	assert_equal "$(queue_ids)" "$queued"
	bakery-consume >/dev/null
	assert_effects_once "$id"
}

@test "a backup keeps the gateway, the routes and the clock floor" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	printf 'OrderPaid builtin:kitchen\n' >"$BAKERY_HOME/routes"
	BAKERY_NOW=2026-12-01T10:00:00Z bakery-wipe --all >/dev/null
	bakery-backup "$BATS_TEST_TMPDIR/copy" >/dev/null
	for f in .gateway routes .default.lock webhook-secret; do
		cmp "$BAKERY_HOME/$f" "$BATS_TEST_TMPDIR/copy/$f"
	done
}

@test "a backup is 0600 files and 0700 folders whatever the umask" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	umask 022
	bakery-backup "$BATS_TEST_TMPDIR/copy" >/dev/null
	run find "$BATS_TEST_TMPDIR/copy" \( -type f -not -perm 0600 \) -o \( -type d -not -perm 0700 \)
	assert_output ""
	run bakery-doctor -H "$BATS_TEST_TMPDIR/copy"
	assert_success
}

@test "a backup taken while a consumer and orders run, consumed to the end, passes the checker" {
	sqlite_only "copies the embedded queue"
	bakery-consume --follow >/dev/null 2>"$BATS_TEST_TMPDIR/consume.err" &
	consumer=$!
	(
		for n in $(seq 40); do
			id=$(place "c$n") && bakery-order pay "$id" >/dev/null && echo "$id"
		done >"$BATS_TEST_TMPDIR/orders"
	) 2>"$BATS_TEST_TMPDIR/clients.err" &
	clients=$!
	wait_for 60 has_lines 10 "$BATS_TEST_TMPDIR/orders"
	run bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_success
	wait "$clients"
	kill -TERM "$consumer"
	wait "$consumer"
	run cat "$BATS_TEST_TMPDIR/clients.err" "$BATS_TEST_TMPDIR/consume.err"
	refute_output --partial error
	copy=$BATS_TEST_TMPDIR/copy
	# The copy holds orders placed before it and not those after.
	orders=$(BAKERY_HOME=$copy bakery-show --list | jq -r 'select(startswith("order/"))' | wc -l)
	[ "$orders" -ge 10 ] && [ "$orders" -lt 40 ]
	finish_restored "$copy"
	run "$CHECKER" --drained "$copy"
	assert_success
	assert_equal "$(echo "$output" | jq '.lost + .applied_twice + .unexpected')" 0
	assert_equal "$(echo "$output" | jq .paid)" "$(BAKERY_HOME=$copy bakery-order list | jq -s '[.[] | select(.status == "paid")] | length')"
}

@test "while the home is held a command waits, and past its busy timeout exits 75" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	BAKERY_STOP_AT=backup.held bakery-backup "$BATS_TEST_TMPDIR/copy" >"$BATS_TEST_TMPDIR/backup.out" &
	backup=$!
	stopped "$backup"
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=300 \
		bakery-order place --customer bo --day "$DAY" cardamom-bun=1
	assert_failure 75
	kill -CONT "$backup"
	wait "$backup"
	[ -d "$BATS_TEST_TMPDIR/copy" ]
	run bakery-order list
	refute_output --partial '"customer":"bo"'
}

@test "a sandbox made while the home is held is left out of the copy, which the checker passes" {
	sqlite_only "copies the embedded queue"
	id=$(paid_order ada)
	BAKERY_STOP_AT=backup.held bakery-backup "$BATS_TEST_TMPDIR/copy" \
		>"$BATS_TEST_TMPDIR/backup.out" 2>"$BATS_TEST_TMPDIR/backup.err" &
	backup=$!
	stopped "$backup"
	# The order is recorded in the new sandbox at once; its send waits for
	# the queue, which the backup holds: nothing of it is in the copy's.
	bakery-order -s fresh place --customer bo --day "$DAY" cardamom-bun=1 >"$BATS_TEST_TMPDIR/placed" &
	placer=$!
	wait_for 30 compgen -G "$BAKERY_HOME/sandboxes/fresh/order/*.db" >/dev/null
	kill -CONT "$backup"
	wait "$backup"
	assert_equal "$(jq -c .left_out "$BATS_TEST_TMPDIR/backup.out")" '["fresh"]'
	# Once the backup let go, the send went through.
	wait "$placer"
	fresh=$(jq -r .id "$BATS_TEST_TMPDIR/placed")
	assert_equal "$(bakery-show -s fresh "order/$fresh" | jq '.outbox | length')" 0
	[ ! -e "$BATS_TEST_TMPDIR/copy/sandboxes/fresh" ]
	[ ! -e "$BATS_TEST_TMPDIR/copy/.fresh.lock" ]
	finish_restored "$BATS_TEST_TMPDIR/copy"
	assert_effects_once "$id"
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
}

@test "a backup finishes while a sandbox is made every 100 ms" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	(
		for i in $(seq 60); do
			bakery-order -s "s$i" place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
			sleep 0.1
		done
	) &
	clients=$!
	wait_for 30 test -d "$BAKERY_HOME/sandboxes/s3"
	for n in 1 2 3 4 5 6; do
		run --separate-stderr bakery-backup "$BATS_TEST_TMPDIR/copy$n"
		assert_success
	done
	wait "$clients"
	run "$CHECKER" "$BATS_TEST_TMPDIR/copy6"
	assert_success
}

@test "a file that changed after the first pass is copied again while the home is held" {
	sqlite_only "copies the embedded queue"
	a=$(paid_order ada)
	bakery-consume >/dev/null
	# Every file quiet (last changed past the backup's margin): its first
	# copy will do unless it changes.
	find "$BAKERY_HOME" -type f -exec touch -m -d "@$(($(date +%s) - 10))" {} +
	BAKERY_STOP_AT=backup.first_pass bakery-backup "$BATS_TEST_TMPDIR/copy" >"$BATS_TEST_TMPDIR/backup.out" &
	backup=$!
	stopped "$backup"
	b=$(paid_order bo)
	bakery-consume >/dev/null
	kill -CONT "$backup"
	wait "$backup"
	export BAKERY_HOME=$BATS_TEST_TMPDIR/copy
	assert_effects_once "$b"
	assert_effects_once "$a"
	run "$CHECKER" --drained "$BAKERY_HOME"
	assert_success
	# the kitchen, the CRM and the schedule changed, and bo's files are new;
	# ada's own four (order, billing, inbox, customer) were copied once
	out=$(cat "$BATS_TEST_TMPDIR/backup.out")
	[ "$(echo "$out" | jq .copied_held)" -ge 5 ]
	[ "$(echo "$out" | jq '.databases - .copied_held')" -ge 4 ]
}

@test "a file that went after the first pass is not in the copy" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	bakery-consume >/dev/null
	BAKERY_STOP_AT=backup.first_pass bakery-backup "$BATS_TEST_TMPDIR/copy" >/dev/null &
	backup=$!
	stopped "$backup"
	rm "$BAKERY_HOME/sandboxes/default/inbox/ada.db"
	kill -CONT "$backup"
	wait "$backup"
	[ -f "$BATS_TEST_TMPDIR/copy/sandboxes/default/kitchen/board.db" ]
	[ ! -e "$BATS_TEST_TMPDIR/copy/sandboxes/default/inbox/ada.db" ]
}

@test "a backup killed after its first pass leaves no DIR" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	crash_at backup.first_pass bakery-backup "$BATS_TEST_TMPDIR/copy"
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
}

@test "a backup killed while it holds the home leaves no DIR and holds nothing" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	crash_at backup.held bakery-backup "$BATS_TEST_TMPDIR/copy"
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
	run env BAKERY_BUSY_TIMEOUT_MS=300 bakery-order place --customer bo --day "$DAY" cardamom-bun=1
	assert_success
}

@test "a backup killed before it is whole leaves no DIR" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	crash_at backup.before_rename bakery-backup "$BATS_TEST_TMPDIR/copy"
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
	# only the unfinished copy, under a name that says so
	run find "$BATS_TEST_TMPDIR" -maxdepth 1 -name '.copy.partial-*'
	[ -n "$output" ]
}

@test "a backup killed before it is whole leaves an empty DIR empty" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	mkdir "$BATS_TEST_TMPDIR/copy"
	crash_at backup.before_rename bakery-backup "$BATS_TEST_TMPDIR/copy"
	run ls -A "$BATS_TEST_TMPDIR/copy"
	assert_output ""
}

@test "an empty DIR is filled" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	mkdir "$BATS_TEST_TMPDIR/copy"
	run bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_success
	[ -f "$BATS_TEST_TMPDIR/copy/queue.db" ]
}

@test "a DIR that exists and is not empty is refused with 73" {
	paid_order ada >/dev/null
	mkdir "$BATS_TEST_TMPDIR/copy"
	echo keep >"$BATS_TEST_TMPDIR/copy/mine"
	run bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_failure 73
	assert_output "bakery-backup: error: '$BATS_TEST_TMPDIR/copy' exists and is not empty"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/copy")" mine
}

@test "a DIR that is a file is refused with 73" {
	paid_order ada >/dev/null
	echo keep >"$BATS_TEST_TMPDIR/copy"
	run bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_failure 73
	assert_output "bakery-backup: error: '$BATS_TEST_TMPDIR/copy' exists and is not a folder"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/copy")" keep
}

@test "a DIR in a folder the user cannot write is refused with 77" {
	[ "$(id -u)" = 0 ] || skip "needs root to run as another user"
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	chmod o+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR"
	chown -R nobody "$BAKERY_HOME"
	mkdir -m 0755 "$BATS_TEST_TMPDIR/shelf"
	run as_user nobody bakery-backup "$BATS_TEST_TMPDIR/shelf/copy"
	assert_failure 77
	assert_output --partial "Permission denied"
	run ls -A "$BATS_TEST_TMPDIR/shelf"
	assert_output ""
}

@test "a DIR inside the home is refused with 64" {
	paid_order ada >/dev/null
	run bakery-backup "$BAKERY_HOME/sandboxes/copy"
	assert_failure 64
	assert_output --partial "is inside the home"
	[ ! -e "$BAKERY_HOME/sandboxes/copy" ]
}

@test "a home that does not exist is refused with 78" {
	run bakery-backup -H "$BATS_TEST_TMPDIR/nowhere" "$BATS_TEST_TMPDIR/copy"
	assert_failure 78
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
	[ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
}

@test "a home whose queue is on NATS is refused with 78" {
	run bakery-backup --queue nats://127.0.0.1:4222 "$BATS_TEST_TMPDIR/copy"
	assert_failure 78
	assert_output --partial "the queue is on NATS"
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
}

@test "no DIR is a usage error" {
	run bakery-backup
	assert_failure 64
	assert_line --partial "missing DIR"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a backup held past its busy timeout names what held it, and a command the backup held names the backup" {
	sqlite_only "copies the embedded queue"
	paid_order ada >/dev/null
	# A place stopped midway shares the sandbox's lock.
	BAKERY_STOP_AT=make.before_rename bakery-order place --customer bo --day "$DAY" cardamom-bun=1 \
		>"$BATS_TEST_TMPDIR/place.out" 2>/dev/null &
	local place=$!
	stopped "$place"
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=300 bakery-backup "$BATS_TEST_TMPDIR/copy"
	assert_failure 75
	[[ "$stderr" == *"held past the busy timeout by bakery-order (pid $place)"* ]] ||
		{ echo "$stderr" >&2; false; }
	[[ "$stderr" != *wipe* ]]
	kill -CONT "$place"
	wait "$place"
	# And the other way: a command held by the backup names it.
	BAKERY_STOP_AT=backup.held bakery-backup "$BATS_TEST_TMPDIR/copy2" >/dev/null &
	local backup=$!
	stopped "$backup"
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=300 \
		bakery-order place --customer cy --day "$DAY" cardamom-bun=1
	assert_failure 75
	[[ "$stderr" == *"held past the busy timeout by bakery-backup (pid $backup)"* ]] ||
		{ echo "$stderr" >&2; false; }
	kill -CONT "$backup"
	wait "$backup"
}
