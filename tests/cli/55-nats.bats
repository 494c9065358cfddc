#!/usr/bin/env bats
# The queue on NATS JetStream (docs/nats.md) against real nats-servers,
# each started here on a free loopback port with a store in the test's
# folder and stopped by pid.
load helpers
load ../nats
bats_require_minimum_version 1.5.0

teardown() {
	local p
	[ -z "${NATS_PID:-}" ] || nats_stop "$NATS_PID"
	[ -z "${PROXY_PID:-}" ] || nats_stop "$PROXY_PID"
	for p in "${NATS_PIDS[@]:-}"; do
		[ -z "$p" ] || nats_stop "$p"
	done
}

outbox_rows() {
	sqlite3 "$BAKERY_HOME/sandboxes/default/$1.db" "select count(*) from outbox"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "nats-server down when the relay sends: rows stay and relay_error is logged; up again: sent once" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	nats_stop "$NATS_PID"
	run --separate-stderr bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_success
	id=$(jq -r .id <<<"$output")
	[[ "$stderr" == *relay_error* ]]
	assert_equal "$(outbox_rows "order/$id")" 1
	run --separate-stderr bakery-relay "order/$id"
	assert_failure
	[[ "$stderr" == *relay_error* ]]
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/default/order/$id.db" "select attempts from outbox")" 2
	# The same port and store again.
	"$NATS_SERVER_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$BATS_TEST_TMPDIR/nats/store" \
		-l "$BATS_TEST_TMPDIR/nats/server2.log" &
	NATS_PID=$!
	nats_wait_port "$NATS_PORT"
	run --separate-stderr bakery-relay "order/$id"
	assert_success
	assert_equal "$(outbox_rows "order/$id")" 0
	# A second relay finds nothing to send; the queue holds one message.
	bakery-relay "order/$id" >/dev/null
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 1
	run --separate-stderr bakery-consume
	assert_success
	assert_equal "$(jq -s 'map(select(.outcome == "acked")) | length' <<<"$output")" 1
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
}

@test "a poison message on NATS reaches the dead letters after exactly max_retries retries" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" pub bakery.events.default.unknown \
		'{"specversion": "1.0", oops' Nats-Msg-Id=evt_poison Bakery-Id=evt_poison \
		Bakery-Sandbox=default >/dev/null
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 3
	assert_success
	run jq -sc '[.[] | select(.id == "evt_poison") | [.delivery, .status, .outcome]]' <<<"$output"
	assert_output '[[1,422,"retried"],[2,422,"retried"],[3,422,"retried"],[4,422,"dead-lettered"]]'
	assert_equal "$(bakery-queue stats | jq -c '[."bakery-events".ready, ."bakery-events-dlq".ready]')" '[0,1]'
	run --separate-stderr bakery-dlq drain
	assert_success
	echo "$output" | jq -e '.id == "evt_poison" and .attempts == 4 and (.error | startswith("malformed envelope"))'
	assert_equal "$(bakery-queue stats | jq '."bakery-events-dlq".ready')" 0
	assert_equal "$(bakery-dlq list | jq -r .id)" evt_poison
	assert_effects_once "$id"
}

@test "a redrive on NATS is not swallowed by the duplicate window" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	[ "$(bakery-dlq list | wc -l)" -eq 2 ]
	bakery-fault clear refuses:kitchen
	placed=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPlaced") | .id')
	# Well inside the 10-minute window of the first send of this id.
	run --separate-stderr bakery-redrive "$placed"
	assert_success
	assert_equal "$(bakery-queue peek | jq -r .id)" "$placed"
	# The rest: the OrderPaid, also inside the window.
	paid=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	run --separate-stderr bakery-redrive --all
	assert_success
	run jq -r '"\(.id) \(.status)"' <<<"$output"
	assert_output "$paid redriven"
	run --separate-stderr bakery-consume
	assert_success
	assert_effects_once "$id"
}

@test "consume -s S on NATS takes only bakery.events.S.>" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	a=$(paid_order ada)
	b=$(BAKERY_SANDBOX=shop2 paid_order bea)
	run --separate-stderr bakery-consume -s shop2
	assert_success
	assert_equal "$(jq -r .sandbox <<<"$output" | sort -u)" shop2
	assert_equal "$(bakery-queue peek | jq -r .sandbox | sort -u)" default
	run --separate-stderr bakery-consume -s default
	assert_success
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
	assert_effects_once "$a"
	BAKERY_SANDBOX=shop2 assert_effects_once "$b"
}

