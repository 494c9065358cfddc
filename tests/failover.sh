#!/usr/bin/env bash
# failover.sh [RUNS [ORDERS]] — a host lost mid-load, nothing acknowledged
# lost (docs/adr/0011-a-standby-on-jetstream.md), on one machine:
#
#   three nats-servers in a cluster (R3); host A's home, the primary, and
#   host B's, its standby, applying the stream (bakery-standby --auto);
#   a client places and pays orders on A, one command each, writing down
#   every answer. Once a seeded share of them is answered, every process
#   of A is killed (SIGKILL: its commands, its lease renewer, its
#   nats-server) and A's home deleted. B takes the lease once it has
#   ended and becomes the primary; the client sends again, to B, each
#   command it had no answer for, with the same key. Then B consumes and
#   relays, and tests/checker reads B's home.
#
# One JSON line a run: orders answered placed and paid, lost and applied
# twice (the checker's), the time from the kill to B's first answer (and
# to the exit of the command that gave it), and the checker's verdict; a
# last line sums the runs. Exit 1 when any run lost or doubled anything,
# or failed. BAKERY_TEST_BIN: the programs.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-1}
ORDERS=${2:-40}
BIN=${BAKERY_TEST_BIN:-$TOP/bin}
export PATH="$BIN:$TOP/bin:$PATH"
# shellcheck source=tests/nats.bash
. "$TOP/tests/nats.bash"
CHECKER=${BAKERY_CHECKER:-$TOP/build/tests/checker}
DAY=$(date -u -d tomorrow +%F)
LEASE=3

now_ms() { date +%s%3N; }
# answered FILE: copies its input, writing the time its first line came
# to FILE: when the client had its answer, which a command gives before
# it sends what it recorded and exits.
answered() {
	local line
	IFS= read -r line || return 0
	now_ms >"$1"
	printf '%s\n' "$line"
	cat
}
# late: false once two minutes passed since the kill (kill_at, run_one's).
late() { [ "$kill_at" = 0 ] || [ $(($(now_ms) - kill_at)) -lt 120000 ]; }

# lose_a I: host A lost while order I is placed there, the way this run
# was given:
#   kill         SIGKILL of A's processes, its command among them, and
#                of its nats-server, its home deleted
#   before_send  A's command killed after a local commit, before its
#                record (replica.before_send), then as kill
#   after_send   ... after its record, before its answer
#   group        A's command a --batch of new files killed midway
#                (batch.after_commit), then as kill
#   stop         a partition: A's processes stopped (SIGSTOP) past the
#                lease, its server and home kept; once B took over, A
#                is asked for an order and continued: what it answers
#                after losing the lease must be on B, and its answers to
#                new commands count in old_answers
lose_a() {
	local i=$1 n=$((1 + RANDOM % 3)) out=$dir/inflight.out inflight=
	case $WAY in
	before_send | after_send)
		BAKERY_CRASH_AT=replica.$WAY:$n bakery-order -H "$A" place \
			--key "k$i" --customer "c$((i % 10))" --day "$DAY" \
			cardamom-bun=1 >"$out" 2>&1 ;;
	group)
		printf '{"cmd":"place","customer":"c%d","day":"%s","items":["cardamom-bun=1"],"key":"k%s"}\n' \
			"$((i % 10))" "$DAY" "$i" "$((i % 10))" "$DAY" "$i-g" |
			BAKERY_CRASH_AT=batch.after_commit:$n \
			bakery-order -H "$A" --batch >"$out" 2>&1 ;;
	*)
		bakery-order -H "$A" place --key "k$i" --customer "c$((i % 10))" \
			--day "$DAY" cardamom-bun=1 >"$out" 2>&1 &
		inflight=$!
		sleep 0.00$((RANDOM % 10)) ;;
	esac
	kill_at=$(now_ms)
	if [ "$WAY" = stop ]; then
		pkill -STOP -f -- "-H $A" 2>/dev/null
		# Past the lease: B takes over meanwhile.
		until grep -q promoted "$dir/b-standby.out" 2>/dev/null; do
			late || break
			sleep 0.2
		done
		# The old primary asked, once it lost the lease: it must refuse.
		BAKERY_BUSY_TIMEOUT_MS=2000 bakery-order -H "$A" place \
			--key "old$i" --customer c0 \
			--day "$DAY" cardamom-bun=1 >>"$dir/old.out" \
			2>>"$dir/old.err" && old_answers=$((old_answers + 1))
		pkill -CONT -f -- "-H $A" 2>/dev/null
		[ -z "$inflight" ] || wait "$inflight"
		# What it answered after the stop is B's too: the checker is
		# told of it.
		jq -r 'select(.id) | .id' "$out" "$dir/old.out" 2>/dev/null \
			>>"$dir/answered-by-a.txt"
	fi
	pkill -KILL -f -- "-H $A" 2>/dev/null
	kill -KILL "${NATS_PIDS[0]}" 2>/dev/null
	rm -rf "$A"
}

