#!/usr/bin/env bats
# The home's files an operator or an attacker can touch: sandbox names that
# meet the home's own files, a folder that is not a home, a link at
# the Prometheus file's temporary, a queue URL naming a missing file, a
# read-only home, no home, empty and foreign object files, a closed stdout,
# and the pages that name them.
load helpers
bats_require_minimum_version 1.5.0

# old_layout: turns the home into the layout before 0.1.0, which kept each
# sandbox's folder in HOME itself (HOME/SANDBOX/...) with no .layout mark:
# the files inside are the same. No released bakery ever wrote it.
old_layout() {
	local d
	for d in "$BAKERY_HOME"/sandboxes/*/; do
		mv "$d" "$BAKERY_HOME/.old-$(basename "$d")"
	done
	rmdir "$BAKERY_HOME/sandboxes"
	for d in "$BAKERY_HOME"/.old-*/; do
		d=${d%/}
		mv "$d" "$BAKERY_HOME/${d##*/.old-}"
	done
	rm "$BAKERY_HOME/.layout"
}

# The folder of sandbox default's objects.
objdir() {
	echo "$BAKERY_HOME/sandboxes/default"
}

@test "a sandbox named like the home's files: queue.db-journal, webhook-secret, wipe.db stop nothing" {
	run --separate-stderr bakery-fault -s queue.db-journal set refuses:kitchen
	assert_success
	run --separate-stderr bakery-fault -s webhook-secret set refuses:kitchen
	assert_success
	run --separate-stderr bakery-fault -s alarms.db set refuses:kitchen
	assert_success
	id=$(place ada)
	run --separate-stderr bakery-order pay "$id"
	assert_success
	run --separate-stderr bakery-relay --all
	assert_success
	run --separate-stderr bakery-consume
	assert_success
	assert_effects_once "$id"
	run --separate-stderr bakery-status --json
	assert_equal "$(jq -c '[.sandboxes[].sandbox]' <<<"$output")" \
		'["alarms.db","default","queue.db-journal","webhook-secret"]'
	# The same names as an envelope's sandbox, through the queue.
	wid=$(bakery-order -s wipe.db place --customer bo --day "$DAY" cardamom-bun=1 | jq -r .id)
	run --separate-stderr bakery-order -s wipe.db pay "$wid"
	assert_success
	bakery-order show "$wid" -s wipe.db >/dev/null
	run --separate-stderr bakery-consume
	assert_success
	assert_equal "$(bakery-show -s wipe.db kitchen/board | jq -c '[.state.tickets[].order]')" "[\"$wid\"]"
	for f in queue.db alarms.db; do
		assert_equal "$(sqlite3 "$BAKERY_HOME/$f" 'PRAGMA integrity_check')" ok
	done
	run --separate-stderr bakery-wipe --all
	assert_success
	assert_equal "$(echo "$output" | jq -r .sandbox | sort | tr '\n' ' ')" \
		"alarms.db default queue.db-journal webhook-secret wipe.db "
	run --separate-stderr bakery-show -s wipe.db --list
	assert_output ""
	# After the wipe, pay still finds its secret and the queue its file.
	id=$(place cy)
	run --separate-stderr bakery-order pay "$id"
	assert_success
}

# every_program_refuses DIR ENTRY: every program, given -H DIR, exits 78
# naming DIR and ENTRY, the first thing in it bakery did not make;
# bakery-doctor says so in its home check.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
every_program_refuses() {
	local dir=$1 entry=$2 cmd
	for cmd in "bakery-order list" "bakery-order place --customer ada --day $DAY cardamom-bun=1" \
		"bakery-order gateway test" "bakery-wipe --all" "bakery-wipe -s $entry" \
		"bakery-wipe --all --dry-run" "bakery-status" "bakery-show --list" "bakery-trace evt_1" \
		"bakery-relay --due" "bakery-relay --all" "bakery-consume --drain" "bakery-dlq drain" \
		"bakery-redrive --all" "bakery-queue stats" "bakery-queue init" "bakery-fault list" \
		"bakery-backup $BATS_TEST_TMPDIR/copy"; do
		read -ra argv <<<"$cmd"
		run --separate-stderr "${argv[@]}" -H "$dir"
		[ "$status" -eq 78 ] || { echo "$cmd: exit $status: $stderr" >&2; false; }
		assert_equal "$stderr" "${cmd%% *}: error: '$dir' is not a bakery home: it holds '$entry', which bakery did not make (-H, BAKERY_HOME)"
	done
	run bakery-doctor -H "$dir"
	assert_failure 1
	assert_output "FAIL  home: '$dir' is not a bakery home: it holds '$entry', which bakery did not make (-H, BAKERY_HOME)"
	[ ! -e "$BATS_TEST_TMPDIR/copy" ]
}

