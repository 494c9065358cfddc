#!/usr/bin/env bats
# A three-node JetStream cluster on loopback with R3 streams: the stream
# leader is SIGKILLed while orders are placed, paid and consumed, then
# restarted. Prints the duplicate deliveries the subscribers absorbed.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
load helpers
load ../nats
bats_require_minimum_version 1.5.0

ORDERS=${BAKERY_TEST_CLUSTER_ORDERS:-1000}
# The stderr bats started with: a failure's diagnosis goes there, so that
# prove (make check), which shows none of a test's own output, shows it.
exec {stderr_fd}>&2

teardown() {
	local p
	touch "$BATS_TEST_TMPDIR/stop"
	[ -n "${BATS_TEST_COMPLETED:-}" ] ||
		diagnose 2>&1 | sed 's/^/# 56-nats-cluster: /' >&"$stderr_fd"
	for p in "${NATS_PIDS[@]:-}"; do
		[ -z "$p" ] || nats_stop "$p"
	done
}

# diagnose: on a failure, what the test collected and what the queue and
# the servers say now.
diagnose() {
	local d=$BATS_TEST_TMPDIR f
	if [ -s "${BATS_OUT:-}" ]; then
		echo "-- the test's output (last 20: an assertion's message):"
		tail -20 "$BATS_OUT"
	fi
	echo "placed $(lines "$d/placed.txt"), paid $(lines "$d/paid.txt"), refused $(lines "$d/refused.txt"), silent $(lines "$d/silent.txt"), pays tried again $(lines "$d/pay-failed.txt")"
	for f in refused.txt silent.txt pay-failed.txt; do
		[ -s "$d/$f" ] && { echo "-- $f (last 20):"; tail -20 "$d/$f"; }
	done
	for f in produce.err consume.err; do
		[ -s "$d/$f" ] && { echo "-- $f (last 30):"; tail -30 "$d/$f"; }
	done
	if [ -s "$d/consumed.jsonl" ]; then
		echo "-- consumed.jsonl: outcomes, and events never acked"
		jq -r .outcome "$d/consumed.jsonl" | sort | uniq -c
		jq -rs 'group_by(.id) | map(select(all(.outcome != "acked"))) |
			.[] | [.[0].id, .[0].type, (map(.outcome) | join(","))] | @tsv' \
			"$d/consumed.jsonl" | head -20
	fi
	if [ -n "${BAKERY_QUEUE:-}" ]; then
		echo "-- bakery-queue stats, dead letters:"
		timeout 20 bakery-queue stats 2>&1
		timeout 20 bakery-queue peek --dlq --limit 5 2>&1 | cut -c1-400
		echo "-- outbox rows left: $(find "$BAKERY_HOME/sandboxes/default" -name '*.db' -exec \
			sqlite3 {} "select count(*) from outbox" \; 2>/dev/null |
			awk '{n += $1} END {print n + 0}')"
	fi
	for f in "$d"/cluster/n?.log; do
		[ -e "$f" ] && { echo "-- $f (last 15):"; tail -15 "$f"; }
	done
	return 0
}

# produce FIRST LAST: places and pays orders FIRST..LAST, one line each in
# placed.txt (order id) and paid.txt. A place that exits non-zero recorded
# nothing: it is a refused order (refused.txt, with its status), not a lost
# one. A pay is idempotent (the order id is its key): one that fails is
# tried again, up to three times.
produce() {
	local i out st id try
	for i in $(seq "$1" "$2"); do
		st=0
		out=$(bakery-order place --customer "c$((i % 10))" --day "$DAY" \
			cardamom-bun=1 2>>"$BATS_TEST_TMPDIR/produce.err") || st=$?
		if [ "$st" != 0 ]; then
			echo "place $i exited $st" >>"$BATS_TEST_TMPDIR/refused.txt"
			continue
		fi
		id=$(jq -r .id <<<"$out")
		if [[ "$id" != ord_* ]]; then
			echo "place $i exited 0 and printed '$out'" >>"$BATS_TEST_TMPDIR/silent.txt"
			continue
		fi
		echo "$id" >>"$BATS_TEST_TMPDIR/placed.txt"
		for try in 1 2 3; do
			st=0
			bakery-order pay "$id" >/dev/null \
				2>>"$BATS_TEST_TMPDIR/produce.err" || st=$?
			[ "$st" = 0 ] && break
			echo "pay $id exited $st (try $try)" >>"$BATS_TEST_TMPDIR/pay-failed.txt"
			sleep 1 # a client's pause before it tries again, while the cluster elects
		done
		[ "$st" = 0 ] && echo "$id" >>"$BATS_TEST_TMPDIR/paid.txt"
	done
}

