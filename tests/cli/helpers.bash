# Shared by every CLI test: a fresh home per test, the built programs first
# on PATH, and bats-assert. Load with `load helpers`.

bats_load_library bats-support
bats_load_library bats-assert

TOP="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
# BAKERY_TEST_BIN: another folder of the programs first (make valgrind).
export PATH="${BAKERY_TEST_BIN:+$BAKERY_TEST_BIN:}$TOP/bin:$PATH"
export BAKERY_MENU="$TOP/share/menu.tsv"

setup() {
	export BAKERY_HOME="$BATS_TEST_TMPDIR/home"
	unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_NOW BAKERY_CRASH_AT BAKERY_LOG
	unset BAKERY_STRIPE_WEBHOOK_SECRET BAKERY_STRIPE_WEBHOOK_SECRET_FILE BAKERY_SYNC
	unset BAKERY_STRIPE_KEY BAKERY_STRIPE_API
	# An operator's OpenTelemetry export stays out of the tests.
	unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \
		OTEL_EXPORTER_OTLP_HEADERS OTEL_SDK_DISABLED OTEL_TRACES_SAMPLER \
		OTEL_TRACES_SAMPLER_ARG OTEL_EXPORTER_OTLP_TIMEOUT \
		OTEL_EXPORTER_OTLP_TRACES_TIMEOUT TRACEPARENT TRACESTATE
	# Which gateway pays is the home's recorded choice: the tests pay with
	# the built-in test gateway, chosen openly (40-stripe.bats: Stripe).
	bakery-order gateway test >/dev/null
	DAY=2026-12-01
	# The suite's second run (tests/nats-cli.sh): every test on a NATS
	# server, its streams deleted first so each test starts empty.
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		"$TOP/tests/nats-tool.py" "${BAKERY_TEST_NATS#nats://}" reset
		export BAKERY_QUEUE="$BAKERY_TEST_NATS"
	fi
}

# sqlite_only REASON: skips the test on the NATS run, saying why. For tests
# that read or write queue.db itself; keep them few.
sqlite_only() {
	[ -z "${BAKERY_TEST_NATS:-}" ] || skip "sqlite queue only: $1"
}

# place CUSTOMER [ITEMS...]: places an order for $DAY, prints its id.
place() {
	local customer=$1
	shift
	bakery-order place --customer "$customer" --day "$DAY" "${@:-cardamom-bun=1}" | jq -r .id
}

# unindexed_order: places an order while the queue refuses it (its alarm
# armed), then empties the alarm index: an armed alarm no alarm run finds.
# Prints the order's id.
unindexed_order() {
	bakery-fault set queue-refuses >/dev/null
	place ada 2>/dev/null
	sqlite3 "$BAKERY_HOME/alarms.db" "DELETE FROM alarms"
}

# paid_order CUSTOMER [ITEMS...]: places and pays; prints the order id.
paid_order() {
	local id
	id=$(place "$@") || return 1
	bakery-order pay "$id" >/dev/null || return 1
	echo "$id"
}

# Runs a command that must die by SIGKILL at a crash point (exit 137).
# shellcheck disable=SC2154 # $status, $output: set by bats's run
crash_at() {
	local point=$1
	shift
	run env BAKERY_CRASH_AT="$point" "$@"
	[ "$status" -eq 137 ] || {
		echo "expected SIGKILL at $point, got status $status: $output" >&2
		return 1
	}
}

# stopped PID: waits until the process stands at its BAKERY_STOP_AT point.
stopped() {
	for _ in $(seq 200); do
		[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = T ] && return 0
		sleep 0.05
	done
	echo "process $1 did not stop" >&2
	return 1
}

# go_on PID: continues PID each time it stops at its BAKERY_STOP_AT point,
# until it has ended.
go_on() {
	local state
	for _ in $(seq 600); do
		state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
		case $state in
		T) kill -CONT "$1" ;;
		Z) return 0 ;;
		esac
		sleep 0.05
	done
	echo "process $1 did not end" >&2
	return 1
}

# wait_for SECONDS COMMAND...: runs COMMAND every 0.05 s until it succeeds;
# fails, naming it, when SECONDS pass first.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || { echo "timed out waiting for: $*" >&2; return 1; }
		sleep 0.05
	done
}

# lease_out COMMAND...: runs COMMAND as if the lease of a consumer killed
# with --visibility 1 had run out: on the embedded queue with the clock
# pinned two minutes on; on NATS the lease runs on the server's clock,
# which only real time moves.
lease_out() {
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		sleep 1.5 # the server's clock: no pinned time reaches it
		"$@"
	else
		BAKERY_NOW=$(($(date +%s) + 120)) "$@"
	fi
}

