#!/usr/bin/env bats
# WAL in short processes (docs/design.md, "WAL"): no checkpoint as a
# process closes, a WAL kept beside its file, and a checkpoint (TRUNCATE)
# by whichever commit leaves WAL_PAGES frames or more, so that a WAL
# stays bounded however many short processes write. Only where bakery
# runs WAL (the linked SQLite: bakery-order -V).
load helpers
bats_require_minimum_version 1.5.0

wal_only() {
	bakery-order -V | grep -q 'journal_mode=wal)' || skip "WAL only"
}

# WAL_PAGES (lib/store/wal.c) frames and one transaction's more, of
# 4,096-byte pages and their 24-byte frame headers, and the WAL's header.
PAGES=128
bound() { echo $((32 + (PAGES + 32) * (4096 + 24))); }

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

@test "a WAL stays under its bound across many short processes, and is checkpointed into its file" {
	wal_only
	place ada >/dev/null
	queue_max=0 alarms_max=0 order_max=0 truncated=0 last=0 a_truncated=0 a_last=0
	for i in $(seq 1 120); do
		id=$(place "c$((i % 7))") || false
		bakery-order pay "$id" >/dev/null || false
		q=$(size "$BAKERY_HOME/queue.db-wal")
		a=$(size "$BAKERY_HOME/alarms.db-wal")
		o=$(size "$BAKERY_HOME/sandboxes/default/order/$id.db-wal")
		[ "$q" -le "$queue_max" ] || queue_max=$q
		[ "$a" -le "$alarms_max" ] || alarms_max=$a
		[ "$o" -le "$order_max" ] || order_max=$o
		[ "$q" -ge "$last" ] || truncated=$((truncated + 1))
		[ "$a" -ge "$a_last" ] || a_truncated=$((a_truncated + 1))
		last=$q a_last=$a
	done
	[ "$queue_max" -le "$(bound)" ]
	[ "$alarms_max" -le "$(bound)" ]
	[ "$order_max" -le "$(bound)" ]
	# 240 sends write far more than the bound: each WAL started over.
	[ "$truncated" -ge 2 ]
	[ "$a_truncated" -ge 2 ]
	# Nothing was lost on the way: every order is there, and the queue
	# holds every event sent (an OrderPlaced a place, a PaymentSucceeded
	# a pay).
	run bakery-order list
	assert_success
	[ "$(echo "$output" | grep -c .)" -eq 121 ]
	[ "$(sqlite3 "$BAKERY_HOME/queue.db" "SELECT count(*) FROM messages")" -eq 241 ]
	run sqlite3 "$BAKERY_HOME/queue.db" "PRAGMA integrity_check"
	assert_output ok
}

@test "a short process leaves its WAL and does not checkpoint it; status, trace and show find both files and write neither" {
	wal_only
	place ada >/dev/null
	id=$(place bo)
	f="$BAKERY_HOME/sandboxes/default/order/$id.db"
	[ -s "$f-wal" ]
	[ -e "$f-shm" ]
	# The file was made with the order's first commit in it; the commit
	# after it (the event marked relayed) is in the WAL, not copied into
	# the file yet.
	run sqlite3 "file:$f?immutable=1" "SELECT count(*) FROM events WHERE relayed_at IS NULL"
	assert_output 1
	assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	ev=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')
	before=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	bakery-status >/dev/null
	bakery-trace "$ev" >/dev/null
	bakery-show "order/$id" >/dev/null
	bakery-show --list >/dev/null
	after=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	assert_equal "$after" "$before"
	# Not even a write that leaves the same bytes (a writer's first open
	# truncates the -shm and rebuilds it).
	if command -v strace >/dev/null; then
		for cmd in bakery-status "bakery-trace $ev" "bakery-show order/$id" "bakery-show --list"; do
			read -ra argv <<<"$cmd"
			strace -f -qq -y -e trace=write,pwrite64,ftruncate,unlink,rename \
				-o "$BATS_TEST_TMPDIR/w" env ASAN_OPTIONS=detect_leaks=0 \
				"${argv[@]}" >/dev/null
			run grep -F "$BAKERY_HOME" "$BATS_TEST_TMPDIR/w"
			assert_output ""
		done
	fi
	# Whoever reads it next sees the order all the same.
	run bakery-order show "$id"
	assert_success
}

@test "a new object is whole from its first byte: its own -wal beside it, no temporary left" {
	wal_only
	id=$(place ada)
	f="$BAKERY_HOME/sandboxes/default/order/$id.db"
	[ "$(head -c 16 "$f")" = "SQLite format 3" ]
	# Bytes 18 and 19 say WAL (2) from the start.
	[ "$(od -An -tu1 -j18 -N2 "$f" | tr -s ' ')" = " 2 2" ]
	[ -e "$f-wal" ]
	run find "$BAKERY_HOME" -name '.new*'
	assert_output ""
}

