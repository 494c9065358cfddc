#!/usr/bin/env bash
# failover.sh [RUNS [ORDERS]] — a host lost mid-load, nothing acknowledged
# lost (docs/adr/0011-a-standby-on-jetstream.md), on one machine:
#
#   three nats-servers in a cluster (R3); host A's home, the primary, and
#   host B's, its standby, applying the stream (bakery-standby --auto);
#   a client places and pays orders on A, one command each or, every
#   third order, through A's console (lighttpd and bakery-console over
#   HTTP on 127.0.0.1, its form's key the order's), writing down every
#   answer: a command's output, the console's 303. Once a seeded share
#   of them is answered, every process of A is killed (SIGKILL: its
#   commands, its lease renewer, its web server and the console programs
#   it runs, its nats-server) and A's home deleted. B takes the lease
#   once it has ended and becomes the primary; the client sends again,
#   to B, each command it had no answer for, with the same key (a
#   console order to B's console, signed in there anew, with the key of
#   the form it had from A). Then B consumes and relays, and
#   tests/checker reads B's home.
#
# One JSON line a run: orders answered placed and paid, how many of them
# through the console, lost and applied twice (the checker's), the time
# from the kill to B's first answer (and to the exit of the command that
# gave it), and the checker's verdict; a last line sums the runs. Exit 1
# when any run lost or doubled anything, or failed. BAKERY_TEST_BIN: the
# programs.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-1}
ORDERS=${2:-40}
BIN=${BAKERY_TEST_BIN:-$TOP/bin}
export PATH="$BIN:$TOP/bin:$PATH"
# shellcheck source=tests/nats.bash
. "$TOP/tests/nats.bash"
# shellcheck source=tests/cli/lighttpd.bash
. "$TOP/tests/cli/lighttpd.bash"
CHECKER=${BAKERY_CHECKER:-$TOP/build/tests/checker}
DAY=$(date -u -d tomorrow +%F)
LEASE=3
# The client's console account (sandbox default), made on A.
WEB_PASSWORD=failover-client-password

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

# The console of host a or b (run_one's web_a and web_b: lighttpd's pid
# and URL), as the client's browser: its session's cookie, the last
# answer's headers and body, and the CSRF token and key of the last
# order form read, in $dir/web-SIDE/.
#
# web SIDE PATH [CURL ARGS...]: a request with the session; prints the
# status (000: no answer).
web() {
	local side=$1 path=$2 url
	shift 2
	[ "$side" = a ] && url=${web_a[1]} || url=${web_b[1]}
	curl -s -m 30 -D "$dir/web-$side/headers" -o "$dir/web-$side/body" \
		-w '%{http_code}' -b "$dir/web-$side/jar" -c "$dir/web-$side/jar" \
		-H "Origin: $url" "$@" "$url/console/$path"
}
# web_form SIDE: a new order form, signed in first when the session is
# not there (on B, the first time: sessions are each host's own).
web_form() {
	local side=$1 code
	code=$(web "$side" s/default/)
	if [ "$code" = 303 ]; then
		[ "$(web "$side" signin --data-urlencode name=client \
			--data-urlencode "password=$WEB_PASSWORD")" = 303 ] ||
			return 1
		code=$(web "$side" s/default/)
	fi
	[ "$code" = 200 ] || return 1
	sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' \
		"$dir/web-$side/body" | head -1 >"$dir/web-$side/csrf"
	sed -n 's/.*name="key" value="\([^"]*\)".*/\1/p' \
		"$dir/web-$side/body" | head -1 >"$dir/web-$side/key"
	[ -s "$dir/web-$side/csrf" ] && [ -s "$dir/web-$side/key" ]
}
# web_post SIDE PATH FORM: FORM posted with the session's CSRF token
# (a form read first when there is none); prints the 303's Location.
web_post() {
	local side=$1
	[ -s "$dir/web-$side/csrf" ] || web_form "$side" || return 1
	[ "$(web "$side" "$2" --data-raw "csrf=$(cat "$dir/web-$side/csrf")&$3")" = 303 ] ||
		return 1
	sed -n 's/^Location: //ip' "$dir/web-$side/headers" | tr -d '\r'
}
# web_place SIDE KEY I: order I placed with the form's KEY; prints its id.
web_place() {
	local where
	where=$(web_post "$1" s/default/orders "key=$2&customer=c$(($3 % 10))&day=$DAY&qty.cardamom-bun=1") ||
		return 1
	where=${where#/console/s/default/orders/}
	case $where in
	*'?done=placed' | *'?done=placed-queue-down') echo "${where%%\?*}" ;;
	*) return 1 ;;
	esac
}
# web_pay SIDE ID: order ID paid with the test gateway's card.
web_pay() {
	case $(web_post "$1" "s/default/orders/$2/pay" card=4242424242424242) in
	*'?done=paid' | *'?done=paid-queue-down') return 0 ;;
	*) return 1 ;;
	esac
}
# web_signal SIG PID: SIG to a lighttpd and the console programs it runs,
# its children (they have the home from its configuration, not -H, and
# pkill -f "-H HOME" finds none of them); lighttpd stopped first, so that
# it starts none meanwhile.
web_signal() {
	kill -STOP "$2" 2>/dev/null
	pkill -"$1" -P "$2" 2>/dev/null
	[ "$1" = STOP ] || kill -"$1" "$2" 2>/dev/null
}
# a_alive: the processes of A still there: its commands (-H A), its web
# server and the console programs it runs (BAKERY_HOME=A); none once it
# is lost.
a_alive() {
	local p
	pgrep -f -- "-H $A"
	for p in /proc/[0-9]*; do
		tr '\0' '\n' 2>/dev/null <"$p/environ" |
			grep -qxF "BAKERY_HOME=$A" && echo "${p#/proc/}"
	done
}