# Asserts every effect of order $1 happened exactly once.
assert_effects_once() {
	local id=$1 customer day
	customer=$(bakery-order show "$id" | jq -r .customer)
	day=$(bakery-order show "$id" | jq -r .day)
	[ "$(bakery-order show "$id" | jq -r .status)" = paid ] || { echo "order $id not paid" >&2; return 1; }
	local n
	n=$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o and .status == "confirmed")] | length')
	[ "$n" = 1 ] || { echo "kitchen cards for $id: $n" >&2; return 1; }
	n=$(bakery-show kitchen/board | jq --arg o "$id" '[.state.tickets[] | select(.order == $o)] | length')
	[ "$n" = 1 ] || { echo "tickets for $id: $n" >&2; return 1; }
	n=$(bakery-show "inbox/$customer" | jq --arg o "$id" '[.state.receipts[] | select(.order == $o)] | length')
	[ "$n" = 1 ] || { echo "receipts for $id: $n" >&2; return 1; }
	n=$(bakery-show "schedule/$day" | jq --arg o "$id" '[.state.reservations[] | select(.order == $o)] | length')
	[ "$n" = 1 ] || { echo "reservations for $id: $n" >&2; return 1; }
	n=$(bakery-show "schedule/$day" | jq --arg o "$id" '[.state.holds[] | select(.order == $o)] | length')
	[ "$n" = 0 ] || { echo "holds left for $id: $n" >&2; return 1; }
	n=$(bakery-show "customer/$customer" | jq --arg o "$id" '[.state.orders[] | select(.order == $o)] | length')
	[ "$n" = 1 ] || { echo "customer orders for $id: $n" >&2; return 1; }
}

# queue_raw ID BODY: puts a message on bakery-events of sandbox default with
# BODY as it is (malformed, say), as no program of bakery would.
queue_raw() {
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		bakery-queue init >/dev/null
		"$TOP/tests/nats-tool.py" "${BAKERY_TEST_NATS#nats://}" pub \
			bakery.events.default.unknown "$2" "Nats-Msg-Id=$1.raw.$RANDOM" \
			"Bakery-Id=$1" Bakery-Sandbox=default >/dev/null
	else
		bakery-queue init >/dev/null # stats only looks: it makes no file
		local now=$(($(date +%s) * 1000))
		sqlite3 "$BAKERY_HOME/queue.db" "INSERT INTO messages(queue, id,
			sandbox, body, visible_at, enqueued_at) VALUES ('bakery-events',
			'$1', 'default', '${2//\'/\'\'}', $now, $now)"
	fi
}

# queue_fill N SANDBOX: puts N messages of SANDBOX on bakery-events, each
# the envelope of the last message queued (there must be one) with the id
# evt_fillI, as many relays would; fast (one sqlite3, or one nats-tool).
queue_fill() {
	local body
	body=$(bakery-queue peek | jq -c --arg s "$2" \
		'.envelope | .id = "evt_fill{i}" | .source |= sub(":[^/]*/"; ":\($s)/")' | tail -1)
	[ -n "$body" ] || { echo "queue_fill: nothing queued to copy" >&2; return 1; }
	if [ -n "${BAKERY_TEST_NATS:-}" ]; then
		"$TOP/tests/nats-tool.py" "${BAKERY_TEST_NATS#nats://}" fill "$1" \
			"bakery.events.$2.$(jq -r .type <<<"$body").evt_fill{i}" "$body" \
			'Nats-Msg-Id=evt_fill{i}' 'Bakery-Id=evt_fill{i}' "Bakery-Sandbox=$2"
	else
		local now=$(($(date +%s) * 1000))
		sqlite3 "$BAKERY_HOME/queue.db" "WITH RECURSIVE n(i) AS (SELECT 0
			UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $1)
			INSERT INTO messages(queue, id, sandbox, body, visible_at,
			enqueued_at) SELECT 'bakery-events', 'evt_fill' || i, '$2',
			replace('${body//\'/\'\'}', 'evt_fill{i}', 'evt_fill' || i),
			$now, $now FROM n"
	fi
}

# refuses CODE WHAT CMD...: CMD exits CODE with nothing on stdout and
# WHAT in what it says on stderr.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
refuses() {
	local code=$1 what=$2
	shift 2
	run --separate-stderr "$@"
	assert_failure "$code"
	assert_output ""
	[[ $stderr == *"$what"* ]] || fail "$*: stderr: $stderr"
}

