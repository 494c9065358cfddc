#!/bin/bash
# run.sh — bakery's benchmarks side by side (make bench).
#
# Every part runs BENCH_RUNS times (3) in a scratch folder on the disk that
# TMPDIR names (/var/tmp by default; never a tmpfs, or the fsyncs are free),
# and the table shows the median with min–max. Ratios are of medians taken
# in the same run. BENCH_JSON=FILE also writes the figures as JSON, and
# BENCH_MD=FILE puts the table into FILE as a new section, before the
# runs it holds: make bench gives docs/costs.json and docs/costs.md, so
# that one run writes both (the words about the run are a person's).
# BENCH_QUICK=1 shrinks every size so that the harness itself can be
# tested (make check does); its figures mean nothing. BENCH_PEERS=0 leaves
# out the peers that need the network or a server (plainjob from npm, NATS).
#
# What each part measures is in docs/costs.md; the programs it runs are
# the other files of this folder.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$TOP/build/bench
export PATH="$TOP/bin:$PATH"
export BAKERY_MENU="$TOP/share/menu.tsv"
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_NOW BAKERY_CRASH_AT BAKERY_LOG \
	BAKERY_SYNC BAKERY_STRIPE_KEY OTEL_EXPORTER_OTLP_ENDPOINT \
	OTEL_EXPORTER_OTLP_TRACES_ENDPOINT OTEL_SDK_DISABLED TRACEPARENT TRACESTATE
RUNS=${BENCH_RUNS:-3}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	B0_N=50 B1_N=50 B2_N=50 B3_N=5 B3_STEADY_N=10 B3_RATE=100 B4_N=3
	B5_N=20 B5_SMALL=100 B5_LARGE=1000 B5_FEW=10 B5_MANY=30 B5_RSS_N=200
	STRACE_N=20 B7_N=10 B8_N=20 B9_SMALL=20 B9_LARGE=100 B9_N=5
	B10_N=4 B10_ROUNDS=3 B11_N=5 B11_BATCH_N=10