# cluster_up DIR HOME: three nats-servers in DIR, BAKERY_QUEUE set to
# them, the queue's streams made from HOME. A cluster that has not
# formed 30 s after its start (seen: a node that never hears of the
# meta leader, "no suitable peers for placement" for as long as it runs)
# is stopped and started again, three times at most.
cluster_up() {
	local try
	for try in 1 2 3; do
		rm -rf "$1"
		nats_cluster_start "$1" >/dev/null || { cluster_down; continue; }
		export BAKERY_QUEUE=$NATS_URL
		for _ in $(seq 60); do
			bakery-queue -H "$2" init --replicas 3 >/dev/null 2>&1 &&
				return 0
			sleep 0.5
		done
		echo "failover: the cluster did not form (try $try)" >&2
		cluster_down
	done
	return 1
}

cluster_down() {
	local p
	for p in "${NATS_PIDS[@]}"; do nats_stop "$p" 2>/dev/null; done
	NATS_PIDS=()
}

run_one() {
	local seed=$1 dir A B i id kill_at=0 first_b=0 first_b_exit=0 at target
	local old_answers=0
	local WAY=${FAILOVER_WAY:-}
	[ -n "$WAY" ] || { local ways=(kill before_send after_send group stop)
		WAY=${ways[$((seed % 5))]}; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/bakery-failover.XXXXXX")
	A=$dir/a B=$dir/b
	RANDOM=$seed
	at=$((ORDERS / 4 + RANDOM % (ORDERS / 2)))
	cluster_up "$dir/cluster" "$A" || { cluster_down; return 1; }
	export BAKERY_SANDBOX=default
	bakery-order -H "$A" gateway test >/dev/null
	bakery-order -H "$B" gateway test >/dev/null
	bakery-standby -H "$A" --primary --lease-seconds "$LEASE" >/dev/null &&
		bakery-standby -H "$B" --standby >/dev/null ||
		{ cluster_down; return 1; }
	bakery-standby -H "$A" --lease-seconds "$LEASE" 2>"$dir/a-lease.err" &
	bakery-standby -H "$B" --auto --lease-seconds "$LEASE" \
		>"$dir/b-standby.out" 2>"$dir/b-standby.err" &
	local standby=$!
	target=$A
	: >"$dir/placed.txt"
	: >"$dir/paid.txt"
	for i in $(seq "$ORDERS"); do
		if [ "$i" = "$at" ] && [ "$target" = "$A" ]; then
			lose_a "$i"
			target=$B
		fi
		# Each command until answered: on B, a standby until it takes
		# over, refused (69) meanwhile; a run whose B has not answered
		# two minutes after the kill fails.
		while :; do
			late || break 2
			id=$(bakery-order -H "$target" place --key "k$i" \
				--customer "c$((i % 10))" --day "$DAY" cardamom-bun=1 \
				2>>"$dir/client.err" | answered "$dir/answer.at" |
				jq -r .id) && [ -n "$id" ] &&
				[ "$id" != null ] && break
			[ "$target" = "$B" ] || { target=$B; continue; }
			sleep 0.1
		done
		if [ "$first_b" = 0 ] && [ "$target" = "$B" ]; then
			first_b=$(cat "$dir/answer.at") first_b_exit=$(now_ms)
		fi
		echo "$id" >>"$dir/placed.txt"
		until bakery-order -H "$target" pay "$id" >/dev/null 2>>"$dir/client.err"; do
			late || break 2
			[ "$target" = "$B" ] || target=$B
			sleep 0.1
		done
		echo "$id" >>"$dir/paid.txt"
	done
	kill "$standby" 2>/dev/null
	wait "$standby" 2>/dev/null
	# B sends what A left unsent and delivers everything; the cluster,
	# one node short, may still be electing its streams' leaders: each
	# is run again until it succeeds (a minute at most), then once more.
	for _ in $(seq 60); do
		bakery-relay -H "$B" --all >/dev/null 2>>"$dir/drain.err" &&
			bakery-consume -H "$B" --drain >/dev/null 2>>"$dir/drain.err" &&
			break
		sleep 1
	done
	bakery-relay -H "$B" --all >/dev/null 2>>"$dir/drain.err"
	bakery-consume -H "$B" --drain >/dev/null 2>>"$dir/drain.err"
	local verdict
	touch "$dir/answered-by-a.txt"
	cat "$dir/answered-by-a.txt" >>"$dir/placed.txt"
	verdict=$("$CHECKER" --drained --placed "$dir/placed.txt" --paid "$dir/paid.txt" "$B" 2>"$dir/checker.err")
	local ok=$?
	# Every order placed and paid: one B never answered fails the run.
	[ "$(sort -u "$dir/paid.txt" | wc -l)" = "$ORDERS" ] || ok=2
	cluster_down
	[ "$old_answers" = 0 ] || ok=3
	jq -cn --argjson seed "$seed" --argjson verdict "${verdict:-null}" \
		--arg way "$WAY" --argjson old_answers "$old_answers" \
		--argjson placed "$(sort -u "$dir/placed.txt" | wc -l)" \
		--argjson paid "$(sort -u "$dir/paid.txt" | wc -l)" \
		--argjson kill_after "$at" --argjson ok "$ok" \
		--argjson takeover_ms "$((first_b > 0 ? first_b - kill_at : -1))" \
		--argjson exited_ms "$((first_b > 0 ? first_b_exit - kill_at : -1))" \
		--argjson promoted "$(grep -c promoted "$dir/b-standby.out")" \
		'{seed: $seed, way: $way, placed: $placed, paid: $paid, killed_after: $kill_after,
		  old_answers: $old_answers,
		  takeover_ms: $takeover_ms, exited_ms: $exited_ms, promoted: $promoted,
		  lost: ($verdict.lost // null), applied_twice: ($verdict.applied_twice // null),
		  stuck: ($verdict.stuck // null), checker_exit: $ok}'
	if [ "$ok" = 0 ] && [ -z "${FAILOVER_KEEP:-}" ]; then rm -rf "$dir"; else echo "kept: $dir" >&2; fi
	return "$ok"
}

LOG=${FAILOVER_LOG:-$(mktemp "${TMPDIR:-/tmp}/bakery-failover-log.XXXXXX")}
: >"$LOG"
failed=0
for r in $(seq "$RUNS"); do
	out=$(run_one "$r") || failed=$((failed + 1))
	printf '%s\n' "$out" | tee -a "$LOG"
done
# The sum: lost and applied twice over every run, the takeover's median
# and longest, and the runs that failed.
jq -sc --argjson failed "$failed" '[.[] | select(.seed)] |
	(map(.takeover_ms) | sort) as $t | (map(.exited_ms) | sort) as $e |
	{runs: length, failed: $failed, placed: (map(.placed) | add),
	 lost: (map(.lost // 0) | add), applied_twice: (map(.applied_twice // 0) | add),
	 takeover_ms_median: ($t[(length / 2 | floor)] // null),
	 takeover_ms_max: ($t[-1] // null),
	 exited_ms_median: ($e[(length / 2 | floor)] // null),
	 exited_ms_max: ($e[-1] // null)}' "$LOG"
[ -n "${FAILOVER_LOG:-}" ] || rm -f "$LOG"
[ "$failed" = 0 ]
