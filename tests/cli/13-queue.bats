#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# envelope ID [JQ-FILTER]: a valid OrderPlaced envelope with that id.
envelope() {
	jq -cn --arg id "$1" '{specversion: "1.0", id: $id, type: "OrderPlaced",
		source: "bakery:default/order/ord_x", subject: "order/ord_x",
		time: "2026-11-30T10:00:00.000Z", datacontenttype: "application/json",
		sandbox: "default",
		data: {order: "ord_x", customer: "ada", day: "2026-12-01",
		       items: [{item: "cardamom-bun", qty: 1, price_cents: 450}],
		       total_cents: 450, currency: "eur"}}' | jq -c "${2:-.}"
}

ready() {
	bakery-queue stats | jq ".\"bakery-events${1:+-dlq}\".ready"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "stats of a fresh home shows both queues empty" {
	run --separate-stderr bakery-queue stats
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq -c . <<<"$output")" \
		'{"bakery-events":{"ready":0,"leased":0,"delayed":0},"bakery-events-dlq":{"ready":0,"leased":0,"delayed":0}}'
	assert_equal "$stderr" ""
}

@test "send prints one sent line per envelope and peek shows the messages" {
	run --separate-stderr bakery-queue send < <(envelope evt_a; envelope evt_b)
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -c . <<<"$output" | tr '\n' ' ')" \
		'{"id":"evt_a","status":"sent"} {"id":"evt_b","status":"sent"} '
	assert_equal "$(ready)" 2
	run --separate-stderr bakery-queue peek
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_equal "$(jq -r .id <<<"$output" | sort | tr '\n' ' ')" "evt_a evt_b "
	assert_equal "$(jq -r .queue <<<"$output" | sort -u)" bakery-events
	assert_equal "$(jq -r .envelope.type <<<"$output" | sort -u)" OrderPlaced
	assert_equal "$(jq -r .deliveries <<<"$output" | sort -u)" 0
}

@test "peek does not take messages off the queue" {
	envelope evt_a | bakery-queue send >/dev/null
	bakery-queue peek >/dev/null
	bakery-queue peek >/dev/null
	assert_equal "$(ready)" 1
	assert_equal "$(bakery-queue stats | jq '."bakery-events".leased')" 0
}

@test "peek --limit caps the number of messages" {
	for i in 1 2 3; do envelope "evt_$i"; done | bakery-queue send >/dev/null
	run --separate-stderr bakery-queue peek --limit 2
	assert_success
	assert_equal "${#lines[@]}" 2
}

@test "a repeated send of the same envelope while pending is one message" {
	envelope evt_a | bakery-queue send >/dev/null
	run --separate-stderr bakery-queue send < <(envelope evt_a; envelope evt_a)
	assert_success
	assert_equal "$(ready)" 1
	assert_equal "$(bakery-queue peek | jq -s 'map(select(.id == "evt_a")) | length')" 1
}

@test "malformed lines amid good ones: the good ones are sent, the bad reported by line, exit 65" {
	input=$(envelope evt_a; echo 'not json'; envelope evt_b; echo '{"a":1}'; echo '[1,2]'; envelope evt_c)
	run --separate-stderr bakery-queue send <<<"$input"
	assert_failure 65
	assert_equal "$(jq -r .id <<<"$output" | tr '\n' ' ')" "evt_a evt_b evt_c "
	[[ "$stderr" == *"line 2: malformed JSON"* ]]
	[[ "$stderr" == *"line 4: "* ]]
	[[ "$stderr" == *"line 5: "* ]]
	[[ "$stderr" != *"line 1:"* ]]
	[[ "$stderr" != *"line 3:"* ]]
	[[ "$stderr" != *"line 6:"* ]]
	assert_equal "$(ready)" 3
}

@test "blank lines are skipped and do not shift the line numbers" {
	input=$(envelope evt_a; echo; echo 'oops'; envelope evt_b)
	run --separate-stderr bakery-queue send <<<"$input"
	assert_failure 65
	[[ "$stderr" == *"line 3: malformed JSON"* ]]
	assert_equal "${#lines[@]}" 2
}

@test "an unknown event type exits 65 and sends nothing" {
	refuses 65 "line 1: unknown event type: 'OrderEaten'" bakery-queue send < <(envelope evt_a '.type = "OrderEaten"')
	assert_equal "$(ready)" 0
}

@test "a wrong specversion exits 65 and sends nothing" {
	refuses 65 "line 1: specversion '0.3'" bakery-queue send < <(envelope evt_a '.specversion = "0.3"')
	assert_equal "$(ready)" 0
}

@test "an envelope without id, without sandbox or with a bad sandbox exits 65" {
	for f in 'del(.id)' 'del(.sandbox)' '.sandbox = "../x"' '.sandbox = "A"' '.data = "text"' '.id = 7'; do
		run --separate-stderr bakery-queue send < <(envelope evt_a "$f")
		assert_failure 65
		assert_output ""
		[[ "$stderr" == *"line 1: "* ]]
	done
	assert_equal "$(ready)" 0
}

@test "an empty stdin sends nothing and exits 0" {
	run --separate-stderr bakery-queue send </dev/null
	assert_success
	assert_output ""
	assert_equal "$(ready)" 0
}

@test "envelopes from bakery-order events are accepted, and a repeat while pending stays one message" {
	id=$(place ada)
	run --separate-stderr bakery-queue send < <(bakery-order events "$id")
	assert_success
	assert_equal "$(jq -r .status <<<"$output")" sent
	assert_equal "$(ready)" 1
}