# side HOME: a or b. way I: how order I is sent: through the console
# (web) every third order, and the order A is lost on in the ways that
# kill or stop it (the place in flight is then a POST to A's console);
# else the command's (cli), as for that order in the ways whose crash
# point is a command's.
side() { [ "$1" = "$A" ] && echo a || echo b; }
way() {
	case $WAY:$1 in
	kill:"$at" | stop:"$at") echo web ;;
	*:"$at") echo cli ;;
	*) [ $(($1 % 3)) = 0 ] && echo web || echo cli ;;
	esac
}

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
	local i=$1 key=$2 n=$((1 + RANDOM % 3)) out=$dir/inflight.out inflight=
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
		# The console's place (way): a POST to A's console.
		web_place a "$key" "$i" >"$dir/inflight.web" 2>&1 &
		inflight=$!
		sleep 0.00$((RANDOM % 10)) ;;
	esac
	kill_at=$(now_ms)
	if [ "$WAY" = stop ]; then
		pkill -STOP -f -- "-H $A" 2>/dev/null
		web_signal STOP "${web_a[0]}"
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
		web_signal CONT "${web_a[0]}"
		[ -z "$inflight" ] || wait "$inflight"
		# Its console asked too, once the POST in flight is answered.
		web_place a "old$i" 0 >>"$dir/old.web" 2>/dev/null &&
			old_answers=$((old_answers + 1))
		# What it answered after the stop is B's too: the checker is
		# told of it.
		jq -r 'select(.id) | .id' "$dir/old.out" 2>/dev/null \
			>>"$dir/answered-by-a.txt"
		cat "$dir/inflight.web" >>"$dir/answered-by-a.txt"
	fi
	pkill -KILL -f -- "-H $A" 2>/dev/null
	web_signal KILL "${web_a[0]}"
	kill -KILL "${NATS_PIDS[0]}" 2>/dev/null
	rm -rf "$A"
	# Nothing of A is left running (a process being killed is given a
	# second to go).
	local _
	for _ in $(seq 10); do
		[ -n "$(a_alive)" ] || return 0
		sleep 0.1
	done
	echo "failover: processes of A survived the kill: $(a_alive | tr '\n' ' ')" >&2
	survivors=1
}

# hosts_down: the web servers (run_one's web_a, web_b), then the cluster.
hosts_down() {
	[ -z "${web_a[0]:-}" ] || web_signal KILL "${web_a[0]}"
	[ -z "${web_b[0]:-}" ] || web_signal KILL "${web_b[0]}"
	nats_cluster_stop
}