# listing DIR: every entry of DIR with its type and mode, and every
# file's sum.
listing() {
	(cd "$1" && find . -printf '%p %y %m\n' | sort && find . -type f -exec md5sum {} + | sort)
}

@test "a folder bakery did not make is no home: every program refuses it, and nothing in it moves" {
	local dir=$BATS_TEST_TMPDIR/var-lib
	mkdir -p "$dir/docs/2026" "$dir/photos"
	echo minutes >"$dir/docs/2026/minutes.txt"
	echo jpeg >"$dir/photos/cake.jpg"
	# named like the home's own files too: a folder of them is no home
	echo notes >"$dir/queue.db"
	before=$(listing "$dir")
	every_program_refuses "$dir" docs
	assert_equal "$(listing "$dir")" "$before"
}

@test "a home of the layout before 0.1.0 (sandboxes in HOME itself) is refused, not moved" {
	local id
	id=$(place ada)
	bakery-order pay "$id" >/dev/null
	bakery-order -s s2 place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	old_layout
	before=$(listing "$BAKERY_HOME")
	every_program_refuses "$BAKERY_HOME" default
	assert_equal "$(listing "$BAKERY_HOME")" "$before"
}

@test "an empty folder is a home: its mark is its first file, and then anything may sit beside it" {
	rm -rf "$BAKERY_HOME" && mkdir "$BAKERY_HOME"
	run --separate-stderr bakery-status
	assert_success
	[ ! -e "$BAKERY_HOME/.layout" ]
	run --separate-stderr bakery-queue init
	assert_success
	assert_equal "$(head -1 "$BAKERY_HOME/.layout")" sandboxes
	assert_equal "$(stat -c %a "$BAKERY_HOME/.layout")" 600
	# Marked, the home is bakery's whatever an operator puts in it.
	echo notes >"$BAKERY_HOME/README"
	bakery-order gateway test >/dev/null
	id=$(paid_order ada)
	run --separate-stderr bakery-consume
	assert_success
	assert_effects_once "$id"
}

@test "a folder of nothing but bakery's own files is a home, as 0.1.0 could leave one without its mark" {
	id=$(paid_order ada)
	rm "$BAKERY_HOME/.layout"
	mkdir "$BAKERY_HOME/lost+found"
	run --separate-stderr bakery-order list
	assert_success
	assert_output --partial "$id"
	[ ! -e "$BAKERY_HOME/.layout" ]
	run --separate-stderr bakery-consume
	assert_success
	assert_effects_once "$id"
	[ -e "$BAKERY_HOME/.layout" ]
}

@test "a home is named by an absolute path of printable text" {
	local home
	for home in relative/home "$BAKERY_HOME"$'\n' $'/tmp/a\tb' "$BAKERY_HOME"$'\r'; do
		refuses_setting BAKERY_HOME "$home" home \
			"want an absolute path of printable UTF-8 (-H, BAKERY_HOME)" \
			"bakery-order list" "bakery-status" "bakery-queue stats"
	done
	[ ! -e relative ]
	[ ! -e "$BAKERY_HOME"$'\n' ]
	[ ! -e "$BAKERY_HOME"$'\r' ]
}