@test "the queue refusing exits 69 and sends nothing" {
	bakery-fault set queue-refuses
	run --separate-stderr bakery-queue send < <(envelope evt_a)
	assert_failure 69
	assert_output ""
	[[ "$stderr" == *"bakery-queue: error: "*"queue-refuses"* ]]
	assert_equal "$(ready)" 0
}

@test "peek --dlq shows the dead letters and not the main queue" {
	run --separate-stderr bakery-queue peek --dlq
	assert_success
	assert_output ""
	bakery-fault set refuses:kitchen
	id=$(place ada)
	# One consume with immediate retries runs them out, unless a redelivery comes after it
	# stopped waiting (a NATS Nak under load): then the next one goes on.
	for _ in 1 2 3 4 5; do
		bakery-consume --retry-delay 0 >/dev/null 2>&1 || true
		[ "$(ready dlq)" = 1 ] && break
		sleep 0.5
	done
	envelope evt_live | bakery-queue send >/dev/null
	run --separate-stderr bakery-queue peek --dlq
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_equal "$(jq -r .queue <<<"$output")" bakery-events-dlq
	assert_equal "$(jq -r .envelope.subject <<<"$output")" "order/$id"
	[[ "$(jq -r .last_error <<<"$output")" == *"Kitchen answered 503"* ]]
	assert_equal "$(ready dlq)" 1
}

@test "a bad --limit exits 64" {
	for l in 0 -1 x ''; do
		run --separate-stderr bakery-queue peek --limit "$l"
		assert_failure 64
		assert_output ""
		[[ "$stderr" == *"usage: bakery-queue"* ]]
	done
}

@test "a queue URL that is neither sqlite:PATH nor nats://HOST:PORT[,...] exits 78" {
	for url in bogus sqlite: nats:// 'nats://a:1,,b:2' 'nats://a:1,' http://a:1; do
		run --separate-stderr bakery-queue --queue "$url" stats
		assert_failure 78
		assert_output ""
		[[ "$stderr" == *"bad queue URL: '$url'"* ]]
	done
	run --separate-stderr env BAKERY_QUEUE=bogus bakery-queue stats
	assert_failure 78
}

@test "a nats:// queue with no server listening exits 69" {
	refuses 69 "cannot connect to 'nats://127.0.0.1:1'" bakery-queue --queue nats://127.0.0.1:1 stats
}

@test "init creates or checks the queue and prints one line per part" {
	run --separate-stderr bakery-queue init
	assert_success
	[ "${#lines[@]}" -ge 1 ]
	for line in "${lines[@]}"; do
		echo "$line" | jq -e '.status == "created" or .status == "exists"'
	done
	run --separate-stderr bakery-queue init
	assert_success
	for line in "${lines[@]}"; do
		echo "$line" | jq -e '.status == "exists"'
	done
	run --separate-stderr bakery-queue stats --replicas 3
	assert_failure 64
}

@test "--queue sqlite:PATH keeps messages in that file, made by init" {
	q="$BATS_TEST_TMPDIR/cwd/q.db"
	mkdir -p "${q%/*}"
	bakery-queue --queue "sqlite:$q" init >/dev/null
	envelope evt_a | bakery-queue --queue "sqlite:$q" send >/dev/null
	[ -f "$q" ]
	assert_equal "$(bakery-queue --queue "sqlite:$q" stats | jq '."bakery-events".ready')" 1
	assert_equal "$(ready)" 0
}

@test "a queue.db of schema version 1, made before 0.1.0, is refused with 78 naming it, and left as it is" {
	sqlite_only "reads queue.db"
	q="$BAKERY_HOME/queue.db"
	# As bakeries before 0.1.0 made it: no held_at.
	sqlite3 "$q" "
		CREATE TABLE messages(seq INTEGER PRIMARY KEY AUTOINCREMENT,
		  queue TEXT NOT NULL, id TEXT NOT NULL, sandbox TEXT NOT NULL,
		  body TEXT NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,
		  visible_at INTEGER NOT NULL, lease TEXT, last_error TEXT,
		  enqueued_at INTEGER NOT NULL,
		  attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (queue, id));
		CREATE INDEX messages_ready ON messages(queue, visible_at, seq);
		CREATE TABLE fences(sandbox TEXT PRIMARY KEY,
		  wiped_at INTEGER NOT NULL);
		INSERT INTO messages(queue, id, sandbox, body, visible_at, enqueued_at)
		  VALUES ('bakery-events', 'evt_old', 'default', '{}', 1, 1);
		PRAGMA user_version = 1;"
	before=$(sha256sum "$q")
	for cmd in stats peek init; do
		run --separate-stderr bakery-queue "$cmd"
		assert_failure 78
		[[ "$stderr" == *"cannot use '$q': schema version 1 was made by a bakery before 0.1.0"* ]]
	done
	run --separate-stderr bakery-queue send <<<"$(envelope evt_a)"
	assert_failure 78
	[[ "$stderr" == *"'$q': schema version 1 was made by a bakery before 0.1.0"* ]]
	assert_equal "$(sha256sum "$q")" "$before"
	assert_equal "$(sqlite3 "$q" "PRAGMA user_version; SELECT group_concat(id) FROM messages")" $'1\nevt_old'
}

@test "a bad sandbox -s ../x exits 64 and creates no file outside BAKERY_HOME" {
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	run --separate-stderr bakery-queue -s ../x stats
	assert_failure 64
	assert_output ""
	[ ! -e "$BATS_TEST_TMPDIR/x" ]
	assert_equal "$(outside_home)" ""
}

@test "an unknown option exits 64 with the usage on stderr" {
	refuses 64 "usage: bakery-queue" bakery-queue --bogus stats
}

@test "stdout that cannot be written exits 74" {
	run --separate-stderr bash -c 'bakery-queue stats >/dev/full'
	assert_failure 74
}