# The making of billing/$1: its private copy and lock, .new.ORDER.
making() {
	mkdir -p "$BAKERY_HOME/sandboxes/default/billing"
	echo "$BAKERY_HOME/sandboxes/default/billing/.new.$1"
}

# hold_making ID SCRIPT: another maker of billing/ID: holds its lock while
# SCRIPT runs, in the background ($holder); returns once it holds it. Its
# copy is 0600, as a maker makes it (one of another mode is not bakery's,
# 48-edges.bats).
hold_making() {
	local copy
	copy=$(making "$1")
	# Made here, 0600 as a maker makes it: the check below would
	# otherwise make it first when the holder is slow to start, with
	# the test's umask, and a maker removes a copy not made its way.
	(umask 077 && : >>"$copy")
	(umask 077 && exec flock -o "$copy" -c "$2") &
	holder=$!
	wait_for 10 bash -c "! flock -n '$copy' true"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a new object being made by another process: a maker waits for it, and past the busy timeout exits 75 with nothing made" {
	wal_only
	id=$(place ada)
	hold_making "$id" "sleep 30"
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=300 bakery-order pay "$id"
	# The other maker's copy is its own: the one that gave up left it.
	[ -e "$(making "$id")" ]
	kill "$holder"
	wait "$holder" || true
	assert_failure 75
	assert_equal "$stderr" "bakery-order: error: billing answered 503: '$BAKERY_HOME/sandboxes/default/billing/$id.db' is being made by flock (pid $holder)"
	[ ! -e "$BAKERY_HOME/sandboxes/default/billing/$id.db" ]
	# Let go, the same command pays.
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" succeeded
	run find "$BAKERY_HOME" -name '.new*'
	assert_output ""
}

@test "a maker that waited while the one before it gave up and removed its copy makes the object from a copy of its own" {
	wal_only
	id=$(place ada)
	# The one before: holds the copy's lock, then removes the copy and
	# lets go, as a maker whose first transaction was rolled back does.
	hold_making "$id" "sleep 1; rm '$(making "$id")'"
	run --separate-stderr bakery-order pay "$id"
	wait "$holder"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" succeeded
	[ -s "$BAKERY_HOME/sandboxes/default/billing/$id.db" ]
	run find "$BAKERY_HOME" -name '.new*'
	assert_output ""
}

@test "a copy left by a maker killed midway is written again by the next maker" {
	wal_only
	id=$(place ada)
	copy=$(making "$id")
	(umask 077 && head -c 5000 /dev/urandom >"$copy")
	run bakery-order pay "$id"
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" succeeded
	run sqlite3 "$BAKERY_HOME/sandboxes/default/billing/$id.db" "PRAGMA integrity_check"
	assert_output ok
	[ ! -e "$copy" ]
}

@test "a file of the home is opened by its name: SQLite looks at no folder above the home, nor beside a new file's copy" {
	wal_only
	command -v strace >/dev/null || skip "no strace"
	place ada >/dev/null
	cd "$BATS_TEST_TMPDIR" || return 1
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	strace -f -y -e trace=newfstatat,lstat,stat,fcntl -o place.trace \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	# The unix VFS looked at each folder of a name in turn (symlinks);
	# the names of a home are full, and its files are never links.
	run grep -c "\"$(dirname "$BAKERY_HOME")\"" place.trace
	assert_output 0
	# The copy's first transaction runs in memory, on the kind's one
	# connection (memvfs.h): SQLite looks for no journal or WAL beside
	# the copy at all.
	assert_equal "$(grep -c '/\.new\.ord_[0-9a-f]*-journal"' place.trace)" 0
	assert_equal "$(grep -c '/\.new\.ord_[0-9a-f]*-wal"' place.trace)" 0
	grep -q '/\.new\.ord_' place.trace # the copy was made all the same
}

@test "a home reached through a symlinked folder: its files and their WALs are where the folder is" {
	wal_only
	real=$BATS_TEST_TMPDIR/real
	mkdir -p "$real"
	ln -s "$real" "$BATS_TEST_TMPDIR/link"
	export BAKERY_HOME=$BATS_TEST_TMPDIR/link/home
	bakery-order gateway test >/dev/null
	id=$(paid_order ada)
	bakery-consume --drain >/dev/null
	assert_effects_once "$id"
	[ -f "$real/home/sandboxes/default/order/$id.db-wal" ]
	[ -f "$real/home/queue.db-wal" ]
	[ ! -L "$real/home/queue.db" ]
	[ "$(bakery-order show "$id" | jq -r .status)" = paid ]
}