@test "--prom writes through a temporary of its own: a link at FILE.tmp is never followed" {
	echo precious >"$BATS_TEST_TMPDIR/victim"
	mkdir "$BATS_TEST_TMPDIR/prom"
	ln -s "$BATS_TEST_TMPDIR/victim" "$BATS_TEST_TMPDIR/prom/bakery.prom.tmp"
	place ada >/dev/null
	run --separate-stderr bakery-status --prom "$BATS_TEST_TMPDIR/prom/bakery.prom"
	assert_success
	assert_equal "$(cat "$BATS_TEST_TMPDIR/victim")" precious
	[ -L "$BATS_TEST_TMPDIR/prom/bakery.prom.tmp" ]
	grep -q '^bakery_objects{sandbox="default"} 1$' "$BATS_TEST_TMPDIR/prom/bakery.prom"
	assert_equal "$(stat -c %a "$BATS_TEST_TMPDIR/prom/bakery.prom")" 644
	# Nothing else is left in the folder.
	assert_equal "$(find "$BATS_TEST_TMPDIR/prom" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" \
		"bakery.prom bakery.prom.tmp "
}

# refuses_queue Q CMD...: each command, given --queue sqlite:Q with no file
# at Q, exits 78 naming it.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
refuses_queue() {
	local q=$1 cmd
	shift
	for cmd in "$@"; do
		read -ra argv <<<"$cmd"
		run --separate-stderr "${argv[@]}" --queue "sqlite:$q" </dev/null
		assert_failure 78
		assert_equal "$stderr" "${cmd%% *}: error: no queue at '$q' (--queue, BAKERY_QUEUE; bakery-queue init makes one)"
	done
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a queue URL naming a missing file: the programs that only read refuse it and make nothing" {
	local q=$BATS_TEST_TMPDIR/x/y/q.db
	mkdir -p "$BAKERY_HOME"
	refuses_queue "$q" "bakery-queue stats" "bakery-queue peek" "bakery-status" "bakery-trace evt_1"
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	# init makes one; then stats reads it.
	mkdir -p "$BATS_TEST_TMPDIR/x/y"
	run --separate-stderr bakery-queue --queue "sqlite:$q" init
	assert_success
	run --separate-stderr bakery-queue --queue "sqlite:$q" stats
	assert_success
	assert_equal "$(jq -c '."bakery-events"' <<<"$output")" '{"ready":0,"leased":0,"delayed":0}'
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a queue URL naming a missing file: the consumers refuse it and make no empty queue to wait on" {
	local q=$BATS_TEST_TMPDIR/typo.db
	refuses_queue "$q" "bakery-consume" "bakery-consume --drain" "bakery-dlq drain"
	[ ! -e "$q" ]
	# The home's own queue is still made on first use, as a send makes it.
	run --separate-stderr bakery-consume --drain
	assert_success
	[ -f "$BAKERY_HOME/queue.db" ]
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a queue URL naming a missing file: the producers refuse it, before anything is placed or sent" {
	sqlite_only "a sqlite: queue"
	local q=$BAKERY_HOME/queue.bd
	id=$(place ada)
	bakery-fault set refuses:kitchen
	bakery-order pay "$id" >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	dead=$(bakery-dlq list | jq -r .id | head -1)
	[ -n "$dead" ]
	files=$(cd "$BAKERY_HOME" && find . | sort)
	refuses_queue "$q" "bakery-order place --customer bo --day $DAY cardamom-bun=1" \
		"bakery-order pay $id" "bakery-relay --all" "bakery-relay --due" \
		"bakery-redrive $dead" "bakery-queue send" "bakery-wipe --all"
	[ ! -e "$q" ]
	assert_equal "$(cd "$BAKERY_HOME" && find . | sort)" "$files"
	assert_equal "$(bakery-order list | jq -s length)" 1
	# bakery-queue init makes it; then the producers use it.
	run --separate-stderr bakery-queue --queue "sqlite:$q" init
	assert_success
	run --separate-stderr bakery-redrive --queue "sqlite:$q" "$dead"
	assert_success
	assert_equal "$(bakery-queue --queue "sqlite:$q" peek | jq -r .id)" "$dead"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a queue URL that names no file of its own is refused by every program: memory, a query, a relative path" {
	local url
	cd "$BATS_TEST_TMPDIR"
	for url in "sqlite::memory:" "sqlite:$BAKERY_HOME/queue.db?mode=memory" \
		"sqlite:file:$BAKERY_HOME/queue.db" "sqlite:queue.db" "sqlite:$BAKERY_HOME/queue.db"$'\n'; do
		refuses_setting BAKERY_QUEUE "$url" "queue URL" \
			"want sqlite:/ABSOLUTE/PATH, printable, without a query" \
			"bakery-order place --customer ada --day $DAY cardamom-bun=1" "bakery-consume --drain" \
			"bakery-status" "bakery-queue init"
	done
	assert_equal "$(bakery-order list | jq -s length)" 0
	[ ! -e "$BAKERY_HOME/queue.db" ]
	[ ! -e queue.db ]
}

