#!/usr/bin/env bats
# bakery-status: one screen for an operator; exit 1 when something needs
# attention; --json; --prom writes node_exporter's textfile atomically; and
# it never writes to what it reads.
load helpers
bats_require_minimum_version 1.5.0

T0=1796115600 # 2026-12-01T09:00:00Z

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a quiet bakery: exit 0, every sandbox, queue depth, nothing needs attention" {
	paid_order ada >/dev/null
	bakery-consume >/dev/null
	place bo >/dev/null
	bakery-order -s other place --customer cy --day "$DAY" cardamom-bun=1 >/dev/null
	run --separate-stderr bakery-status --json
	assert_success
	assert_equal "$stderr" ""
	echo "$output" | jq -e '.ok == true and .attention == []'
	echo "$output" | jq -e '[.sandboxes[].sandbox] == ["default", "other"]'
	echo "$output" | jq -e '.queue."bakery-events" == {"ready": 2, "leased": 0, "delayed": 0}'
	echo "$output" | jq -e '.queue."bakery-events-dlq".ready == 0'
	echo "$output" | jq -e '.sandboxes[0].objects == 9 and .sandboxes[0].dead_letters == 0'
	run bakery-status
	assert_success
	assert_line --partial "bakery-events      ready 2  leased 0  delayed 0"
	assert_line "nothing needs attention"
}

@test "-s limits it to one sandbox" {
	place ada >/dev/null
	bakery-order -s other place --customer cy --day "$DAY" cardamom-bun=1 >/dev/null
	run --separate-stderr bakery-status -s other --json
	assert_success
	echo "$output" | jq -e '[.sandboxes[].sandbox] == ["other"] and .sandboxes[0].objects == 1'
}

