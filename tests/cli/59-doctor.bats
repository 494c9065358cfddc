#!/usr/bin/env bats
# bakery-doctor: a healthy home passes with exit 0; each check, broken
# the way an operator meets it, is a FAIL line and exit 1.
load helpers

# A home that has seen a paid order delivered.
healthy() {
	paid_order ada >/dev/null
	bakery-consume >/dev/null
}

# root_only: owners and other users' rights need root to set up.
root_only() {
	[ "$(id -u)" = 0 ] || skip "needs root to chown"
}

# others_reach: lets another user pass through the test's own folders
# (0700) to the home, as /var/lib lets the bakery user.
others_reach() {
	chmod o+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR"
}

# Runs bakery-doctor ARGS and asserts CHECK is a FAIL line and exit 1.
fails() {
	local check=$1
	shift
	run bakery-doctor "$@"
	assert_failure 1
	assert_line --regexp "^FAIL  $check: "
}

@test "a healthy home passes every check with exit 0" {
	healthy
	run bakery-doctor
	assert_success
	refute_line --regexp '^FAIL'
	for c in home owner modes types making gateway routes secrets writable queue sqlite clock-floor disk; do
		assert_line --regexp "^ok    $c: "
	done
}

@test "bakery doctor runs bakery-doctor" {
	healthy
	run bakery doctor
	assert_success
	assert_line --regexp '^ok    home: '
}

@test "--json prints one JSON line per check that jq reads" {
	healthy
	chmod 0644 "$BAKERY_HOME/webhook-secret"
	run bakery-doctor --json
	assert_failure 1
	[ "$(echo "$output" | jq -s 'length')" -ge 13 ]
	assert_equal "$(echo "$output" | jq -r 'select(.status == "FAIL") | .check')" secrets
}