# put_in_place FILE: from the strace of the last command, FILE's lines,
# from the sync of its fresh name to the next sync of the home, in order:
# "fsync F", "link A B", "rename A B"; the home as HOME, the fresh name's
# random tail as XXXXXX.
put_in_place() {
	sed -E 's/^[0-9]+ +//; s/^fsync\([0-9]+<([^>]*)>.*/fsync \1/; s/^(link|rename)\("([^"]*)", "([^"]*)".*/\1 \2 \3/' \
		"$BATS_TEST_TMPDIR/trace" | sed -E "s|$BAKERY_HOME|HOME|g; s|($1)\\.[A-Za-z0-9]{6}|\\1.XXXXXX|g" |
		awk -v f="$1.XXXXXX" 'index($0, f) { on = 1 } on { print } on && $0 == "fsync HOME" { exit }'
}
# LeakSanitizer cannot run under ptrace: under SANITIZE=1 it is left out.
traced() {
	strace -f -qq -y -e trace=fsync,link,rename -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 "$@" >/dev/null
}

@test "the home's small files are put in place whole, then their folder synced: the gateway, the webhook secret, the Prometheus file" {
	command -v strace >/dev/null
	rm -rf "$BAKERY_HOME" && mkdir -p "$BAKERY_HOME"
	traced bakery-order gateway test
	run put_in_place gateway
	assert_output "$(printf '%s\n' 'fsync HOME/.gateway.XXXXXX' 'link HOME/.gateway.XXXXXX HOME/.gateway' 'fsync HOME')"
	# The test gateway signs its own webhook: the first pay makes the secret.
	id=$(place ada)
	traced bakery-order pay "$id"
	run put_in_place webhook-secret
	assert_output "$(printf '%s\n' 'fsync HOME/webhook-secret.XXXXXX' 'link HOME/webhook-secret.XXXXXX HOME/webhook-secret' 'fsync HOME')"
	assert_equal "$(stat -c %a "$BAKERY_HOME/webhook-secret")" 600
	traced bakery-status --prom "$BAKERY_HOME/bakery.prom"
	run put_in_place bakery.prom
	assert_output "$(printf '%s\n' 'fsync HOME/bakery.prom.XXXXXX' 'rename HOME/bakery.prom.XXXXXX HOME/bakery.prom' 'fsync HOME')"
	# Nothing of the fresh names is left.
	assert_equal "$(find "$BAKERY_HOME" -maxdepth 1 -regextype egrep -regex '.*/(\.gateway|webhook-secret|bakery\.prom)\..*' | wc -l)" 0
}

@test "a new sandbox's folders are synced into their parents before anything is written in them" {
	command -v strace >/dev/null
	place ada >/dev/null
	strace -f -qq -y -e trace=fsync,mkdir -o "$BATS_TEST_TMPDIR/trace" \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order -s fresh place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	run bash -c "sed -E 's/^[0-9]+ +//; s/^fsync\\([0-9]+<([^>]*)>.*/fsync \\1/; s/^mkdir\\(\"([^\"]*)\".* = 0\$/mkdir \\1/' '$BATS_TEST_TMPDIR/trace' |
		grep -E '^(mkdir|fsync) ' | sed 's|$BAKERY_HOME|HOME|g' | grep -v '\\.db' | head -4"
	assert_output "$(printf '%s\n' 'mkdir HOME/sandboxes/fresh' 'fsync HOME/sandboxes' 'mkdir HOME/sandboxes/fresh/order' 'fsync HOME/sandboxes/fresh')"
}