else
	B0_N=2000 B1_N=10000 B2_N=10000 B3_N=2000 B3_STEADY_N=1000 B3_RATE=100
	B4_N=50 B5_N=1000 B5_SMALL=1000 B5_LARGE=1000000 B5_FEW=100
	B5_MANY=10000 B5_RSS_N=100000 STRACE_N=1000 B7_N=100 B8_N=1000
	B9_SMALL=200 B9_LARGE=5000 B9_N=50 B10_N=64 B10_ROUNDS=30
	B11_N=100 B11_BATCH_N=500
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/var/tmp}/bakery-bench.XXXXXX")
NATS_PID=
SINK_PID=
NATS_PIDS=()
cleanup() {
	[ -z "$NATS_PID" ] || kill "$NATS_PID" 2>/dev/null || true
	for p in "${NATS_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -z "${B11_APPLIER:-}" ] || kill "$B11_APPLIER" 2>/dev/null || true
	[ -z "$SINK_PID" ] || kill "$SINK_PID" 2>/dev/null || true
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
FIGS=$SCRATCH/figures
mkdir -p "$FIGS"

note() { echo "bench: $*" >&2; }
now() { date +%s.%N; }
# calc EXPR: a number, 3 significant decimals; null if a figure is missing.
calc() {
	case $1 in *null*) echo null ;; *) awk "BEGIN { printf \"%.3f\", $1 }" ;; esac
}
# add NAME VALUE: one run's value of a figure.
add() { echo "$2" >> "$FIGS/$1"; }
# median/min/max NAME; null for a part that did not run.
has() { [ -s "$FIGS/$1" ]; }
median() { has "$1" || { echo null; return; }; sort -g "$FIGS/$1" | awk '{ v[NR] = $1 } END {
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
lo() { has "$1" && sort -g "$FIGS/$1" | head -1 || echo null; }
hi() { has "$1" && sort -g "$FIGS/$1" | tail -1 || echo null; }
# figure PROGRAM-OUTPUT NAME: the value of "NAME value" in the output.
figure() { printf '%s\n' "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
# fresh: an empty home, exported. The last run's home stays until the end:
# removing its thousands of files would make the next minute's new files
# ten times slower (an ext4 without a journal skips, reading its table
# block, each inode freed in the last minute; docs/costs.md, "Deletions").
fresh() {
	BAKERY_HOME=$(mktemp -d "$SCRATCH/home.XXXXXX")
	export BAKERY_HOME
	bakery-order gateway test >/dev/null # fanout pays: no money moves
}
fsyncs() { # fsyncs COMMAND...: fsync and fdatasync calls it made
	# LeakSanitizer cannot run under ptrace (a SANITIZE=1 build).
	strace -f -c -e trace=fsync,fdatasync -o "$SCRATCH/strace" \
		env ASAN_OPTIONS=detect_leaks=0 "$@" >/dev/null
	awk '$NF == "total" { print $(NF - 1) }' "$SCRATCH/strace"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
# feed N KEY: places N orders (customers c0..c49, days 1 to 7) with keys
# KEY-I, then pays them, through bakery-order --batch: two processes, as
# a script would. Prints the lines that did not succeed, if any.
feed() {
	awk -v n="$1" -v k="$2" 'BEGIN { for (i = 0; i < n; i++)
		printf "{\"cmd\":\"place\",\"customer\":\"c%d\",\"day\":\"2026-12-%02d\",\"items\":[\"cardamom-bun=2\",\"country-loaf=1\"],\"key\":\"%s-%d\"}\n",
			i % 50, 1 + i % 7, k, i }' > "$SCRATCH/feed.in"
	bakery-order --batch < "$SCRATCH/feed.in" > "$SCRATCH/feed.placed" || true
	jq -c '{cmd: "pay", order: .result.id}' "$SCRATCH/feed.placed" |
		bakery-order --batch > "$SCRATCH/feed.paid" || true
	cat "$SCRATCH/feed.placed" "$SCRATCH/feed.paid" | jq -c 'select(.exit != 0)'
}

# drain_instructions PART N: instructions an event of one bakery-consume
# --drain under callgrind, which must exit 0 (a crash at exit, after the
# last line, would still count) with its N paid orders' 3 N events all
# acked (B7, B9).
drain_instructions() {
	valgrind --tool=callgrind --callgrind-out-file="$SCRATCH/$1.cg" \
		bakery-consume --drain > "$SCRATCH/$1.out" 2> "$SCRATCH/$1.err" || {
		echo "bench: $1: bakery-consume --drain exited $?" >&2
		exit 1
	}
	acked=$(grep -c '"outcome":"acked"' "$SCRATCH/$1.out" || true)
	[ "$acked" = $((3 * $2)) ] || {
		echo "bench: $1: $acked of $((3 * $2)) events acked" >&2
		exit 1
	}
	calc "$(awk '$1 == "summary:" { print $2 }' "$SCRATCH/$1.cg") / (3 * $2)"
	rm -f "$SCRATCH/$1".*
}

# BENCH_PARTS: which parts run, "0 1 2 3 4 5 6 7 8 9 10 11" by default.
PARTS=" ${BENCH_PARTS:-0 1 2 3 4 5 6 7 8 9 10 11} "
want() { case $PARTS in *" $1 "*) return 0 ;; esac; return 1; }
B1_BYTES=null B1_FSYNCS=null B2_FSYNCS=null B2_QUEUE_BYTES=null
B4_FSYNCS_PLACE=null B4_FSYNCS_PAY=null
B5_RSS=null B5_RSS_TENTH=null B5_RSS_LAST=null B6_STATE="not run"
B7_IPE=null B7_STATE="not run" B7_TRACED_IPE=null B7_TRACED_RATIO=null
B7_TRACED_STATE="not run"
B9_SMALL_IPE=null B9_LARGE_IPE=null B9_RATIO=null B9_STATE="not run"
B11_STATE="not run"

LOAD_START=$(load)
JOURNAL=$(bakery-order -V | sed -n 's/.*journal_mode=\([a-z]*\).*/\1/p')
STARTED=$(date -u +%Y-%m-%dT%H:%MZ)

if want 0; then
# B0 — the disk's limit: single-row commits with the sqlite3 shell, and dd.
# The shell first on PATH is bin/sqlite3 on the linked SQLite (the one
# bakery runs, WAL), the system's on SQLITE=system; B1 and B3 are taken
# against B0 in the journal mode bakery runs.
b0_sqlite() { # MODE
	local db=$SCRATCH/b0.db
	rm -f "$db" "$db"-*
	{
		echo "PRAGMA journal_mode=$1; PRAGMA synchronous=FULL;"
		echo "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
		awk -v n="$B0_N" 'BEGIN { for (i = 0; i < n; i++)
			printf "INSERT INTO t(v) VALUES (\x27%0200d\x27);\n", i }'
	} > "$SCRATCH/b0.sql"
	local t0 t1
	t0=$(now)
	sqlite3 "$db" < "$SCRATCH/b0.sql" > /dev/null
	t1=$(now)
	calc "$B0_N / ($t1 - $t0)"
}
note "B0 limits"
for _ in $(seq "$RUNS"); do
	add b0_wal "$(b0_sqlite wal)"
	add b0_truncate "$(b0_sqlite truncate)"
	t0=$(now)
	dd if=/dev/zero of="$SCRATCH/dd" bs=4k count="$B0_N" oflag=dsync 2>/dev/null
	t1=$(now)
	add b0_dd "$(calc "$B0_N / ($t1 - $t0)")"
done
rm -f "$SCRATCH/dd" "$SCRATCH"/b0.*
fi

if want 1; then
# B1 — the outbox: N commands recorded in one process.
note "B1 outbox"
for _ in $(seq "$RUNS"); do
	fresh
	out=$("$BENCH/outbox" "$B1_N")
	add b1 "$(figure "$out" commits_per_s)"
done
B1_BYTES=$(calc "$(stat -c %s "$BAKERY_HOME/sandboxes/default/order/bench.db") / $B1_N")
fresh
B1_FSYNCS=$(calc "$(fsyncs "$BENCH/outbox" "$STRACE_N") / $STRACE_N")
fi

if want 2; then
# B2 — the queue hop, and plainjob doing the same at the same setting.
PLAINJOB=$SCRATCH/plainjob
plainjob_ok=0
note "B2 installing plainjob@0.0.14 and better-sqlite3@12 in $PLAINJOB"
if [ "${BENCH_PEERS:-1}" = 1 ] &&
	command -v node > /dev/null && command -v npm > /dev/null &&
	mkdir -p "$PLAINJOB" && cp "$TOP/tests/bench/plainjob.mjs" "$PLAINJOB" &&
	(cd "$PLAINJOB" && echo '{"type":"module","private":true}' > package.json &&
	npm install --silent --no-audit --no-fund plainjob@0.0.14 \
		better-sqlite3@12 > /dev/null 2>&1); then
	plainjob_ok=1
else
	note "B2 plainjob: cannot install it; its figures are left out"
fi
note "B2 queue hop"
for _ in $(seq "$RUNS"); do
	for sync in full normal; do
		fresh
		out=$(BAKERY_SYNC=$sync "$BENCH/hop" "$B2_N")
		add "b2_$sync" "$(figure "$out" msgs_per_s)"
		if [ "$plainjob_ok" = 1 ]; then
			rm -f "$SCRATCH"/pj.db*
			out=$(node "$PLAINJOB/plainjob.mjs" "$SCRATCH/pj.db" "$B2_N" "$sync")
			add "plainjob_$sync" "$(figure "$out" msgs_per_s)"
		fi
	done