# owed: the messages bakery-events holds (ready or leased).
owed() {
	bakery-queue stats | jq '."bakery-events" | .ready + .leased'
}

# server_kill_restart: SIGKILL the nats-server, then the same port and store.
server_kill_restart() {
	kill -KILL "$NATS_PID"
	wait "$NATS_PID" 2>/dev/null || true
	nats_restart "$BATS_TEST_TMPDIR/nats"
}

@test "what consume removed and a SIGKILLed nats-server brought back is not delivered again to that consumer; a new one's delivery is absorbed" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	# shop2's messages before and after default's: default's are removed
	# from the middle of the stream (nats-server 2.9 keeps such a delete in
	# the block's index, written lazily: a SIGKILL can bring them back).
	a=$(BAKERY_SANDBOX=shop2 paid_order ada)
	b=$(paid_order bea)
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" pub bakery.events.default.unknown \
		'{"specversion": "1.0", oops' Nats-Msg-Id=evt_poison Bakery-Id=evt_poison \
		Bakery-Sandbox=default >/dev/null
	c=$(BAKERY_SANDBOX=shop2 paid_order cy)
	# A batch's acks (bea's three events: the OrderPaid its PaymentSucceeded
	# makes included) and a dead-lettering (the poison); shop2's two
	# orders' OrderPlaced and PaymentSucceeded stay.
	run --separate-stderr bakery-consume -s default --retry-delay 0 --max-retries 1
	assert_success
	assert_equal "$(jq -s 'map(select(.outcome == "acked")) | length' <<<"$output")" 3
	assert_output --partial '"outcome":"dead-lettered"'
	assert_equal "$(owed)" 4
	server_kill_restart
	# What came back was acked: default's consumer does not deliver it.
	run --separate-stderr bakery-consume -s default --retry-delay 0 --max-retries 1
	assert_success
	assert_output ""
	run --separate-stderr bakery-consume -s shop2
	assert_success
	assert_equal "$(jq -s 'map(select(.outcome == "acked")) | length' <<<"$output")" 6
	# A consumer new to the stream delivers what came back: absorbed.
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1
	assert_success
	assert_equal "$(owed)" 0
	assert_equal "$(bakery-queue stats | jq '."bakery-events-dlq".ready')" 1
	assert_effects_once "$b"
	BAKERY_SANDBOX=shop2 assert_effects_once "$a"
	BAKERY_SANDBOX=shop2 assert_effects_once "$c"
	echo "# came back after the SIGKILL and absorbed: $(jq -s 'length' <<<"$output") deliveries" >&3
}

@test "a wipe on NATS purges the sandbox's subjects and fences its old events" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	a=$(paid_order ada)
	BAKERY_SANDBOX=shop2 paid_order bea >/dev/null
	old=$(bakery-order events "$a" | head -1)
	run --separate-stderr bakery-wipe --all
	assert_success
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
	# An envelope recorded before the wipe is accepted and dropped.
	run --separate-stderr bakery-queue send <<<"$old"
	assert_success
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
}

@test "killed after the DLQ publish, before the Term: the poison message is dead-lettered, not lost" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" pub bakery.events.default.unknown \
		'{"specversion": "1.0", oops' Nats-Msg-Id=evt_poison Bakery-Id=evt_poison \
		Bakery-Sandbox=default >/dev/null
	crash_at nats.after_dlq_publish bakery-consume --retry-delay 0 --max-retries 3 --visibility 1
	# The original is still on bakery-events, unacknowledged: once its ack
	# wait passes it comes again, is dead-lettered again and terminated.
	for _ in $(seq 100); do
		run --separate-stderr bakery-consume --retry-delay 0 --max-retries 3 --visibility 1
		[[ "$output" == *dead-lettered* ]] && break
		sleep 0.2
	done
	assert_output --partial '"outcome":"dead-lettered"'
	assert_equal "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased + .delayed')" 0
	run --separate-stderr bakery-dlq drain
	assert_success
	assert_equal "$(bakery-dlq list | jq -r .id)" evt_poison
	assert_equal "$(bakery-queue stats | jq '."bakery-events-dlq".ready')" 0
}