# refuses_setting VAR VALUE WHAT WANT CMD...: each command (a string of
# words), run with VAR=VALUE, exits 78 with "PROG: error: bad WHAT: …WANT".
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
refuses_setting() {
	local var=$1 value=$2 what=$3 want=$4 cmd
	shift 4
	for cmd in "$@"; do
		read -ra argv <<<"$cmd"
		run --separate-stderr env "$var=$value" "${argv[@]}"
		assert_failure 78
		[[ $stderr == "${cmd%% *}: error: bad $what: "*"$want" ]] ||
			{ echo "$var=$value $cmd: $stderr" >&2; return 1; }
	done
}

# bakery_commands: the commands bakery -h lists, its continuation lines
# too, one a line.
bakery_commands() {
	bakery -h | sed -n '/^commands: /,/^[^ c]/{s/^commands: //;s/^ *//;/^each /d;p}' | tr ' ' '\n'
}

# queue_ids [QUEUE]: ids of the messages in bakery-events (or QUEUE), oldest
# first, through bakery-queue peek (either driver).
# holds_file PID PATH: PID has PATH open (a making's lock, a lock file).
holds_file() {
	local fd
	for fd in "/proc/$1"/fd/*; do
		[ "$(readlink "$fd")" = "$2" ] && return 0
	done
	return 1
}

queue_ids() {
	bakery-queue peek --limit 1000 ${1:+--dlq} | jq -r .id
}

# Files a test made outside its home (bats's own stderr files aside): a
# bad name must never become a path.
outside_home() {
	find "$BATS_TEST_TMPDIR" -mindepth 1 -not -path "$BAKERY_HOME" \
		-not -path "$BAKERY_HOME/*" -not -path "$BATS_TEST_TMPDIR/cwd" \
		-not -name 'separate-stderr-*'
}

# tmpfs_home SIZE: BAKERY_HOME on a fresh tmpfs of SIZE mounted at $MNT
# (root only: skipped otherwise; the test file's teardown unmounts it),
# the test gateway chosen.
tmpfs_home() {
	[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
	MNT="$BATS_TEST_TMPDIR/mnt"
	mkdir -p "$MNT"
	mount -t tmpfs -o size="$1" tmpfs "$MNT"
	export BAKERY_HOME="$MNT/home"
	bakery-order gateway test >/dev/null
}

# ro CMD...: runs CMD with the home read-only: a read-only bind mount in
# a mount namespace of its own (as root, whom chmod does not stop), else
# chmod -R a-w for the run.
ro() {
	if [ "$(id -u)" -eq 0 ]; then
		# shellcheck disable=SC2016 # expanded by the inner sh
		unshare -m sh -c 'mount --bind -o ro "$BAKERY_HOME" "$BAKERY_HOME" && exec "$@"' sh "$@"
	else
		chmod -R a-w "$BAKERY_HOME"
		local rc=0
		"$@" || rc=$?
		chmod -R u+w "$BAKERY_HOME"
		return "$rc"
	fi
}

# need_ro: skips the test where ro cannot make the home read-only.
need_ro() {
	if [ "$(id -u)" -eq 0 ]; then
		# shellcheck disable=SC2016 # expanded by the inner sh
		unshare -m sh -c 'mount --bind -o ro "$1" "$1"' sh "$BATS_TEST_TMPDIR" 2>/dev/null ||
			skip "as root a read-only home needs a mount namespace (unshare -m), not available here"
	fi
}

# as_user USER CMD [ARGS...]: runs CMD as USER (runuser: root only), the
# built programs first on its PATH. They are copied for it, with the
# share files they read (share/menu.tsv as BAKERY_MENU, share/routes), to
# a folder of /tmp that every user may enter, removed once CMD is done:
# the checkout's own bin/ may sit in a folder only its owner enters
# (root's home is 0700, so is what mktemp -d makes), where USER could not
# run them (env: Permission denied, 126). BAKERY_HOME is passed on.
as_user() {
	local user=$1 dir rc=0
	shift
	dir=$(mktemp -d /tmp/bakery-as-user.XXXXXX)
	chmod 0755 "$dir"
	mkdir "$dir/bin" "$dir/share"
	cp "$TOP"/bin/bakery* "$dir/bin/"
	cp "$TOP/share/menu.tsv" "$TOP/share/routes" "$dir/share/"
	runuser -u "$user" -- env PATH="$dir/bin:$PATH" \
		BAKERY_MENU="$dir/share/menu.tsv" BAKERY_HOME="$BAKERY_HOME" "$@" || rc=$?
	rm -rf "$dir"
	return "$rc"
}
