#!/usr/bin/env bats
# Two homes, one cluster: the "several hosts" layout of docs/nats.md on one
# machine. A three-node JetStream cluster on loopback with R3 streams; home
# A holds the sandboxes shop-a and default, home B holds shop-b, and each
# consumes only its own (bakery-consume --follow -s S). Both homes take
# orders while their consumers are SIGKILLed at random and the stream
# leader is SIGKILLed and restarted. Every order of each home is applied
# once in that home (tests/checker and bakery-show), none in the other.
load helpers
load ../nats
bats_require_minimum_version 1.5.0

# Orders per home.
ORDERS=${BAKERY_TEST_TWO_HOMES_ORDERS:-30}
exec {stderr_fd}>&2

teardown() {
	local p f
	touch "$BATS_TEST_TMPDIR/stop"
	[ -n "${BATS_TEST_COMPLETED:-}" ] ||
		diagnose 2>&1 | sed 's/^/# 58-two-homes: /' >&"$stderr_fd"
	for f in "$BATS_TEST_TMPDIR"/*.pid; do
		[ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
	done
	for p in "${LOOPS[@]:-}"; do
		[ -z "$p" ] || wait "$p" 2>/dev/null || true
	done
	for p in "${NATS_PIDS[@]:-}"; do
		[ -z "$p" ] || nats_stop "$p"
	done
}

diagnose() {
	local f
	for f in "$BATS_TEST_TMPDIR"/*.err "$BATS_TEST_TMPDIR"/check.* \
		"$BATS_TEST_TMPDIR"/cluster/n?.log; do
		[ -s "$f" ] && { echo "-- $f (last 15):"; tail -15 "$f"; }
	done
	[ -n "${BAKERY_QUEUE:-}" ] && timeout 20 bakery-queue stats 2>&1
	return 0
}

# consumer HOME SANDBOX: bakery-consume --follow -s SANDBOX in HOME, run
# again (as its systemd unit would) whenever it exits or is killed, until
# $BATS_TEST_TMPDIR/stop. Its pid is in HOME-name.SANDBOX.pid, its lines in
# HOME-name.SANDBOX.jsonl.
consumer() {
	local home=$1 s=$2 name
	name=$(basename "$home").$s
	while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
		BAKERY_HOME=$home bakery-consume --follow -s "$s" --visibility 3 \
			>>"$BATS_TEST_TMPDIR/$name.jsonl" 2>>"$BATS_TEST_TMPDIR/$name.err" &
		echo $! >"$BATS_TEST_TMPDIR/$name.pid"
		wait $! || true # killed: run again (bats runs with set -e)
		sleep 0.2 # a supervisor's pause before it starts the consumer again
	done
}

# produce HOME SANDBOX...: places and pays ORDERS orders in HOME, spread
# over its sandboxes; "SANDBOX ID" lines in HOME.placed and HOME.paid (the
# checker's --placed and --paid). A place that fails recorded nothing
# (HOME.refused); a pay is tried again, up to three times.
produce() {
	local home=$1 i s id st
	shift
	local sandboxes=("$@")
	export BAKERY_HOME=$home
	for i in $(seq "$ORDERS"); do
		s=${sandboxes[i % ${#sandboxes[@]}]}
		st=0
		id=$(bakery-order -s "$s" place --customer "c$((i % 5))" --day "$DAY" \
			cardamom-bun=1 2>>"$home.err" | jq -r .id) || st=$?
		if [ "$st" != 0 ] || [[ "$id" != ord_* ]]; then
			echo "place $i: $st" >>"$home.refused"
			continue
		fi
		echo "$s $id" >>"$home.placed"
		for _ in 1 2 3; do
			bakery-order -s "$s" pay "$id" >/dev/null 2>>"$home.err" &&
				{ echo "$s $id" >>"$home.paid"; break; }
			sleep 1 # a client's pause before it tries again, while the cluster elects
		done
	done
}

lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# owed HOME SANDBOX...: outbox rows left in those sandboxes of HOME.
outbox_left() {
	local home=$1 s
	shift
	for s in "$@"; do
		find "$home/sandboxes/$s" -name '*.db' -exec sqlite3 {} \
			"select count(*) from outbox" \; 2>/dev/null
	done | awk '{ n += $1 } END { print n + 0 }'
}

# confirmed HOME SANDBOX: the orders whose kitchen card is confirmed,
# sorted, one per line (an order twice would show twice).
confirmed() {
	BAKERY_HOME=$1 bakery-show -s "$2" kitchen/board |
		jq -r '.state.cards[] | select(.status == "confirmed") | .order' | sort
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "two homes on one R3 cluster, each consuming only its sandboxes (-s): consumers and the stream leader killed; every order once in its home, none in the other" {
	A=$BATS_TEST_TMPDIR/a B=$BATS_TEST_TMPDIR/b
	for h in "$A" "$B"; do
		mkdir -p "$h"
		BAKERY_HOME=$h bakery-order gateway test >/dev/null
	done
	nats_cluster_init "$BATS_TEST_TMPDIR/cluster"
	leader=$(nats_stream_leader BAKERY_EVENTS)
	li=${leader#n}

	LOOPS=()
	consumer "$A" shop-a 3>&- & LOOPS+=($!)
	consumer "$A" default 3>&- & LOOPS+=($!)
	consumer "$B" shop-b 3>&- & LOOPS+=($!)
	produce "$A" shop-a default 3>&- & pa=$!
	produce "$B" shop-b 3>&- & pb=$!

	# A consumer SIGKILLed every 0.5 to 1.5 s while the homes take orders;
	# a third of the way in, the stream leader dies and comes back 2 s on.
	total=$((2 * ORDERS)) killed=0 leader_killed=
	RANDOM=58
	while kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null; do
		sleep 0.$((RANDOM % 10 + 5))
		f=$(printf '%s\n' "$BATS_TEST_TMPDIR"/*.pid | sed -n "$((RANDOM % 3 + 1))p")
		kill -KILL "$(cat "$f")" 2>/dev/null && killed=$((killed + 1))
		done_now=$(($(lines "$A.placed") + $(lines "$B.placed") + $(lines "$A.refused") + $(lines "$B.refused")))
		if [ -z "$leader_killed" ] && [ "$done_now" -ge $((total / 3)) ]; then
			kill -KILL "${NATS_PIDS[$li]}"
			wait "${NATS_PIDS[$li]}" 2>/dev/null || true
			leader_killed=yes
			sleep 2 # the leader stays down 2 s of real time: the outage under test
			nats_node_start "$BATS_TEST_TMPDIR/cluster" "$li"
		fi
	done
	wait "$pa" "$pb"
	[ "$leader_killed" = yes ]
	[ "$killed" -gt 0 ]
	assert_equal $(($(lines "$A.placed") + $(lines "$A.refused"))) "$ORDERS"
	assert_equal $(($(lines "$B.placed") + $(lines "$B.refused"))) "$ORDERS"
	assert_equal "$(lines "$A.paid")" "$(lines "$A.placed")"
	assert_equal "$(lines "$B.paid")" "$(lines "$B.placed")"

	# Drain: what a send could not place during the election goes now (the
	# relay timer of each home); the consumers take the rest.
	for _ in $(seq 60); do
		for s in shop-a default; do BAKERY_HOME=$A bakery-relay -s "$s" --all >/dev/null 2>&1; done
		BAKERY_HOME=$B bakery-relay -s shop-b --all >/dev/null 2>&1
		[ "$(bakery-queue stats 2>/dev/null | jq '."bakery-events" | .ready + .leased')" = 0 ] &&
			[ "$(outbox_left "$A" shop-a default)" = 0 ] &&
			[ "$(outbox_left "$B" shop-b)" = 0 ] && break
		sleep 1
	done
	touch "$BATS_TEST_TMPDIR/stop"
	for f in "$BATS_TEST_TMPDIR"/*.pid; do kill -TERM "$(cat "$f")" 2>/dev/null || true; done
	for p in "${LOOPS[@]}"; do wait "$p" || true; done
	assert_equal "$(bakery-queue stats | jq -c '[."bakery-events".ready, ."bakery-events-dlq".ready]')" "[0,0]"

	# Each consumer delivered its own sandbox's events only.
	for f in "$BATS_TEST_TMPDIR"/*.jsonl; do
		s=${f##*/}
		s=${s#*.}
		s=${s%.jsonl}
		assert_equal "$(jq -rR 'fromjson? | .sandbox // empty' "$f" | sort -u)" "$s"
	done
	# The checker, per home: every recorded event applied once at every
	# subscriber it routes to, nothing lost, nothing twice, nothing stuck.
	for h in "$A" "$B"; do
		deliveries=()
		for f in "$BATS_TEST_TMPDIR/$(basename "$h")".*.jsonl; do deliveries+=(--deliveries "$f"); done
		run --separate-stderr "$TOP/build/tests/checker" -v --drained \
			--placed "$h.placed" --paid "$h.paid" "${deliveries[@]}" "$h"
		echo "$stderr" >"$BATS_TEST_TMPDIR/check.$(basename "$h")"
		assert_success
		echo "$output" | jq -e --argjson n "$(lines "$h.placed")" \
			'.orders == $n and .paid == $n and .lost == 0 and .applied_twice == 0 and .unexpected == 0 and .stuck == 0'
	done
	# None in the other: a home has only its sandboxes, and each sandbox's
	# kitchen confirmed exactly its orders, once each.
	assert_equal "$(ls "$A/sandboxes")" "$(printf 'default\nshop-a')"
	assert_equal "$(ls "$B/sandboxes")" shop-b
	for hs in "$A shop-a" "$A default" "$B shop-b"; do
		read -r h s <<<"$hs"
		assert_equal "$(confirmed "$h" "$s")" "$(awk -v s="$s" '$1 == s { print $2 }' "$h.paid" | sort)"
	done
	echo "# $ORDERS orders a home: A placed $(lines "$A.placed"), B placed $(lines "$B.placed"), refused $(($(lines "$A.refused") + $(lines "$B.refused"))); leader $leader killed, $killed consumer kills; 0 lost, 0 applied twice, none in the other home" >&3
}