@test "a batch's acks on NATS: every answered message leaves the stream, none comes back" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	for i in $(seq 25); do place "c$i" >/dev/null; done
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 25
	# Batches of 10: every delete of a batch is asked before any answer is read.
	run --separate-stderr bakery-consume --drain --batch 10 --visibility 1
	assert_success
	assert_equal "$(jq -s 'map(select(.outcome == "acked")) | length' <<<"$output")" 25
	[[ "$stderr" != *lease_lost* ]]
	assert_equal "$(bakery-queue stats | jq '."bakery-events".ready')" 0
	# Past the visibility: nothing is delivered again.
	sleep 2 # the ack wait runs on the server's clock: only real time passes it
	run --separate-stderr bakery-consume --drain --visibility 1
	assert_success
	assert_output ""
	assert_equal "$(bakery-show kitchen/board | jq '.state.cards | length')" 25
}

# proxy_swallowing PORT N: a proxy on PORT to the server that swallows the
# answers to the next N message deletes (tests/nats-tool.py proxy): the
# server deletes, the consumer never hears, as from a leader that died.
proxy_swallowing() {
	[ -z "${PROXY_PID:-}" ] || nats_stop "$PROXY_PID"
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" proxy "$1" \
		'$JS.API.STREAM.MSG.DELETE.' "$2" &
	PROXY_PID=$!
	nats_wait_port "$1"
}

@test "a delete whose answer is lost (a leader that applied it and died) is asked again: acked, not lease-lost" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	port=$(nats_free_port)
	proxy_swallowing "$port" 1
	export BAKERY_QUEUE=nats://127.0.0.1:$port
	bakery-queue init >/dev/null
	id=$(place ada)
	run --separate-stderr bakery-consume
	assert_success
	# Asked again, the delete finds the message gone: the first one did
	# it. Reported lease-lost, it would be said to come again, and never
	# would.
	assert_equal "$(jq -sc 'map(.outcome)' <<<"$output")" '["acked"]'
	[[ "$stderr" == *delete_asked_again* ]]
	assert_equal "$(bakery-queue stats | jq -c '."bakery-events" | [.ready, .leased]')" "[0,0]"
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
	# The same for a poison message's delete, once it is in the dead letters.
	"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" pub bakery.events.default.unknown \
		'{"specversion": "1.0", oops' Nats-Msg-Id=evt_poison Bakery-Id=evt_poison \
		Bakery-Sandbox=default >/dev/null
	proxy_swallowing "$port" 1
	run --separate-stderr bakery-consume --max-retries 0
	assert_success
	assert_equal "$(jq -sc 'map(.outcome)' <<<"$output")" '["dead-lettered"]'
	[[ "$stderr" == *delete_asked_again* ]]
	assert_equal "$(bakery-queue stats | jq -c '[."bakery-events".ready, ."bakery-events-dlq".ready]')" '[0,1]'
}

@test "a lost answer to the delete of a message in the middle of the stream is asked again and settled at once: no 30 s stall" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	port=$(nats_free_port)
	export BAKERY_QUEUE=nats://127.0.0.1:$port
	proxy_swallowing "$port" 1
	bakery-queue init >/dev/null
	# shop2's OrderPlaced before and after default's: default's is in the
	# middle of the stream, and a delete asked again there is answered
	# "sequence N not found" (10043), not "no message found".
	BAKERY_SANDBOX=shop2 place ada >/dev/null
	id=$(place bea)
	BAKERY_SANDBOX=shop2 place cy >/dev/null
	start=$(date +%s%N)
	run --separate-stderr bakery-consume -s default
	took=$((($(date +%s%N) - start) / 1000000))
	echo "# consume with a lost delete answer: $took ms" >&3
	assert_success
	[[ "$stderr" == *delete_asked_again* ]]
	assert_equal "$(jq -sc 'map(.outcome)' <<<"$output")" '["acked"]'
	# The answer waited for is 5 s; asked again it is settled at once,
	# not after the 30 s an unsettled delete is asked for.
	[ "$took" -lt 20000 ]
	assert_equal "$(bakery-queue stats | jq -c '."bakery-events" | [.ready, .leased]')" "[2,0]"
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
}