done
rm -f "$SCRATCH"/pj.db*
fresh
B2_FSYNCS=$(calc "$(fsyncs "$BENCH/hop" "$STRACE_N") / $STRACE_N")
"$BENCH/hop" "$STRACE_N" > /dev/null
B2_QUEUE_BYTES=$(calc "$(stat -c %s "$BAKERY_HOME/queue.db") / $STRACE_N")
fi

if want 3; then
# B3 — fan-out: paid orders to every subscriber, placed and paid by a
# script through bakery-order --batch; latency at a steady rate.
note "B3 fan-out"
B3_EVENTS=$((3 * B3_N)) # OrderPlaced, PaymentSucceeded, OrderPaid
for _ in $(seq "$RUNS"); do
	fresh
	t0=$(now)
	failed=$(feed "$B3_N" b3)
	[ -z "$failed" ] || { echo "bench: B3: $failed" >&2; exit 1; }
	bakery-consume --drain > "$SCRATCH/b3.out"
	t1=$(now)
	acked=$(grep -c '"outcome":"acked"' "$SCRATCH/b3.out" || true)
	[ "$acked" = "$B3_EVENTS" ] || {
		echo "bench: B3: $acked of $B3_EVENTS events acked" >&2
		exit 1
	}
	add b3 "$(calc "$B3_EVENTS / ($t1 - $t0)")"
	fresh
	out=$("$BENCH/fanout" steady "$B3_STEADY_N" "$B3_RATE" \
		bakery-consume --follow)
	add b3_p50 "$(figure "$out" p50_ms)"
	add b3_p99 "$(figure "$out" p99_ms)"
	add b3_unapplied "$(figure "$out" unapplied)"
done
fi

if want 4; then
# B4 — one command as a whole process, against one sqlite3 INSERT.
note "B4 process cost"
fresh
sqlite3 "$SCRATCH/b4.db" "PRAGMA journal_mode=$JOURNAL;
	CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);" > /dev/null
for _ in $(seq "$RUNS"); do
	t0=$(now)
	for j in $(seq "$B4_N"); do
		bakery-order place --customer c1 --day 2026-12-01 \
			cardamom-bun=1 > /dev/null
	done
	t1=$(now)
	for j in $(seq "$B4_N"); do
		sqlite3 "$SCRATCH/b4.db" "PRAGMA synchronous=FULL;
			INSERT INTO t(v) VALUES ('$j')" > /dev/null
	done
	t2=$(now)
	add b4_order "$(calc "($t1 - $t0) * 1000 / $B4_N")"
	add b4_sqlite "$(calc "($t2 - $t1) * 1000 / $B4_N")"
done
rm -f "$SCRATCH"/b4.db*
# fsyncs a place and a pay, over STRACE_N of each (at least 20) in a home
# that has placed and paid before, so that checkpoints count their share.
fresh
bakery-order place --customer c1 --day 2026-12-01 cardamom-bun=1 |
	jq -r .id | xargs bakery-order pay > /dev/null
n=$((STRACE_N < 20 ? 20 : STRACE_N > 200 ? 200 : STRACE_N))
B4_FSYNCS_PLACE=$(calc "$(fsyncs bash -c "for i in \$(seq $n); do
	bakery-order place --customer c1 --day 2026-12-01 cardamom-bun=1 |
		jq -r .id; done > '$SCRATCH/ids'") / $n")
B4_FSYNCS_PAY=$(calc "$(fsyncs xargs -n1 bakery-order pay < "$SCRATCH/ids") / $n")
fi

if want 8; then
# B8 — many commands from one process: B8_N places, then their pays, each
# a bakery-order --batch fed from a file (groups of 64, one queue send
# each), against B0's WAL commits of this run.
note "B8 batch"
for _ in $(seq "$RUNS"); do
	fresh
	t0=$(now)
	failed=$(feed "$B8_N" b8)
	t1=$(now)
	[ -z "$failed" ] || { echo "bench: B8: $failed" >&2; exit 1; }
	add b8 "$(calc "2 * $B8_N / ($t1 - $t0)")"
done
fi

if want 5; then
# B5 — growth. A backlog built with SQL straight into queue.db: messages
# that are ready and older than the hop's, so the consumer takes them first.
backlog() { # N
	sqlite3 "$BAKERY_HOME/queue.db" "PRAGMA synchronous=OFF;
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
		WHERE i < $1)
	INSERT INTO messages(queue, id, sandbox, body, visible_at, enqueued_at)
	SELECT 'bakery-events', printf('evt_backlog%08d', i), 'default',
	printf('{\"specversion\":\"1.0\",\"id\":\"evt_backlog%08d\",'
	|| '\"type\":\"OrderPlaced\",\"source\":\"bakery:default/order/hop\",'
	|| '\"subject\":\"order/hop\",\"time\":\"2026-11-30T00:00:00.000Z\",'
	|| '\"datacontenttype\":\"application/json\",\"sandbox\":\"default\",'
	|| '\"data\":{\"order\":\"hop\",\"day\":\"2026-12-01\",\"note\":\"%s\"}}',
	i, printf('%.200c', 'x')), 0, 0 FROM n;"
}
note "B5 backlog"
for size in "$B5_SMALL" "$B5_LARGE"; do
	fresh
	"$BENCH/hop" 10 > /dev/null # creates the queue and the subscriber
	backlog "$size"
	for _ in $(seq "$RUNS"); do
		out=$("$BENCH/hop" "$B5_N")
		add "b5_backlog_$size" "$(calc "1000 / $(figure "$out" msgs_per_s)")"
	done
done