@test "a read-only home is read: status, trace, queue stats and show work on it" {
	sqlite_only "reads queue.db of a read-only home"
	need_ro
	id=$(place ada)
	bakery-order pay "$id" >/dev/null
	bakery-consume >/dev/null
	ev=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	run --separate-stderr ro bakery-status --json
	assert_success
	assert_equal "$(jq -c '[.ok, .sandboxes[0].objects]' <<<"$output")" '[true,8]'
	run --separate-stderr ro bakery-trace --json "$ev"
	assert_success
	assert_equal "$(jq '[.subscribers[] | select(.applied_at != null)] | length' <<<"$output")" 6
	run --separate-stderr ro bakery-queue stats
	assert_success
	assert_equal "$(jq -c '."bakery-events"' <<<"$output")" '{"ready":0,"leased":0,"delayed":0}'
	run --separate-stderr ro bakery-queue peek
	assert_success
	run --separate-stderr ro bakery-show "order/$id" kitchen/board
	assert_success
	assert_equal "$(echo "$output" | jq -r .state.status | head -1)" paid
}

@test "a read-only home: pay and the webhook's filter mode exit 77, a permanent error, not 75" {
	need_ro
	id=$(place ada)
	run --separate-stderr ro bakery-order pay "$id"
	assert_failure 77
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	export BAKERY_STRIPE_WEBHOOK_SECRET=whsec_ro
	total=$(bakery-order show "$id" | jq .total_cents)
	jq -nc --arg o "$id" --argjson amount "$total" \
		'{id: "evt_ro", object: "event", type: "payment_intent.succeeded", created: now | floor,
		  data: {object: {id: "pi_ro", object: "payment_intent", amount: $amount,
		    currency: "eur", status: "succeeded",
		    metadata: {order_id: $o, sandbox: "default"}}}}' | tr -d '\n' >"$BATS_TEST_TMPDIR/ev"
	sig=$(python3 -c 'import hashlib, hmac, sys, time
body = open(sys.argv[1], "rb").read(); t = str(int(time.time()))
print("t=%s,v1=%s" % (t, hmac.new(b"whsec_ro", t.encode() + b"." + body, hashlib.sha256).hexdigest()))' "$BATS_TEST_TMPDIR/ev")
	run --separate-stderr ro bakery-webhook --signature "$sig" <"$BATS_TEST_TMPDIR/ev"
	assert_failure 77
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	# Writable again, the same event records.
	run --separate-stderr bakery-webhook --signature "$sig" <"$BATS_TEST_TMPDIR/ev"
	assert_success
}

@test "no home, or a home that is a file: bakery-status and bakery-trace exit 78 and make nothing" {
	local home=$BATS_TEST_TMPDIR/nope
	run --separate-stderr bakery-status -H "$home"
	assert_failure 78
	assert_equal "$stderr" "bakery-status: error: no such home: '$home' (-H, BAKERY_HOME)"
	run --separate-stderr bakery-status -H "$home" --prom "$BATS_TEST_TMPDIR/p.prom"
	assert_failure 78
	[ ! -e "$BATS_TEST_TMPDIR/p.prom" ]
	run --separate-stderr bakery-trace -H "$home" evt_1
	assert_failure 78
	[ ! -e "$home" ]
	echo x >"$home"
	for cmd in bakery-status "bakery-trace evt_1" "bakery-order list" "bakery-show --list"; do
		read -ra argv <<<"$cmd"
		run --separate-stderr "${argv[@]}" -H "$home"
		assert_failure 78
		assert_equal "$stderr" "${cmd%% *}: error: home '$home' is not a folder"
	done
	assert_equal "$(cat "$home")" x
}