@test "a home that does not exist fails the home check" {
	run bakery-doctor -H "$BATS_TEST_TMPDIR/nowhere"
	assert_failure 1
	assert_line --regexp "^FAIL  home: '.*/nowhere' does not exist"
	[ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
}

@test "a folder the user cannot pass through on the way to the home fails the writable check" {
	root_only
	healthy
	chown -R nobody "$BAKERY_HOME"
	fails writable
	assert_line --partial "nobody cannot reach the home: '$BATS_RUN_TMPDIR' is 0700"
}

@test "a home that is a file fails the home check" {
	echo x >"$BATS_TEST_TMPDIR/file"
	fails home -H "$BATS_TEST_TMPDIR/file"
}

@test "a file owned by another user fails the owner check" {
	root_only
	healthy
	chown nobody "$BAKERY_HOME/sandboxes/default/kitchen/board.db"
	fails owner
	assert_line --partial "'sandboxes/default/kitchen/board.db' is owned by nobody"
}

@test "a file writable by its group fails the modes check" {
	healthy
	chmod g+w "$BAKERY_HOME/sandboxes/default/kitchen/board.db"
	fails modes
	assert_line --partial "'sandboxes/default/kitchen/board.db' is 0620: writable by its group"
}

@test "a home writable by others fails the modes check" {
	healthy
	chmod 0703 "$BAKERY_HOME"
	fails modes
}

@test "a symlink where bakery keeps files fails the types check" {
	healthy
	ln -s /etc/passwd "$BAKERY_HOME/sandboxes/default/order/ord_x.db"
	fails types
	assert_line --partial "'sandboxes/default/order/ord_x.db' is a symlink"
}

@test "the home's routes as a link to a conffile root owns passes, as the package lays the home out" {
	root_only
	healthy
	cp "$TOP/share/routes" "$BATS_TEST_TMPDIR/routes.conf"
	chmod 0644 "$BATS_TEST_TMPDIR/routes.conf"
	ln -s "$BATS_TEST_TMPDIR/routes.conf" "$BAKERY_HOME/routes"
	chown -R nobody "$BAKERY_HOME"
	chown -h nobody "$BAKERY_HOME/routes"
	others_reach
	run bakery-doctor
	assert_success
	assert_line --regexp '^ok    types: '
}

@test "the home's routes linked to a file others may write fails the modes check" {
	healthy
	cp "$TOP/share/routes" "$BATS_TEST_TMPDIR/routes.conf"
	chmod 0666 "$BATS_TEST_TMPDIR/routes.conf"
	ln -s "$BATS_TEST_TMPDIR/routes.conf" "$BAKERY_HOME/routes"
	fails modes
	assert_line --partial "'routes' links to a file writable by"
}

@test "the home's routes linked to nothing fails the types check" {
	healthy
	ln -s "$BATS_TEST_TMPDIR/none" "$BAKERY_HOME/routes"
	fails types
	assert_line --partial "'routes' is a symlink to no regular file"
}

@test "a FIFO in the home fails the types check" {
	healthy
	mkfifo "$BAKERY_HOME/sandboxes/default/kitchen/x.db"
	fails types
	assert_line --partial "is a FIFO"
}

@test "a webhook secret readable by others fails the secrets check" {
	healthy
	chmod 0604 "$BAKERY_HOME/webhook-secret"
	fails secrets
}

@test "a route's secret file readable by others fails the secrets check" {
	healthy
	printf 'whsec_c2VjcmV0\n' >"$BATS_TEST_TMPDIR/erp.whsec"
	chmod 0644 "$BATS_TEST_TMPDIR/erp.whsec"
	printf 'OrderPaid https://erp.example/hook name=erp secret=%s\n' \
		"$BATS_TEST_TMPDIR/erp.whsec" >"$BAKERY_HOME/routes"
	chmod 0600 "$BAKERY_HOME/routes"
	fails secrets
	assert_line --partial "erp.whsec' is 0644: readable by others"
}

@test "a home another user must run cannot be written by that user" {
	root_only
	healthy
	others_reach
	fails writable --user nobody
	assert_line --partial "nobody cannot"
}

@test "a file root made in the home of another user fails owner and writable" {
	root_only
	healthy
	others_reach
	chown -R nobody "$BAKERY_HOME"
	run bakery-doctor
	assert_success
	# as bakery's programs make it: 0600, root's
	bakery-order place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	run bakery-doctor
	assert_failure 1
	assert_line --regexp "^FAIL  owner: .* is owned by root, the home by nobody"
	assert_line --regexp "^FAIL  writable: nobody cannot read and write '"
}

@test "a home with no gateway chosen fails the gateway check" {
	healthy
	rm "$BAKERY_HOME/.gateway"
	fails gateway
}

@test "a stripe home with no key fails the stripe-key check" {
	healthy
	echo stripe >"$BAKERY_HOME/.gateway"
	fails stripe-key
	assert_line --partial "no key"
}

@test "a stripe key file readable by others fails the secrets check" {
	healthy
	echo stripe >"$BAKERY_HOME/.gateway"
	echo sk_test_bakery4f1c9a0e27d35b86 >"$BATS_TEST_TMPDIR/key"
	chmod 0600 "$BATS_TEST_TMPDIR/key"
	run bakery-doctor --stripe-key-file "$BATS_TEST_TMPDIR/key"
	assert_line --regexp '^ok    stripe-key: '
	chmod 0644 "$BATS_TEST_TMPDIR/key"
	fails secrets --stripe-key-file "$BATS_TEST_TMPDIR/key"
	assert_line --partial "the Stripe key file"
}

@test "a queue file that is not SQLite fails the queue check" {
	sqlite_only "the queue's file"
	healthy
	head -c 8192 /dev/urandom >"$BAKERY_HOME/queue.db"
	rm -f "$BAKERY_HOME/queue.db-wal" "$BAKERY_HOME/queue.db-shm"
	fails queue
}

@test "a NATS queue that does not answer fails the queue check" {
	healthy
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	fails queue --queue "nats://127.0.0.1:$port"
}

@test "a malformed routes file fails the routes check" {
	healthy
	echo 'OrderPaid nowhere:at-all' >"$BAKERY_HOME/routes"
	chmod 0600 "$BAKERY_HOME/routes"
	fails routes
	assert_line --partial "routes:1:"
}

@test "a corrupt object file fails the sqlite check" {
	healthy
	db=$BAKERY_HOME/sandboxes/default/kitchen/board.db
	sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
	# page 2 and after: the tables' b-trees, the schema on page 1 intact
	size=$(stat -c %s "$db")
	dd if=/dev/urandom of="$db" bs=1 seek=4096 count=$((size - 4096)) conv=notrunc 2>/dev/null
	fails sqlite
	assert_line --partial "kitchen/board.db'"
}

@test "a clock floor ahead of the clock fails the clock-floor check" {
	healthy
	BAKERY_NOW=2026-12-01T10:00:00Z bakery-wipe --all >/dev/null
	BAKERY_NOW=2026-12-01T10:00:01Z run bakery-doctor
	assert_line --regexp '^ok    clock-floor: '
	BAKERY_NOW=2026-12-01T09:00:00Z fails clock-floor
	assert_line --partial "sandbox default's floor 2026-12-01T10:00:00"
}

@test "less free space than --min-free fails the disk check" {
	healthy
	fails disk --min-free 8000000T
	assert_line --partial "below --min-free"
}

# listing: every entry of the home with its owner, group and mode, and
# every file's sum.
listing() {
	(cd "$BAKERY_HOME" && find . -printf '%p %u %g %m\n' | sort &&
		find . -type f -exec md5sum {} + | sort)
}

@test "the checks write nothing in the home" {
	healthy
	before=$(listing)
	run bakery-doctor
	assert_success
	assert_equal "$(listing)" "$before"
	# A file whose mode SQLite would give its empty -wal and -shm.
	chmod 0640 "$BAKERY_HOME/sandboxes/default/crm/customers.db"
	before=$(listing)
	run bakery-doctor
	assert_equal "$(listing)" "$before"
}

@test "the checks write nothing as root either: no -wal or -shm made for a file without them, none given an owner" {
	root_only
	healthy
	others_reach
	chown -R nobody "$BAKERY_HOME"
	# An operator's sqlite3 removes a file's -wal and -shm as it closes.
	board=$BAKERY_HOME/sandboxes/default/kitchen/board.db
	sqlite3 "$board" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
	[ ! -e "$board-wal" ] && [ ! -e "$board-shm" ]
	# Root made these, and SQLite run as root gives them the file's owner.
	crm=$BAKERY_HOME/sandboxes/default/crm/customers.db
	chown root "$crm-wal" "$crm-shm"
	before=$(listing)
	run bakery-doctor
	assert_line --regexp '^ok    sqlite: '
	assert_equal "$(listing)" "$before"
}

@test "a home whose queue was removed after it took the orders' events fails the queue check" {
	sqlite_only "the queue's file"
	healthy
	rm "$BAKERY_HOME"/queue.db*
	fails queue
	assert_line --regexp "^FAIL  queue: no queue at '$BAKERY_HOME/queue.db', yet 3 events of 2 objects are marked relayed"
}

@test "a home with no queue yet and no event relayed passes the queue check" {
	sqlite_only "the queue's file"
	crash_at order.after_commit bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	[ ! -e "$BAKERY_HOME/queue.db" ]
	run bakery-doctor
	assert_line "ok    queue: embedded, not made yet: empty"
}

# overwrite_frame FILE N: 32 bytes of the N-th frame's page in FILE's WAL
# overwritten, as a disk or a hand might.
overwrite_frame() {
	python3 - "$1-wal" "$2" <<-'EOF'
		import struct, sys
		with open(sys.argv[1], "r+b") as f:
		    page = struct.unpack(">I", f.read(32)[8:12])[0]
		    f.seek(32 + (int(sys.argv[2]) - 1) * (24 + page) + 24 + 100)
		    f.write(b"\xde\xad\xbe\xef" * 8)
	EOF
}

@test "a WAL frame overwritten fails the sqlite check, which quick_check passes: with the -shm and without it" {
	for c in bo cy dee; do paid_order "$c" >/dev/null; bakery-consume --batch 1 >/dev/null; done
	healthy
	board=$BAKERY_HOME/sandboxes/default/kitchen/board.db
	overwrite_frame "$board" 2
	fails sqlite
	assert_line --regexp "^FAIL  sqlite: '$board': frame 2 of its WAL is broken or missing: its -shm counts [0-9]+ frames committed"
	# The checker, which rebuilds the WAL's index, finds what the commits
	# past the frame held lost.
	run "$TOP/build/tests/checker" "$BAKERY_HOME"
	assert_failure 1
	[ "$(jq .lost <<<"$output")" -gt 0 ]
	rm "$board-shm"
	fails sqlite
	assert_line --regexp "^FAIL  sqlite: '$board': [0-9]+ commits of its WAL lie past frame 2, which is broken"
}

@test "object files and folders readable by others fail the modes check" {
	healthy
	chmod 0755 "$BAKERY_HOME"
	fails modes
	assert_line "FAIL  modes: the home is 0755: readable by others"
	chmod 0700 "$BAKERY_HOME"
	chmod 0644 "$BAKERY_HOME/sandboxes/default/crm/customers.db"
	fails modes
	assert_line "FAIL  modes: 'sandboxes/default/crm/customers.db' is 0644: readable by others"
	chmod 0600 "$BAKERY_HOME/sandboxes/default/crm/customers.db"
	chmod 0711 "$BAKERY_HOME/sandboxes/default/customer"
	fails modes
	assert_line "FAIL  modes: 'sandboxes/default/customer' is 0711: readable by others"
}

@test "a file being made that bakery never makes fails the making check: a hard link, a mode not 0600, a folder" {
	healthy
	d=$BAKERY_HOME/sandboxes/default
	echo x >"$BATS_TEST_TMPDIR/elsewhere"
	chmod 0600 "$BATS_TEST_TMPDIR/elsewhere"
	ln "$BATS_TEST_TMPDIR/elsewhere" "$d/crm/.new.customers"
	fails making
	assert_line "FAIL  making: 'sandboxes/default/crm/.new.customers' has 2 links: a file bakery makes has one (a link to a file elsewhere?)"
	rm "$d/crm/.new.customers"
	(umask 0 && : >"$d/schedule/.new.2026-12-02")
	fails making
	assert_line "FAIL  making: 'sandboxes/default/schedule/.new.2026-12-02' is 0666: a file bakery makes is 0600"
	rm "$d/schedule/.new.2026-12-02"
	mkdir "$d/kitchen/.new.board"
	fails making
	assert_line --partial "'sandboxes/default/kitchen/.new.board' is a folder where bakery makes a file"
}

@test "a file a maker that died left half made is a warning, not a failure" {
	healthy
	f=$BAKERY_HOME/sandboxes/default/order/.new.ord_left
	(umask 077 && : >"$f")
	touch -d '-2 minutes' "$f"
	run bakery-doctor
	assert_success
	assert_line "warn  making: 'sandboxes/default/order/.new.ord_left' was left half made by a maker that died: the next maker of it writes it again"
}

@test "a bad --min-free is a usage error" {
	run bakery-doctor --min-free 12Q
	assert_failure 64
	assert_line --partial "bad min-free: '12Q'"
}

@test "an unknown --user is a configuration error" {
	healthy
	run bakery-doctor --user no-such-user-here
	assert_failure 78
	assert_line --partial "no such user: 'no-such-user-here'"
}

@test "a home the doctor cannot read exits 69 with no verdict" {
	root_only
	healthy
	others_reach
	run as_user nobody bakery-doctor -H "$BAKERY_HOME"
	assert_failure 69
	assert_output --partial "bakery-doctor: error: cannot read '$BAKERY_HOME': Permission denied"
	refute_line --regexp '^ok    owner'
}