# The due-alarm scan: objects whose outbox the queue refused, copied from
# one real object; FEW of them due, the rest armed for tomorrow.
note "B5 alarm scan"
alarms() { # OBJECTS
	fresh
	bakery-fault set queue-refuses
	bakery-order place --customer c1 --day 2026-12-01 cardamom-bun=1 \
		> /dev/null 2>&1
	bakery-fault clear queue-refuses
	local dir=$BAKERY_HOME/sandboxes/default/order template
	template=$(ls "$dir"/ord_*.db)
	sqlite3 "$template" "UPDATE alarm SET fire_at = 1"
	mv "$template" "$SCRATCH/template.db"
	rm -f "$dir"/*
	(umask 077 && seq -f "o%07g.db" "$1" | (cd "$dir" &&
		xargs sh -c 'tee "$@" < "$0" > /dev/null' "$SCRATCH/template.db"))
	sqlite3 "$BAKERY_HOME/alarms.db" "DELETE FROM alarms;
	WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
		WHERE i < $1)
	INSERT INTO alarms(sandbox, address, fire_at)
	SELECT 'default', printf('order/o%07d', i),
	CASE WHEN i % ($1 / 10) = 0 THEN 0 ELSE 4102444800000 END FROM n;"
	for _ in $(seq "$RUNS"); do
		# The due ten again, as they were before the last run fired them.
		# In WAL the last run's -wal (kept: persistent) holds its
		# commits; a file copied over must not find it.
		for k in $(seq 10); do
			f=$dir/$(printf 'o%07d.db' $((k * $1 / 10)))
			rm -f "$f-wal" "$f-shm"
			cp "$SCRATCH/template.db" "$f"
		done
		# A run that finds an alarm disarmed removes its entry.
		sqlite3 "$BAKERY_HOME/alarms.db" "
		WITH RECURSIVE n(i) AS (SELECT $1 / 10 UNION ALL
			SELECT i + $1 / 10 FROM n WHERE i < $1)
		INSERT INTO alarms(sandbox, address, fire_at)
		SELECT 'default', printf('order/o%07d', i), 0 FROM n WHERE 1
		ON CONFLICT DO UPDATE SET fire_at = 0"
		t0=$(now)
		bakery-relay --due > "$SCRATCH/b5.out"
		t1=$(now)
		[ "$(grep -c '"sent":1' "$SCRATCH/b5.out")" = 10 ] || {
			echo "bench: B5: the due scan did not fire 10 alarms" >&2
			exit 1
		}
		add "b5_alarm_$1" "$(calc "($t1 - $t0) * 1000")"
	done
}
alarms "$B5_FEW"
alarms "$B5_MANY"

# Peak RSS of a following consumer over many messages: OrderPlaced events
# spread over sandboxes of 100 orders and five days each.
note "B5 consumer memory"
fresh
"$BENCH/hop" 1 > /dev/null
sqlite3 "$BAKERY_HOME/queue.db" "DELETE FROM messages;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
	WHERE i < $B5_RSS_N)
INSERT INTO messages(queue, id, sandbox, body, visible_at, enqueued_at)
SELECT 'bakery-events', printf('evt_rss%08d', i), printf('s%04d', i / 100),
printf('{\"specversion\":\"1.0\",\"id\":\"evt_rss%08d\",'
|| '\"type\":\"OrderPlaced\",\"source\":\"bakery:s%04d/order/ord_%08d\",'
|| '\"subject\":\"order/ord_%08d\",\"time\":\"2026-11-30T00:00:00.000Z\",'
|| '\"datacontenttype\":\"application/json\",\"sandbox\":\"s%04d\",'
|| '\"data\":{\"customer\":\"c1\",\"day\":\"2026-12-0%d\",\"delivery\":null,'
|| '\"items\":[{\"item\":\"cardamom-bun\",\"qty\":1,\"price_cents\":450}],'
|| '\"total_cents\":450,\"currency\":\"eur\",'
|| '\"placed_at\":\"2026-11-30T00:00:00.000Z\",\"order\":\"ord_%08d\"}}',
i, i / 100, i, i, i / 100, 1 + i % 5, i), 0, 0 FROM n;"
BAKERY_SYNC=normal bakery-consume --follow > /dev/null &
pid=$!
rss_tenth=
left=$B5_RSS_N
while [ "$left" -gt 0 ]; do
	sleep 0.5
	left=$(sqlite3 "$BAKERY_HOME/queue.db" ".timeout 5000" \
		"SELECT count(*) FROM messages WHERE queue = 'bakery-events'")
	if [ -z "$rss_tenth" ] && [ "$left" -le $((B5_RSS_N * 9 / 10)) ]; then
		rss_tenth=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
	fi
done
B5_HWM=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
B5_RSS_END=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
kill "$pid"
wait "$pid" || true
B5_RSS=$(calc "$B5_HWM / 1024")
B5_RSS_TENTH=$(calc "${rss_tenth:-$B5_RSS_END} / 1024")
B5_RSS_LAST=$(calc "$B5_RSS_END / 1024")
fi

if want 6; then
# B6 — NATS: the hop on bakery's NATS driver against raw nats.c, on the
# nats-server the tests use (tests/nats.bash: make deps's 2.10), with its
# default sync (every two minutes) and with sync_interval: always (an fsync
# per write: an acked publish survives a power cut; docs/nats.md).
note "B6 NATS"
B6_STATE=blocked
# shellcheck disable=SC1091 # nats_start, nats_stop, nats_server_ready
. "$TOP/tests/nats.bash"
if [ "${BENCH_PEERS:-1}" = 1 ] && nats_server_ready && [ -x "$BENCH/raw-nats" ]; then
	for sync in default always; do
		suffix=${sync#default}
		suffix=${suffix:+_$suffix}
		NATS_SYNC=${sync#default} nats_start "$SCRATCH/nats$suffix" > /dev/null
		for _ in $(seq "$RUNS"); do
			out=$("$BENCH/raw-nats" "$NATS_URL" "$B2_N")
			add "b6_raw$suffix" "$(figure "$out" msgs_per_s)"
			fresh
			out=$(BAKERY_QUEUE=$NATS_URL "$BENCH/hop" "$B2_N")
			add "b6_bakery$suffix" "$(figure "$out" msgs_per_s)"
		done
		nats_stop "$NATS_PID"
		NATS_PID=
	done
	B6_STATE=measured
fi
fi

if want 7; then
# B7 — the consumer's CPU: instructions an event of bakery-consume --drain
# over N placed and paid orders, counted by callgrind (the same count on
# every run, so it runs once; a loaded machine does not change it).
note "B7 consumer instructions"
B7_STATE=blocked
if ldd "$(command -v bakery-consume)" 2>/dev/null | grep -q libasan; then
	B7_STATE="not run: a sanitizer build, which valgrind cannot run"
elif command -v valgrind > /dev/null; then
	b7_feed() {
		fresh
		for i in $(seq "$B7_N"); do
			bakery-order place --customer "c$i" --day 2026-12-01 cardamom-bun=1
		done | jq -r .id | xargs -n1 bakery-order pay > /dev/null
	}
	b7_feed
	B7_IPE=$(drain_instructions B7 "$B7_N")
	B7_STATE=measured
	# Tracing on: the same drain exporting its spans (OTLP/JSON) to a
	# local collector that takes them all (otlp-sink.py), in the same
	# run; the orders placed and paid without.
	B7_TRACED_STATE="not run: no python3"
	if command -v python3 > /dev/null; then
		b7_feed
		rm -f "$SCRATCH/sink.port" "$SCRATCH/sink.out"
		python3 "$TOP/tests/bench/otlp-sink.py" "$SCRATCH/sink.port" "$SCRATCH/sink.out" &
		SINK_PID=$!
		for _ in $(seq 100); do [ -s "$SCRATCH/sink.port" ] && break; sleep 0.1; done
		B7_TRACED_IPE=$(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(cat "$SCRATCH/sink.port")" \
			drain_instructions B7 "$B7_N")
		kill "$SINK_PID" 2>/dev/null || true
		SINK_PID=
		dropped=$(bakery-status --json | jq .spans_dropped)
		if [ "$dropped" = 0 ] && [ -s "$SCRATCH/sink.out" ]; then
			B7_TRACED_RATIO=$(calc "$B7_TRACED_IPE / $B7_IPE")
			B7_TRACED_STATE=measured
		else
			B7_TRACED_IPE=null
			B7_TRACED_STATE="not measured: $dropped spans not sent"
		fi
	fi
fi
fi

if want 9; then
# B9 — the day's growth: the consumer's instructions an event (callgrind,
# as B7) for B9_N orders placed and paid into a day that already holds
# B9_SMALL orders, and into one that holds B9_LARGE (50 customers, one
# day, all consumed before), in one run: what an event costs as its day
# fills.
note "B9 the day's growth"
B9_STATE=blocked
# b9 DAY_ORDERS: instructions an event of the drain of B9_N more orders.
b9() {
	fresh
	local n
	for n in "$1" "$B9_N"; do
		awk -v n="$n" -v k="$n" 'BEGIN { for (i = 0; i < n; i++)
			printf "{\"cmd\":\"place\",\"customer\":\"c%d\",\"day\":\"2026-12-01\",\"items\":[\"cardamom-bun=2\"],\"key\":\"b9-%s-%d\"}\n",
				i % 50, k, i }' | bakery-order --batch |
			jq -c '{cmd: "pay", order: .result.id}' |
			bakery-order --batch > /dev/null
		[ "$n" = "$B9_N" ] || bakery-consume --drain > /dev/null
	done
	drain_instructions B9 "$B9_N"
}
if ldd "$(command -v bakery-consume)" 2>/dev/null | grep -q libasan; then
	B9_STATE="not run: a sanitizer build, which valgrind cannot run"
elif command -v valgrind > /dev/null; then
	B9_SMALL_IPE=$(b9 "$B9_SMALL")
	B9_LARGE_IPE=$(b9 "$B9_LARGE")
	B9_RATIO=$(calc "$B9_LARGE_IPE / $B9_SMALL_IPE")
	B9_STATE=measured
fi
fi

if want 10; then
# B10 — a group of new files made durable, each way, on this disk
# (docs/adr/0009-a-group-of-births.md): milliseconds a file.
note "B10 a group's syncs"
mkdir -p "$SCRATCH/b10"
for _ in $(seq "$RUNS"); do
	out=$("$BENCH/syncs" "$SCRATCH/b10" "$B10_N" "$B10_ROUNDS")
	for way in seq each writeback threads syncfs; do
		add "b10_$way" "$(figure "$out" "$way")"
	done
done
fi

if want 11; then
# B11 — a replicated home (docs/adr/0011-a-standby-on-jetstream.md) on a
# three-node cluster, its standby applying meanwhile, against the same
# home unreplicated on the same cluster: a place and a pay as whole
# processes (p50 and p99 of B11_N each), and --batch commands a second
# (B11_BATCH_N places, then their pays).
note "B11 replicated home"
B11_STATE=blocked
# shellcheck disable=SC1091 # nats_cluster_init, nats_server_ready
. "$TOP/tests/nats.bash"
# ms COMMAND...: how long it took, in milliseconds.
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >"$SCRATCH/ms.out"
	t1=$(date +%s%N)
	echo "$(calc "($t1 - $t0) / 1000000")"
}
# pct FILE P: the P-th percentile of the numbers in FILE.
pct() { sort -g "$1" | awk -v p="$2" '{ v[NR] = $1 } END {
	i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] }'; }
if [ "${BENCH_PEERS:-1}" = 1 ] && nats_server_ready &&
	command -v bakery-standby >/dev/null &&
	nats_cluster_init "$SCRATCH/cluster" >/dev/null; then
	ways=(plain replicated apart)
	for run in $(seq "$RUNS"); do
		# Each run starts with the next way: what the first way of a
		# run meets (the file system after the last run's files, the
		# cluster's state) falls on each way in turn.
		for i in 0 1 2; do
			way=${ways[(run + i) % 3]}
			fresh
			if [ "$way" != plain ]; then
				# The last way's home holds the lease for its 10 s
				# (exit 75 meanwhile): this one takes it when free.
				for _ in $(seq 30); do
					st=0
					bakery-standby --primary >/dev/null 2>&1 || st=$?
					[ "$st" = 75 ] || break
					sleep 0.5
				done
				[ "$st" = 0 ] || bakery-standby --primary >/dev/null
				standby_home=$(mktemp -d "$SCRATCH/standby.XXXXXX")
				bakery-standby -H "$standby_home" --standby >/dev/null
			fi
			# replicated: the standby applies meanwhile, on this
			# machine's cores and disk; apart: it is elsewhere (here:
			# not running), as a second host's would be.
			if [ "$way" = replicated ]; then
				bakery-standby -H "$standby_home" 2>/dev/null &
				B11_APPLIER=$!
			fi
			: >"$SCRATCH/b11.place" && : >"$SCRATCH/b11.pay"
			for _ in $(seq "$B11_N"); do
				ms bakery-order place --customer c1 --day 2026-12-01 \
					cardamom-bun=1 >>"$SCRATCH/b11.place"
				id=$(jq -r .id "$SCRATCH/ms.out")
				ms bakery-order pay "$id" >>"$SCRATCH/b11.pay"
			done
			for cmd in place pay; do
				add "b11_${way}_${cmd}_p50" "$(pct "$SCRATCH/b11.$cmd" 50)"
				add "b11_${way}_${cmd}_p99" "$(pct "$SCRATCH/b11.$cmd" 99)"
			done
			t0=$(now)
			failed=$(feed "$B11_BATCH_N" "b11$way")
			t1=$(now)
			[ -z "$failed" ] || { echo "bench: B11 $way: $failed" >&2; exit 1; }
			add "b11_${way}_batch" "$(calc "2 * $B11_BATCH_N / ($t1 - $t0)")"
			if [ -n "${B11_APPLIER:-}" ]; then
				kill "$B11_APPLIER" 2>/dev/null || true
				wait "$B11_APPLIER" 2>/dev/null || true
				B11_APPLIER=
			fi
		done
	done
	nats_cluster_stop
	unset BAKERY_QUEUE
	B11_STATE=measured
fi
fi

# The table.
LOAD_END=$(load)
ratio() { has "$1" && has "$2" && calc "$(median "$1") / $(median "$2")" || echo null; }
B0_REF=b0_$JOURNAL # the shell in the journal mode bakery runs
B1_RATIO=$(ratio b1 "$B0_REF")
B2_FULL=$(ratio b2_full plainjob_full)
B2_NORMAL=$(ratio b2_normal plainjob_normal)
SUBS=3 # subscriber applications per event: (2 + 1 + 6) / 3
B3_RATIO=$(calc "$(median b3) / ($(median "$B0_REF") / (1 + $SUBS))")
B4_RATIO=$(ratio b4_order b4_sqlite)
B5_BACKLOG=$(ratio "b5_backlog_$B5_LARGE" "b5_backlog_$B5_SMALL")
B5_ALARM=$(ratio "b5_alarm_$B5_MANY" "b5_alarm_$B5_FEW")
B6_RATIO=$(ratio b6_bakery b6_raw)
B6_RATIO_ALWAYS=$(ratio b6_bakery_always b6_raw_always)
B6_SYNC_COST=$(ratio b6_bakery_always b6_bakery)
B8_RATIO=$(ratio b8 b0_wal)
B10_RATIO=$(ratio b10_writeback b10_seq)
B11_PLACE=$(ratio b11_replicated_place_p50 b11_plain_place_p50)
B11_PAY=$(ratio b11_replicated_pay_p50 b11_plain_pay_p50)
B11_BATCH=$(ratio b11_replicated_batch b11_plain_batch)
B11_APART_PLACE=$(ratio b11_apart_place_p50 b11_plain_place_p50)
B11_APART_PAY=$(ratio b11_apart_pay_p50 b11_plain_pay_p50)
B11_APART_BATCH=$(ratio b11_apart_batch b11_plain_batch)
# A command a process, from B4: 1000 / its ms.
B8_VS_PROCESS=$(has b8 && has b4_order && calc "$(median b8) * $(median b4_order) / 1000" || echo null)

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
fs=$(df -T "$SCRATCH" | awk 'NR == 2 { print $2 " on " $1 }')
sqlite=$(sqlite3 -version | cut -d' ' -f1)
MACHINE="$(uname -sm), $(nproc) cores ($cpu), $mem, $fs; SQLite $sqlite, bakery journal_mode=$JOURNAL; load $LOAD_START at start, $LOAD_END at end"

row() { # LABEL FIGURE UNIT
	printf '%-46s %10s %-8s %s–%s\n' "$1" "$(median "$2")" "$3" "$(lo "$2")" "$(hi "$2")"
}
line() { printf '%-46s %10s %s\n' "$1" "$2" "$3"; }
{
	echo "bakery bench, $STARTED, $RUNS runs: median (min–max)"
	echo "machine: $MACHINE"
	echo
	row "B0 sqlite3 $sqlite, WAL, FULL" b0_wal commits/s
	row "B0 sqlite3 $sqlite, TRUNCATE, FULL" b0_truncate commits/s
	row "B0 dd oflag=dsync, 4 KiB" b0_dd writes/s
	row "B1 commands recorded, $B1_N, FULL" b1 commits/s
	line "B1 b1_ratio (÷ B0 ${JOURNAL^^})" "$B1_RATIO" "target ≥ 0.8"
	line "B1 fsyncs per event" "$B1_FSYNCS" ""
	line "B1 bytes per event in the object file" "$B1_BYTES" ""
	row "B2 hop, $B2_N, FULL" b2_full msgs/s
	row "B2 hop, $B2_N, NORMAL" b2_normal msgs/s
	if has plainjob_full; then
		row "B2 plainjob, FULL" plainjob_full msgs/s
		row "B2 plainjob, NORMAL" plainjob_normal msgs/s
	fi
	line "B2 b2_vs_plainjob_full" "$B2_FULL" "target ≥ 5"
	line "B2 b2_vs_plainjob_normal" "$B2_NORMAL" "target ≥ 1"
	line "B2 fsyncs per message, FULL" "$B2_FSYNCS" "target ≤ 0.3"
	line "B2 bytes per message in queue.db" "$B2_QUEUE_BYTES" ""
	row "B3 paid orders, $B3_N, FULL" b3 events/s
	line "B3 b3_ratio_floor" "$B3_RATIO" "target ≥ 0.7"
	row "B3 latency p50 at $B3_RATE orders/s" b3_p50 ms
	row "B3 latency p99 at $B3_RATE orders/s" b3_p99 ms
	line "B3 target p99 ≤ 50 ms; orders not applied in 2 min" "$(hi b3_unapplied)" ""
	row "B4 bakery-order place" b4_order ms
	row "B4 sqlite3 FILE INSERT" b4_sqlite ms
	line "B4 b4_ratio" "$B4_RATIO" "target ≤ 2"
	line "B4 fsyncs per place" "$B4_FSYNCS_PLACE" "target ≤ 3"
	line "B4 fsyncs per pay" "$B4_FSYNCS_PAY" "target ≤ 3"
	row "B5 hop per event, $B5_SMALL backlog" "b5_backlog_$B5_SMALL" ms
	row "B5 hop per event, $B5_LARGE backlog" "b5_backlog_$B5_LARGE" ms
	line "B5 b5_backlog_ratio" "$B5_BACKLOG" "target ≤ 1.2"
	row "B5 due scan, $B5_FEW objects, 10 due" "b5_alarm_$B5_FEW" ms
	row "B5 due scan, $B5_MANY objects, 10 due" "b5_alarm_$B5_MANY" ms
	line "B5 b5_alarm_ratio" "$B5_ALARM" "target ≤ 2"
	line "B5 consumer peak RSS, $B5_RSS_N messages" "$B5_RSS" "MiB, target ≤ 32 with objects kept open (RSS $B5_RSS_TENTH at 10%, $B5_RSS_LAST at the end)"
	if has b6_raw; then
		row "B6 raw nats.c" b6_raw msgs/s
	fi
	if has b6_bakery; then
		row "B6 hop on the NATS driver" b6_bakery msgs/s
		line "B6 b6_vs_raw_nats" "$B6_RATIO" "target ≥ 0.7"
		row "B6 raw nats.c, sync_interval always" b6_raw_always msgs/s
		row "B6 hop on the NATS driver, sync_interval always" b6_bakery_always msgs/s
		line "B6 b6_vs_raw_nats, sync_interval always" "$B6_RATIO_ALWAYS" ""
		line "B6 hop, always ÷ default sync" "$B6_SYNC_COST" ""
	else
		line "B6 b6_vs_raw_nats" "-" "$B6_STATE"
	fi
	if [ "$B7_STATE" = measured ]; then
		line "B7 consumer instructions an event" "$(calc "$B7_IPE / 1000000")" "M ($B7_N orders), target ≤ 1 M"
	else
		line "B7 consumer instructions an event" "-" "$B7_STATE"
	fi
	if [ "$B7_TRACED_STATE" = measured ]; then
		line "B7 the same, tracing on (OTLP to a local sink)" "$(calc "$B7_TRACED_IPE / 1000000")" "M"
		line "B7 b7_traced_ratio (on ÷ off)" "$B7_TRACED_RATIO" "target ≤ 1.15"
	else
		line "B7 the same, tracing on" "-" "$B7_TRACED_STATE"
	fi
	row "B8 --batch, $B8_N places + $B8_N pays, FULL" b8 commands/s
	line "B8 b8_ratio (÷ B0 WAL)" "$B8_RATIO" ""
	line "B8 ÷ B4's one process a place" "$B8_VS_PROCESS" ""
	if [ "$B9_STATE" = measured ]; then
		line "B9 instructions an event, $B9_SMALL orders in the day" "$(calc "$B9_SMALL_IPE / 1000000")" "M"
		line "B9 instructions an event, $B9_LARGE orders in the day" "$(calc "$B9_LARGE_IPE / 1000000")" "M"
		line "B9 b9_ratio ($B9_LARGE ÷ $B9_SMALL)" "$B9_RATIO" "target ≤ 1.2"
	else
		line "B9 the day's growth" "-" "$B9_STATE"
	fi
	for way in seq each writeback threads syncfs; do
		row "B10 $B10_N new files made durable: $way" "b10_$way" "ms/file"
	done
	line "B10 b10_ratio (writeback ÷ seq)" "$B10_RATIO" ""
	if [ "$B11_STATE" = measured ]; then
		for way in plain replicated apart; do
			for cmd in place pay; do
				row "B11 $way home, a $cmd, p50" "b11_${way}_${cmd}_p50" ms
				row "B11 $way home, a $cmd, p99" "b11_${way}_${cmd}_p99" ms
			done
			row "B11 $way home, --batch" "b11_${way}_batch" commands/s
		done
		line "B11 b11_place_ratio (replicated ÷ plain p50)" "$B11_PLACE" "target ≤ 2"
		line "B11 b11_pay_ratio (replicated ÷ plain p50)" "$B11_PAY" "target ≤ 2"
		line "B11 b11_batch_ratio (replicated ÷ plain)" "$B11_BATCH" "target ≥ 0.5"
		line "B11 the same, the standby apart: place" "$B11_APART_PLACE" ""
		line "B11 the same, the standby apart: pay" "$B11_APART_PAY" ""
		line "B11 the same, the standby apart: --batch" "$B11_APART_BATCH" ""
	else
		line "B11 replicated home" "$B11_STATE" ""
	fi
} >"$SCRATCH/table"
cat "$SCRATCH/table"

# The code measured, named before the JSON (docs/costs.json) is written:
# after it, a tree whose JSON is tracked would say -dirty.
commit=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo "no git")
if [ -n "${BENCH_JSON:-}" ]; then
	num() { [ "$1" = null ] && echo null || echo "$1"; }
	jq -n --arg machine "$MACHINE" --arg date "$STARTED" \
		--argjson runs "$RUNS" \
		--argjson b0_wal "$(median b0_wal)" \
		--argjson b0_truncate "$(median b0_truncate)" \
		--argjson b0_dd "$(median b0_dd)" \
		--argjson b1 "$(median b1)" \
		--argjson b1_ratio "$(num "$B1_RATIO")" \
		--argjson b1_fsyncs "$B1_FSYNCS" \
		--argjson b2_full "$(median b2_full)" \
		--argjson b2_normal "$(median b2_normal)" \
		--argjson b2_vs_plainjob_full "$(num "$B2_FULL")" \
		--argjson b2_vs_plainjob_normal "$(num "$B2_NORMAL")" \
		--argjson b3 "$(median b3)" \
		--argjson b3_ratio_floor "$B3_RATIO" \
		--argjson b3_p50_ms "$(median b3_p50)" \
		--argjson b3_p99_ms "$(median b3_p99)" \
		--argjson b4_ratio "$(num "$B4_RATIO")" \
		--argjson b4_fsyncs_place "$B4_FSYNCS_PLACE" \
		--argjson b4_fsyncs_pay "$B4_FSYNCS_PAY" \
		--argjson b2_fsyncs "$B2_FSYNCS" \
		--argjson b5_backlog_ratio "$(num "$B5_BACKLOG")" \
		--argjson b5_alarm_ratio "$(num "$B5_ALARM")" \
		--argjson b5_rss_mib "$B5_RSS" \
		--argjson b6_vs_raw_nats "$(num "$B6_RATIO")" \
		--argjson b6_vs_raw_nats_sync_always "$(num "$B6_RATIO_ALWAYS")" \
		--argjson b6_sync_always_vs_default "$(num "$B6_SYNC_COST")" \
		--arg b6_state "$B6_STATE" \
		--argjson b7_instructions_per_event "$B7_IPE" \
		--argjson b7_traced_instructions_per_event "$B7_TRACED_IPE" \
		--argjson b7_traced_ratio "$B7_TRACED_RATIO" \
		--argjson b9_small_instructions_per_event "$B9_SMALL_IPE" \
		--argjson b9_large_instructions_per_event "$B9_LARGE_IPE" \
		--argjson b9_ratio "$B9_RATIO" \
		--argjson b8 "$(median b8)" \
		--argjson b8_ratio "$(num "$B8_RATIO")" \
		--argjson b8_vs_process "$(num "$B8_VS_PROCESS")" \
		--argjson b10_seq_ms "$(median b10_seq)" \
		--argjson b10_writeback_ms "$(median b10_writeback)" \
		--argjson b10_threads_ms "$(median b10_threads)" \
		--argjson b10_syncfs_ms "$(median b10_syncfs)" \
		--argjson b10_ratio "$(num "$B10_RATIO")" \
		--argjson b11_place_p50_ms "$(median b11_replicated_place_p50)" \
		--argjson b11_pay_p50_ms "$(median b11_replicated_pay_p50)" \
		--argjson b11_place_ratio "$(num "$B11_PLACE")" \
		--argjson b11_pay_ratio "$(num "$B11_PAY")" \
		--argjson b11_batch_ratio "$(num "$B11_BATCH")" \
		--argjson b11_apart_place_ratio "$(num "$B11_APART_PLACE")" \
		--argjson b11_apart_pay_ratio "$(num "$B11_APART_PAY")" \
		--argjson b11_apart_batch_ratio "$(num "$B11_APART_BATCH")" \
		--arg b11_state "$B11_STATE" \
		'$ARGS.named' > "$BENCH_JSON"
fi

# The table as the page's newest run: before its first "## The run of" or
# "## The parts run" section, else at its end.
if [ -n "${BENCH_MD:-}" ]; then
	awk -v date="$STARTED" -v commit="$commit" -v table="$SCRATCH/table" \
		-v json="${BENCH_JSON:+${BENCH_JSON##*/}}" '
		function section(  l) {
			print "## The run of " date " (" commit ")"
			print ""
			print "Written by `tests/bench/run.sh`" (json == "" ? "" \
			    : ", its figures as JSON in `" json "` by the same run") "."
			print ""
			print "```"
			while ((getline l < table) > 0)
				print l
			print "```"
			print ""
			done = 1
		}
		!done && /^## The (run of|parts run) / { section() }
		{ print }
		END { if (!done) { print ""; section() } }' "$BENCH_MD" >"$SCRATCH/page"
	cat "$SCRATCH/page" >"$BENCH_MD"
fi