@test "outbox depth and the age of its oldest row; a row older than --max-age needs attention" {
	bakery-fault set queue-refuses
	id=$(BAKERY_NOW=$T0 bakery-order place --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	run --separate-stderr env BAKERY_NOW=$((T0 + 100)) bakery-status --json
	assert_success
	echo "$output" | jq -e --arg a "order/$id" '.sandboxes[0] | .outbox_rows == 1 and .oldest_age_s == 100 and .alarms_armed == 1 and (.busy[0] | .address == $a and .outbox_rows == 1 and .oldest_age_s == 100 and .alarm_at == "2026-12-01T09:00:30.000Z")'
	run --separate-stderr env BAKERY_NOW=$((T0 + 100)) bakery-status --max-age 60
	assert_failure 1
	assert_line --partial "order/$id: outbox row 100 s old (over 60 s)"
	assert_line "needs attention:"
}

@test "dead letters and undrained DLQ messages need attention" {
	bakery-fault set refuses:kitchen
	place ada >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	run --separate-stderr bakery-status --json
	assert_failure 1
	echo "$output" | jq -e '.queue."bakery-events-dlq".ready == 1'
	echo "$output" | jq -e '.attention | any(test("bakery-events-dlq: 1 messages not yet drained"))'
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-status --json
	assert_failure 1
	echo "$output" | jq -e '.sandboxes[0].dead_letters == 1 and .sandboxes[0].dead[0].error == "Kitchen answered 503"'
	echo "$output" | jq -e '.attention == ["sandbox default: 1 dead letters (bakery-dlq list, bakery-redrive)"]'
	bakery-fault clear refuses:kitchen
	bakery-redrive --all >/dev/null
	bakery-consume >/dev/null
	run bakery-status
	assert_success
}

@test "a queue removed after it took the orders' events needs attention: they are gone with it" {
	sqlite_only "the queue's file"
	id=$(place ada)
	bakery-order pay "$id" >/dev/null
	rm "$BAKERY_HOME"/queue.db*
	run --separate-stderr bakery-status --json
	assert_failure 1
	assert_equal "$(jq -r '.attention[]' <<<"$output")" \
		"queue: no queue at '$BAKERY_HOME/queue.db', yet 2 events of 2 objects are marked relayed: the queue that took them is gone, with what it had not delivered, which no relay sends again (restore it from a backup)"
	run --separate-stderr bakery-status --prom -
	assert_line "bakery_attention 1"
}

@test "a tripped re-arm guard needs attention" {
	export BAKERY_NOW=$T0
	bakery-fault set queue-refuses
	id=$(bakery-order place --customer ada --day "$DAY" cardamom-bun=1 2>/dev/null | jq -r .id)
	for k in $(seq 1 101); do
		BAKERY_NOW=$((T0 + 30 * k)) bakery-relay --due >/dev/null 2>&1 || true
	done
	run --separate-stderr env BAKERY_NOW=$((T0 + 3100)) bakery-status --json --max-age 86400
	assert_failure 1
	echo "$output" | jq -e --arg a "order/$id" '.sandboxes[0] | .guards_tripped == 1 and .rearms_today == 100 and .alarms_armed == 0 and .busy[0].address == $a and .busy[0].guard_tripped == true'
	echo "$output" | jq -e '.attention | length == 1 and (.[0] | test("re-arm guard tripped, 1 rows wait"))'
	# The next UTC day the count starts again: nothing tripped.
	run --separate-stderr env BAKERY_NOW=$((T0 + 86400)) bakery-status --json --max-age 999999
	assert_success
	echo "$output" | jq -e '.sandboxes[0].guards_tripped == 0'
}

@test "--prom writes the Prometheus text format by rename, readable by others" {
	bakery-fault set refuses:kitchen
	place ada >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	prom="$BATS_TEST_TMPDIR/bakery.prom"
	echo stale >"$prom"
	run --separate-stderr bakery-status --prom "$prom"
	assert_failure 1
	[ ! -e "$prom.tmp" ]
	[ "$(stat -c %a "$prom")" = 644 ]
	grep -qx 'bakery_dead_letters{sandbox="default"} 1' "$prom"
	grep -qx 'bakery_queue_messages{queue="bakery-events",state="ready"} 0' "$prom"
	grep -qx 'bakery_attention 1' "$prom"
	grep -qx '# TYPE bakery_outbox_rows gauge' "$prom"
	# Every sample line is NAME{LABELS} VALUE or NAME VALUE.
	run grep -Evc '^(# (HELP|TYPE) .*|[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+)$' "$prom"
	assert_output 0
}

@test "--prom - writes the Prometheus text to stdout and no file named -" {
	place ada >/dev/null
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr bakery-status --prom -
	assert_success
	[ ! -e ./- ]
	assert_line 'bakery_attention 0'
	# Nothing but the text format: no screen line among it.
	run grep -Evc '^(# (HELP|TYPE) .*|[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+)$' <<<"$output"
	assert_output 0
}

@test "--prom FILE prints nothing on stdout" {
	place ada >/dev/null
	run --separate-stderr bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	assert_success
	assert_output ""
	grep -qx 'bakery_attention 0' "$BATS_TEST_TMPDIR/bakery.prom"
}

@test "--prom - with --json is a usage error: one stdout, one format" {
	run --separate-stderr bakery-status --prom - --json
	assert_failure 64
	assert_output ""
}

@test "--prom into a folder that does not exist exits 73 and leaves nothing" {
	mkdir -p "$BAKERY_HOME" # a home, empty; no home at all is 78 (44-home.bats)
	run --separate-stderr bakery-status --prom "$BATS_TEST_TMPDIR/no/such/x.prom"
	assert_failure 73
	[[ "$stderr" == *"cannot create"* ]]
}

@test "status writes nothing: no file is created or changed" {
	paid_order ada >/dev/null
	bakery-consume >/dev/null
	bakery-fault set refuses:kitchen
	place bo >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	before=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	bakery-status >/dev/null || true
	bakery-status --json >/dev/null || true
	after=$(cd "$BAKERY_HOME" && find . -type f -exec sha256sum {} + | sort)
	assert_equal "$after" "$before"
	# A fresh home stays empty: the queue file is not created to say it is empty.
	export BAKERY_HOME="$BATS_TEST_TMPDIR/fresh"
	mkdir "$BAKERY_HOME"
	run --separate-stderr bakery-status --json
	assert_success
	[ -z "$(ls -A "$BAKERY_HOME")" ]
}

@test "an object file with a newer schema needs attention; the rest is still read" {
	paid_order ada >/dev/null
	bakery-consume >/dev/null
	sqlite3 "$BAKERY_HOME/sandboxes/default/kitchen/board.db" "PRAGMA user_version = 99"
	run --separate-stderr bakery-status --json
	assert_failure 1
	echo "$output" | jq -e '.attention | any(test("kitchen/board.db.*schema version 99"))'
	echo "$output" | jq -e '.sandboxes[0].objects == 8'
}

@test "usage: an operand or a bad --max-age exits 64" {
	run --separate-stderr bakery-status extra
	assert_failure 64
	run --separate-stderr bakery-status --max-age soon
	assert_failure 64
	[[ "$stderr" == *"bad max-age: 'soon'"* ]]
}

@test "-s counts the sandbox's own messages not yet drained, and shows the faults set in it" {
	bakery-fault -s ada set refuses:kitchen
	bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-order -s ada place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-order -s other place --customer cy --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	run --separate-stderr bakery-status -s ada --json
	assert_failure 1
	echo "$output" | jq -e '.sandboxes[0] | .undrained == 2 and ([.faults[].name] == ["refuses:kitchen"])'
	echo "$output" | jq -e '.attention | index("sandbox ada: 2 messages in bakery-events-dlq not yet drained (bakery-dlq -s ada drain)") != null'
	run --separate-stderr bakery-status -s ada
	assert_failure 1
	assert_line '  dead letters  0, and 2 in bakery-events-dlq not yet drained'
	assert_line --regexp '^  faults        refuses:kitchen \(since 20[0-9-]+T[0-9:.]+Z\)$'
	assert_line '  sandbox ada: 2 messages in bakery-events-dlq not yet drained (bakery-dlq -s ada drain)'
	run --separate-stderr bakery-status -s other --json
	echo "$output" | jq -e '.sandboxes[0] | .undrained == 0 and .faults == []'
	run --separate-stderr bakery-status -s other
	assert_line '  faults        none set'
	# Drained, they are dead letters, no longer counted as waiting.
	bakery-dlq drain >/dev/null
	run --separate-stderr bakery-status -s ada --json
	echo "$output" | jq -e '.sandboxes[0] | .undrained == 0 and .dead_letters == 2'
}