@test "a place that fails on a full disk leaves whole orders and no other file" {
	bakery-fault list >/dev/null
	for n in 1 2 3 4 5 6 7 8; do
		run --separate-stderr env BAKERY_FAIL_WRITE_AT=$n+ bakery-order place --key "k$n" --customer ada --day "$DAY" cardamom-bun=1
		[ "$status" -eq 0 ] || [ "$status" -eq 74 ] || [ "$status" -eq 75 ]
	done
	# Each order that exists is whole; no other file is left but an
	# order's -wal and -shm (a place whose relayed mark met the full disk
	# leaves its -shm written).
	for f in "$(objdir)"/order/*; do
		[ -e "$f" ] || continue
		case $f in
		*.db) ;;
		*.db-wal | *.db-shm) [ -s "${f%-*}" ] || { echo "left: $f" >&2; false; }; continue ;;
		*) [ ! -s "$f" ] || { echo "left: $f" >&2; false; }; continue ;;
		esac
		assert [ -s "$f" ]
		bakery-order show "$(basename "$f" .db)" >/dev/null
	done
}

@test "an empty file, as a crash of an earlier bakery left, is never an object" {
	paid_order ada >/dev/null
	listed=$(bakery-show --list | wc -l)
	: >"$(objdir)/order/ord_ghost.db"
	run --separate-stderr bakery-show order/ord_ghost
	assert_failure 66
	assert_equal "$stderr" "bakery-show: error: '$(objdir)/order/ord_ghost.db' is empty, not a bakery file yet"
	[ ! -s "$(objdir)/order/ord_ghost.db" ]
	run --separate-stderr bakery-order show ord_ghost
	assert_failure 66
	run --separate-stderr bakery-show --list
	assert_success
	assert_equal "$(echo "$output" | grep -c . || true)" "$listed"
	assert_equal "$stderr" "bakery-show: warning: not_an_object file=$(objdir)/order/ord_ghost.db reason=\"empty file\""
	run --separate-stderr bakery-status --json
	assert_equal "$(jq .sandboxes[0].objects <<<"$output")" "$listed"
}

@test "a file that is not SQLite's, named as an object, is a data error, said so" {
	place ada >/dev/null
	echo garbage >"$(objdir)/order/ord_junk.db"
	run --separate-stderr bakery-show order/ord_junk
	assert_failure 65
	assert_output ""
	[[ $stderr == *"file is not a database"* ]]
}

@test "one garbage file in the home does not stop bakery-trace: reported and skipped" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	ev=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	echo garbage >"$(objdir)/order/ord_000garbage.db"
	# A foreign file: without the WAL of the object it replaces, which
	# would hold its pages.
	echo garbage >"$(objdir)/kitchen/board.db"
	rm -f "$(objdir)/kitchen/board.db-wal" "$(objdir)/kitchen/board.db-shm"
	run --separate-stderr bakery-trace --json "$ev"
	assert_success
	assert_equal "$(jq -r .recorded_in <<<"$output")" "order/$id"
	assert_equal "$(jq -c '[.subscribers[] | select(.applied_at != null) | .address] | length' <<<"$output")" 5
	[[ $stderr == *"bakery-trace: warning: bad_file file=$(objdir)/order/ord_000garbage.db"* ]]
	[[ $stderr == *"bakery-trace: warning: bad_file file=$(objdir)/kitchen/board.db"* ]]
}

@test "a closed stdout: every program that prints exits 74, never 0 with its output lost" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	for cmd in "bakery-order list" "bakery-order show $id" "bakery-show --list" "bakery-status" \
		"bakery-queue stats" "bakery-consume --routes" "bakery-trace $(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')" \
		"bakery-order -h" "bakery -V"; do
		read -ra argv <<<"$cmd"
		run --separate-stderr sh -c 'exec "$@" >&-' sh "${argv[@]}"
		[ "$status" -eq 74 ] || { echo "$cmd >&-: exit $status" >&2; false; }
	done
}

@test "bakery-show has no sandbox kind" {
	run --separate-stderr bakery-show sandbox/default
	assert_failure 64
	assert_equal "$stderr" "bakery-show: error: bad address: 'sandbox/default': unknown kind"
	run ! grep -qw sandbox <(sed -n '/^The kinds are/,/^\.Li dispatch/p' "$TOP/docs/man/bakery-show.1")
}

@test "bakery(1) names every command" {
	cmds=$(bakery_commands)
	[ -n "$cmds" ]
	for c in $cmds; do
		sed -n '/^The commands are/,/^each has/p' "$TOP/docs/man/bakery.1" | grep -qw "$c" ||
			{ echo "bakery.1 does not list $c" >&2; false; }
		grep -q "^\.Xr bakery-$c 1" "$TOP/docs/man/bakery.1" ||
			{ echo "bakery.1 does not refer to bakery-$c(1)" >&2; false; }
	done
}