# lines FILE: how many lines FILE has, 0 when it is not there yet.
lines() {
	if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi
}

@test "SIGKILL of the stream leader while orders (1,000 unless told) are placed, paid and consumed: 0 lost, 0 applied twice" {
	nats_cluster_init "$BATS_TEST_TMPDIR/cluster"
	run --separate-stderr bakery-queue init --replicas 3
	assert_success
	[ "$(jq -s '[.[] | select(.stream) | .replicas] | unique' <<<"$output" | jq -c .)" = "[3]" ]
	leader=$(nats_stream_leader BAKERY_EVENTS)
	li=${leader#n}

	# Consumers run throughout; one that fails (the leader gone) starts again.
	(
		while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
			bakery-consume --visibility 5 2>>"$BATS_TEST_TMPDIR/consume.err" ||
				echo "consume exited $?" >>"$BATS_TEST_TMPDIR/consume.err"
			sleep 0.1 # a supervisor's pause before it starts the consumer again
		done
	) >"$BATS_TEST_TMPDIR/consumed.jsonl" &
	consumer=$!
	half=$((ORDERS / 2))
	produce 1 "$half" & p1=$!
	produce $((half + 1)) "$ORDERS" & p2=$!
	# A third of the way in, the leader dies without a word; it comes back.
	while [ $(($(lines "$BATS_TEST_TMPDIR/placed.txt") + $(lines "$BATS_TEST_TMPDIR/refused.txt"))) -lt $((ORDERS / 3)) ]; do
		sleep 0.2
	done
	kill -KILL "${NATS_PIDS[$li]}"
	wait "${NATS_PIDS[$li]}" 2>/dev/null || true
	sleep 2 # the leader stays down 2 s of real time: the outage under test
	nats_node_start "$BATS_TEST_TMPDIR/cluster" "$li"
	wait "$p1" "$p2"
	# Every place answered: with an order id, or with an error and a
	# non-zero status (refused: nothing recorded). Every placed order
	# was paid.
	placed=$(sort -u "$BATS_TEST_TMPDIR/placed.txt" | wc -l)
	refused=$(lines "$BATS_TEST_TMPDIR/refused.txt")
	assert_equal $((placed + refused)) "$ORDERS"
	assert_equal "$(sort -u "$BATS_TEST_TMPDIR/paid.txt" | wc -l)" "$placed"

	# Drain: rows the relay could not send during the failover go now.
	for i in $(seq 60); do
		bakery-relay --all >/dev/null 2>&1 &&
		[ "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased')" = 0 ] &&
		[ -z "$(find "$BAKERY_HOME/sandboxes/default" -name '*.db' -exec sqlite3 {} \
			"select 1 from outbox limit 1" \; 2>/dev/null)" ] && break
		sleep 1
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$consumer"
	assert_equal "$(bakery-queue stats | jq -c '[."bakery-events".ready, ."bakery-events-dlq".ready]')" "[0,0]"

	# 0 lost, 0 applied twice: each order once in every subscriber that
	# keeps a row per order.
	once='[.[]] | (length == ($n | tonumber)) and (group_by(.) | all(length == 1))'
	bakery-show kitchen/board | jq -e --arg n "$placed" "[.state.tickets[].order] | $once" >/dev/null
	bakery-show kitchen/board | jq -e --arg n "$placed" "[.state.cards[] | select(.status == \"confirmed\") | .order] | $once" >/dev/null
	bakery-show "schedule/$DAY" | jq -e --arg n "$placed" "[.state.reservations[].order] | $once" >/dev/null
	bakery-show "schedule/$DAY" | jq -e '.state.holds | length == 0' >/dev/null
	for c in $(seq 0 9); do bakery-show "inbox/c$c"; done |
		jq -se --arg n "$placed" "[.[].state.receipts[].order] | $once" >/dev/null
	for c in $(seq 0 9); do bakery-show "customer/c$c"; done |
		jq -se --arg n "$placed" "[.[].state.orders[].order] | $once" >/dev/null

	# Every delivery is a line (acked, retried, lease-lost...); each one
	# past an event's first reached subscribers that had applied it.
	distinct=$(jq -s 'map(select(.outcome == "acked") | .id) | unique | length' "$BATS_TEST_TMPDIR/consumed.jsonl")
	assert_equal "$distinct" $((placed * 3))
	deliveries=$(jq -s 'length' "$BATS_TEST_TMPDIR/consumed.jsonl")
	outcomes=$(jq -r .outcome "$BATS_TEST_TMPDIR/consumed.jsonl" | sort | uniq -c |
		awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}')
	echo "# $ORDERS places: $placed orders, $refused refused; leader $leader killed; 0 lost, 0 applied twice; $deliveries deliveries ($outcomes) for $distinct events: $((deliveries - distinct)) duplicate deliveries absorbed; $(lines "$BATS_TEST_TMPDIR/pay-failed.txt") pays tried again; $(cat "$BATS_TEST_TMPDIR/consume.err" 2>/dev/null | grep -c delete_asked_again) deletes asked again" >&3
}

@test "a cluster without a quorum: place answers within its brief wait, and the relay sends its event once the quorum is back" {
	nats_cluster_init "$BATS_TEST_TMPDIR/cluster"
	run --separate-stderr bakery-order place --customer c1 --day "$DAY" cardamom-bun=1
	assert_success
	# Two of three nodes gone: nothing JetStream holds answers, but the
	# connection to the third does.
	nats_stop "${NATS_PIDS[1]}"
	nats_stop "${NATS_PIDS[2]}"
	t0=$(date +%s%N)
	run --separate-stderr bakery-order place --customer c2 --day "$DAY" cardamom-bun=1
	t1=$(date +%s%N)
	assert_success
	id=$(jq -r .id <<<"$output")
	[[ "$id" == ord_* ]]
	grep -q "relay_error" <<<"$stderr"
	# Its own send waited QUEUE_BRIEF_WAIT_MS (1 s) for each request, not
	# the driver's 5 s: a bound on a wait, not a speed (5 s and more
	# before).
	echo "# place took $(((t1 - t0) / 1000000)) ms" >&3
	[ $(((t1 - t0) / 1000000)) -lt 4500 ]
	# The event stays in the order's outbox; the quorum back, the relay
	# sends it.
	file=$(find "$BAKERY_HOME/sandboxes" -name "*${id#ord_}*.db")
	[ "$(sqlite3 "$file" 'select count(*) from outbox')" = 1 ]
	nats_node_start "$BATS_TEST_TMPDIR/cluster" 1
	nats_node_start "$BATS_TEST_TMPDIR/cluster" 2
	for _ in $(seq 60); do
		bakery-relay --all >/dev/null 2>&1 && break
		sleep 1
	done
	run --separate-stderr bakery-relay --all
	assert_success
	[ "$(sqlite3 "$file" 'select count(*) from outbox')" = 0 ]
	# Both events queued (a node just back may answer with what it
	# held before it caught up: asked again).
	for _ in $(seq 20); do
		n=$(bakery-queue stats | jq '."bakery-events".ready')
		[ "$n" = 2 ] && break
		sleep 0.5
	done
	[ "$n" = 2 ]
}