# stream_moved_back: stops the server, removes BAKERY_EVENTS's message
# blocks and index (msgs/) and keeps its configuration and its consumers'
# state (obs/), then starts it again on the same port and store:
# the stream's last sequence is below what bakery-all delivered, as a
# SIGKILL between nats-server 2.9's emptying of the last block and its
# rewrite of the index leaves it.
stream_moved_back() {
	local msgs="$BATS_TEST_TMPDIR/nats/store/jetstream/\$G/streams/BAKERY_EVENTS/msgs"
	nats_stop "$NATS_PID"
	[ -d "$msgs" ]
	rm -f "$msgs"/*
	nats_restart "$BATS_TEST_TMPDIR/nats"
}

@test "a stream whose last sequence moved below bakery-all's delivered one is found at start and its consumer made again: new events are delivered" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	for c in ada bea cy; do place "$c" >/dev/null; done
	run --separate-stderr bakery-consume
	assert_success
	assert_equal "$(jq -s 'map(select(.outcome == "acked")) | length' <<<"$output")" 3
	stream_moved_back
	# New events take the sequence numbers bakery-all already passed.
	id=$(place dora)
	assert_equal "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased')" 1
	run --separate-stderr bakery-consume
	assert_success
	[[ "$stderr" == *stream_behind_consumer* ]]
	assert_equal "$(jq -sc 'map(.outcome)' <<<"$output")" '["acked"]'
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
}

@test "a stream whose last sequence moved back while a consumer follows is found after the reconnect: new events are delivered to it" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	bakery-queue init >/dev/null
	for c in ada bea cy; do place "$c" >/dev/null; done
	bakery-consume --follow >"$BATS_TEST_TMPDIR/follow.out" 2>"$BATS_TEST_TMPDIR/follow.err" &
	follow=$!
	# Waits of up to a minute: they end as soon as the events are acked,
	# and a loaded machine (make check's parallel files) takes more than
	# the seconds a quiet one does to reconnect.
	for _ in $(seq 600); do
		[ "$(grep -c '"acked"' "$BATS_TEST_TMPDIR/follow.out")" = 3 ] && break
		sleep 0.1
	done
	stream_moved_back
	id=$(place dora)
	for _ in $(seq 600); do
		[ "$(grep -c '"acked"' "$BATS_TEST_TMPDIR/follow.out")" = 4 ] && break
		sleep 0.1
	done
	kill "$follow"
	wait "$follow" || true
	grep -q stream_behind_consumer "$BATS_TEST_TMPDIR/follow.err"
	assert_equal "$(grep -c '"acked"' "$BATS_TEST_TMPDIR/follow.out")" 4
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
}


# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a trace on NATS reads the event's own subject; messages 0.1.0 queued, without the id, are read up to 10,000 and the trace says it stopped" {
	nats_start "$BATS_TEST_TMPDIR/nats"
	export BAKERY_QUEUE=$NATS_URL
	id=$(place ada)
	placed=$(bakery-queue peek | jq -r .id)
	# Sent now: its subject ends with its id, and nothing else is on it.
	tool() { "$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" "$@"; }
	tool scan BAKERY_EVENTS | jq -e --arg e "$placed" 'select(.seq) | .subject == "bakery.events.default.OrderPlaced.\($e)"'
	# An event only in the queue, on the subject 0.1.0 gave it.
	body=$(bakery-queue peek | jq -c '.envelope | .id = "evt_legacy"')
	tool pub bakery.events.default.OrderPlaced "$body" Nats-Msg-Id=evt_legacy \
		Bakery-Id=evt_legacy Bakery-Sandbox=default >/dev/null
	run --separate-stderr bakery-trace --json evt_legacy
	assert_success
	assert_equal "$stderr" ""
	echo "$output" | jq -e '.type == "OrderPlaced" and (.queue | length) == 1 and .queue_complete'
	# 10,000 more of the sandbox and type on that subject: the trace reads
	# 10,000, finds the event among them, and says it stopped there.
	tool fill 10000 bakery.events.default.OrderPlaced "$body" 'Nats-Msg-Id=evt_old{i}' \
		'Bakery-Id=evt_old{i}' Bakery-Sandbox=default
	run --separate-stderr bakery-trace --json evt_legacy
	assert_success
	echo "$output" | jq -e '(.queue | length) == 1 and .queue_complete == false'
	[[ "$stderr" == *trace_queue_scan_stopped*evt_legacy*bakery-events* ]]
	# The order's own event is on its subject, found all the same.
	run --separate-stderr bakery-trace --json "$id"
	assert_success
	echo "$output" | jq -e --arg e "$placed" '.id == $e and (.queue | length) == 1'
}
