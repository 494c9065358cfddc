#!/usr/bin/env bats
# A three-node JetStream cluster on loopback with R3 streams: the stream
# leader is SIGKILLed while orders are placed, paid and consumed, then
# restarted. Prints the duplicate deliveries the subscribers absorbed.
load helpers
load ../nats
bats_require_minimum_version 1.5.0

ORDERS=${BAKERY_TEST_CLUSTER_ORDERS:-1000}

teardown() {
	local p
	touch "$BATS_TEST_TMPDIR/stop"
	for p in "${NATS_PIDS[@]:-}"; do
		[ -z "$p" ] || nats_stop "$p"
	done
}

# produce FIRST LAST: places and pays orders FIRST..LAST, one line each in
# placed.txt (order id) and paid.txt.
produce() {
	local i id
	for i in $(seq "$1" "$2"); do
		id=$(bakery-order place --customer "c$((i % 10))" --day "$DAY" \
			cardamom-bun=1 2>>"$BATS_TEST_TMPDIR/produce.err" | jq -r .id)
		[ -n "$id" ] || continue
		echo "$id" >>"$BATS_TEST_TMPDIR/placed.txt"
		bakery-order pay "$id" >/dev/null 2>>"$BATS_TEST_TMPDIR/produce.err" &&
			echo "$id" >>"$BATS_TEST_TMPDIR/paid.txt"
	done
}

@test "SIGKILL of the stream leader while orders (1,000 unless told) are placed, paid and consumed: 0 lost, 0 applied twice" {
	nats_cluster_start "$BATS_TEST_TMPDIR/cluster"
	export BAKERY_QUEUE=$NATS_URL
	# JetStream answers once the cluster has elected its meta leader.
	for i in $(seq 100); do
		bakery-queue init --replicas 3 >/dev/null 2>&1 && break
		sleep 0.2
	done
	run --separate-stderr bakery-queue init --replicas 3
	assert_success
	[ "$(jq -s '[.[] | select(.stream) | .replicas] | unique' <<<"$output" | jq -c .)" = "[3]" ]
	leader=$("$TOP/tests/nats-tool.py" "127.0.0.1:${NATS_PORTS[0]}" leader BAKERY_EVENTS)
	[[ "$leader" == n[012] ]]
	li=${leader#n}

	# Consumers run throughout; one that fails (the leader gone) starts again.
	(
		while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
			bakery-consume --visibility 5 2>>"$BATS_TEST_TMPDIR/consume.err" ||
				echo "consume exited $?" >>"$BATS_TEST_TMPDIR/consume.err"
			sleep 0.1
		done
	) >"$BATS_TEST_TMPDIR/consumed.jsonl" &
	consumer=$!
	half=$((ORDERS / 2))
	produce 1 "$half" & p1=$!
	produce $((half + 1)) "$ORDERS" & p2=$!
	# A third of the way in, the leader dies without a word; it comes back.
	while [ "$(wc -l <"$BATS_TEST_TMPDIR/placed.txt" 2>/dev/null || echo 0)" -lt $((ORDERS / 3)) ]; do
		sleep 0.2
	done
	kill -KILL "${NATS_PIDS[$li]}"
	wait "${NATS_PIDS[$li]}" 2>/dev/null || true
	sleep 2
	nats_node_start "$BATS_TEST_TMPDIR/cluster" "$li"
	wait "$p1" "$p2"
	assert_equal "$(sort -u "$BATS_TEST_TMPDIR/placed.txt" | wc -l)" "$ORDERS"
	assert_equal "$(sort -u "$BATS_TEST_TMPDIR/paid.txt" | wc -l)" "$ORDERS"

	# Drain: rows the relay could not send during the failover go now.
	for i in $(seq 60); do
		bakery-relay --all >/dev/null 2>&1 &&
		[ "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased')" = 0 ] &&
		[ -z "$(find "$BAKERY_HOME/default" -name '*.db' -exec sqlite3 {} \
			"select 1 from outbox limit 1" \; 2>/dev/null)" ] && break
		sleep 1
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$consumer"
	assert_equal "$(bakery-queue stats | jq -c '[."bakery-events".ready, ."bakery-events-dlq".ready]')" "[0,0]"

	# 0 lost, 0 applied twice: each order once in every subscriber that
	# keeps a row per order.
	once='[.[]] | (length == ($n | tonumber)) and (group_by(.) | all(length == 1))'
	bakery-show kitchen/board | jq -e --arg n "$ORDERS" "[.state.tickets[].order] | $once"
	bakery-show kitchen/board | jq -e --arg n "$ORDERS" "[.state.cards[] | select(.status == \"confirmed\") | .order] | $once"
	bakery-show "schedule/$DAY" | jq -e --arg n "$ORDERS" "[.state.reservations[].order] | $once"
	bakery-show "schedule/$DAY" | jq -e '.state.holds | length == 0'
	for c in $(seq 0 9); do bakery-show "inbox/c$c"; done |
		jq -se --arg n "$ORDERS" "[.[].state.receipts[].order] | $once"
	for c in $(seq 0 9); do bakery-show "customer/c$c"; done |
		jq -se --arg n "$ORDERS" "[.[].state.orders[].order] | $once"

	events=$(jq -s 'map(select(.outcome == "acked")) | length' "$BATS_TEST_TMPDIR/consumed.jsonl")
	distinct=$(jq -s 'map(select(.outcome == "acked") | .id) | unique | length' "$BATS_TEST_TMPDIR/consumed.jsonl")
	assert_equal "$distinct" $((ORDERS * 3))
	echo "# $ORDERS orders, leader $leader killed; $events deliveries acked for $distinct events: $((events - distinct)) duplicate deliveries absorbed" >&3
}