run_one() {
	local seed=$1 dir A B i id kill_at=0 first_b=0 first_b_exit=0 at target
	local old_answers=0 survivors=0 web_a=() web_b=() key
	local WAY=${FAILOVER_WAY:-}
	[ -n "$WAY" ] || { local ways=(kill before_send after_send group stop)
		WAY=${ways[$((seed % 5))]}; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/bakery-failover.XXXXXX")
	A=$dir/a B=$dir/b
	RANDOM=$seed
	at=$((ORDERS / 4 + RANDOM % (ORDERS / 2)))
	nats_cluster_init "$dir/cluster" "$A" >/dev/null || return 1
	export BAKERY_SANDBOX=default
	bakery-order -H "$A" gateway test >/dev/null
	bakery-order -H "$B" gateway test >/dev/null
	bakery-standby -H "$A" --primary --lease-seconds "$LEASE" >/dev/null &&
		bakery-standby -H "$B" --standby >/dev/null ||
		{ nats_cluster_stop; return 1; }
	# The consoles: the account made on A reaches B with console.db;
	# each host's web server on its own home and the same queue, B's
	# started now as A's, serving once B takes over.
	echo "$WEB_PASSWORD" | bakery-console -H "$A" user add client \
		-s default >/dev/null &&
		LIGHTTPD_TMP=$dir/web-a BAKERY_HOME=$A lighttpd_start >/dev/null &&
		web_a=("$LIGHTTPD_PID" "$BASE") &&
		LIGHTTPD_TMP=$dir/web-b BAKERY_HOME=$B lighttpd_start >/dev/null &&
		web_b=("$LIGHTTPD_PID" "$BASE") ||
		{ hosts_down; return 1; }
	bakery-standby -H "$A" --lease-seconds "$LEASE" 2>"$dir/a-lease.err" &
	bakery-standby -H "$B" --auto --lease-seconds "$LEASE" \
		>"$dir/b-standby.out" 2>"$dir/b-standby.err" &
	local standby=$!
	target=$A
	: >"$dir/placed.txt"
	: >"$dir/paid.txt"
	: >"$dir/console.txt"
	for i in $(seq "$ORDERS"); do
		key=
		# A console order's key is its form's, read from the host
		# the client sends to: sent again to B, it is the same order.
		if [ "$(way "$i")" = web ]; then
			until web_form "$(side "$target")"; do
				late || break 2
				[ "$kill_at" != 0 ] || {
					echo "failover: A's console gave no order form" >&2
					break 2
				}
				sleep 0.1
			done
			key=$(cat "$dir/web-$(side "$target")/key")
		fi
		if [ "$i" = "$at" ] && [ "$target" = "$A" ]; then
			lose_a "$i" "$key"
			target=$B
		fi
		# Each command until answered: on B, a standby until it takes
		# over, refused (69, the console's 503) meanwhile; a run whose
		# B has not answered two minutes after the kill fails.
		while :; do
			late || break 2
			if [ -n "$key" ]; then
				id=$(web_place "$(side "$target")" "$key" "$i") &&
					now_ms >"$dir/answer.at"
			else
				id=$(bakery-order -H "$target" place --key "k$i" \
					--customer "c$((i % 10))" --day "$DAY" \
					cardamom-bun=1 2>>"$dir/client.err" |
					answered "$dir/answer.at" | jq -r .id)
			fi && [ -n "$id" ] && [ "$id" != null ] && break
			[ "$target" = "$B" ] || { target=$B; continue; }
			sleep 0.1
		done
		if [ "$first_b" = 0 ] && [ "$target" = "$B" ]; then
			first_b=$(cat "$dir/answer.at") first_b_exit=$(now_ms)
		fi
		echo "$id" >>"$dir/placed.txt"
		[ -z "$key" ] || echo "$id" >>"$dir/console.txt"
		until if [ -n "$key" ]; then web_pay "$(side "$target")" "$id"
			else bakery-order -H "$target" pay "$id" >/dev/null \
				2>>"$dir/client.err"; fi; do
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
	hosts_down
	[ "$old_answers" = 0 ] || ok=3
	[ "$survivors" = 0 ] || ok=4
	jq -cn --argjson seed "$seed" --argjson verdict "${verdict:-null}" \
		--arg way "$WAY" --argjson old_answers "$old_answers" \
		--argjson placed "$(sort -u "$dir/placed.txt" | wc -l)" \
		--argjson console "$(sort -u "$dir/console.txt" | wc -l)" \
		--argjson paid "$(sort -u "$dir/paid.txt" | wc -l)" \
		--argjson kill_after "$at" --argjson ok "$ok" \
		--argjson takeover_ms "$((first_b > 0 ? first_b - kill_at : -1))" \
		--argjson exited_ms "$((first_b > 0 ? first_b_exit - kill_at : -1))" \
		--argjson promoted "$(grep -c promoted "$dir/b-standby.out")" \
		'{seed: $seed, way: $way, placed: $placed, paid: $paid, console: $console,
		  killed_after: $kill_after,
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
jq -sc --argjson failed "$failed" 'def mid: .[length / 2 | floor];
	[.[] | select(.seed)] |
	(map(.takeover_ms) | sort) as $t | (map(.exited_ms) | sort) as $e |
	{runs: length, failed: $failed, placed: (map(.placed) | add),
	 console: (map(.console) | add),
	 lost: (map(.lost // 0) | add), applied_twice: (map(.applied_twice // 0) | add),
	 takeover_ms_median: ($t | mid // null),
	 takeover_ms_max: ($t[-1] // null),
	 exited_ms_median: ($e | mid // null),
	 exited_ms_max: ($e[-1] // null)}' "$LOG"
[ -n "${FAILOVER_LOG:-}" ] || rm -f "$LOG"
[ "$failed" = 0 ]
