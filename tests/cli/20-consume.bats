#!/usr/bin/env bats
load helpers
bats_require_minimum_version 1.5.0

# Every object of the default sandbox, one sorted JSON document each.
snapshot() {
	local f rel
	find "$BAKERY_HOME/sandboxes/default" -mindepth 2 -name '*.db' | sort | while read -r f; do
		rel=${f#"$BAKERY_HOME/sandboxes/default/"}
		bakery-show "${rel%.db}" | jq -S .
	done
}

@test "consume drains the queue and applies a paid order at every subscriber once" {
	id=$(paid_order ada)
	run bakery-consume
	assert_success
	assert_effects_once "$id"
	[ -z "$(queue_ids)" ]
	[ -z "$(queue_ids bakery-events-dlq)" ]
}

@test "consume prints one JSON line per delivery with id, type, sandbox, delivery, status, outcome and error" {
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	for line in "${lines[@]}"; do
		echo "$line" | jq -e '(keys == ["delivery","error","id","outcome","sandbox","status","type"])
			and .delivery == 1 and .status == 200 and .outcome == "acked"
			and .error == null and .sandbox == "default" and (.id | startswith("evt_"))'
	done
	run jq -sc '[.[].type]' <<<"$output"
	assert_output '["OrderPlaced","PaymentSucceeded","OrderPaid"]'
}

@test "consume --once --batch 1 handles one message and leaves the rest queued" {
	paid_order ada >/dev/null
	[ "$(queue_ids | wc -l)" -eq 2 ]
	run --separate-stderr bakery-consume --once --batch 1
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e '.type == "OrderPlaced" and .outcome == "acked"'
	[ "$(queue_ids | wc -l)" -eq 1 ]
	run bakery-queue stats
	echo "$output" | jq -e '.["bakery-events"].ready == 1'
}

@test "consume --once handles at most one batch even when more is queued" {
	place ada >/dev/null
	place bob >/dev/null
	place cy >/dev/null
	run --separate-stderr bakery-consume --once --batch 2
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[ "$(queue_ids | wc -l)" -eq 1 ]
	[ "$(bakery-show kitchen/board | jq '.state.cards | length')" -eq 2 ]
}

@test "consume --routes prints the routing table, six routes for OrderPaid" {
	run --separate-stderr bakery-consume --routes
	assert_success
	[ "${#lines[@]}" -eq 9 ]
	run jq -s '[.[] | select(.type == "OrderPaid")] | length' <<<"$output"
	assert_output 6
	run bakery-consume --routes
	run jq -rs '[.[] | select(.type == "OrderPaid") | .to] | sort | join(",")' <<<"$output"
	assert_output 'crm/customers,customer/{data.customer},dispatch/{data.day},inbox/{data.customer},kitchen/board,schedule/{data.day}'
}

@test "replaying an order's events with --stdin after a full consume changes no object" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	assert_effects_once "$id"
	before=$(snapshot)
	[ -n "$before" ]
	bakery-order events "$id" >"$BATS_TEST_TMPDIR/events.jsonl"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/events.jsonl")" -eq 2 ]
	run --separate-stderr bakery-consume --stdin <"$BATS_TEST_TMPDIR/events.jsonl"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	for line in "${lines[@]}"; do
		echo "$line" | jq -e '.status == 200 and .outcome == "applied" and .error == null and (has("delivery") | not)'
	done
	run jq -sc '[.[].id]' <<<"$output"
	assert_output "$(jq -sc '[.[].id]' "$BATS_TEST_TMPDIR/events.jsonl")"
	after=$(snapshot)
	[ "$before" = "$after" ]
	assert_effects_once "$id"
	[ -z "$(queue_ids)" ]
}

@test "a repeated delivery through the queue answers 2xx and changes nothing" {
	id=$(paid_order ada)
	bakery-consume >/dev/null
	before=$(snapshot)
	paid=$(bakery-order events "$id" | jq -c 'select(.type == "OrderPaid")')
	# Past the queue's own repeat check (NATS's duplicate window), as a
	# redelivery after a lost ack would be.
	queue_raw "$(jq -r .id <<<"$paid")" "$paid"
	[ "$(queue_ids)" = "$(jq -r .id <<<"$paid")" ]
	run --separate-stderr bakery-consume
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" | jq -e '.type == "OrderPaid" and .status == 200 and .outcome == "acked"'
	[ "$before" = "$(snapshot)" ]
	assert_effects_once "$id"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "consume --stdin applies the good lines amid malformed ones, names the bad line and exits 65" {
	a=$(place ada)
	b=$(place bob)
	{
		bakery-order events "$a"
		echo '{"specversion": "1.0", "id": '
		bakery-order events "$b"
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr bakery-consume --stdin <"$BATS_TEST_TMPDIR/in.jsonl"
	assert_failure 65
	[ "${#lines[@]}" -eq 2 ]
	[[ "$stderr" == *"error: line 2:"* ]]
	[[ "$stderr" != *"error: line 1:"* && "$stderr" != *"error: line 3:"* ]]
	n=$(bakery-show kitchen/board | jq --arg a "$a" --arg b "$b" \
		'[.state.cards[] | select((.order == $a or .order == $b) and .status == "placed")] | length')
	[ "$n" -eq 2 ]
}

@test "consume --stdin rejects an envelope of an unknown type with 65" {
	a=$(place ada)
	run --separate-stderr bash -c "bakery-order events '$a' | jq -c '.type = \"CakeEaten\"' | bakery-consume --stdin"
	assert_failure 65
	[[ "$stderr" == *"line 1"* ]]
	[[ "$stderr" == *"CakeEaten"* ]]
	[ -z "$output" ]
	run bakery-show kitchen/board
	if [ "$status" -eq 0 ]; then
		echo "$output" | jq -e '[.state.cards[]?] | length == 0'
	fi
}

@test "consume refuses bad option values with 64" {
	run bakery-consume --batch 0
	assert_failure 64
	assert_output --partial batch
	run bakery-consume --batch x
	assert_failure 64
	run bakery-consume --max-retries x
	assert_failure 64
	assert_output --partial max-retries
	run bakery-consume --max-retries -1
	assert_failure 64
	run bakery-consume --visibility 0
	assert_failure 64
	run bakery-consume stray
	assert_failure 64
}

@test "consume -h prints the usage and exits 0" {
	run bakery-consume -h
	assert_success
	assert_output --partial "usage: bakery-consume"
	assert_output --partial "--stdin"
}

@test "a 503 from the kitchen records nothing there" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume >/dev/null 2>&1
	# Not a seen row, not a card: no board was made at all.
	run --separate-stderr bakery-show kitchen/board
	assert_failure 66
	assert_equal "$stderr" "bakery-show: error: no such object: 'kitchen/board'"
}

@test "consume --stdin exits 75 when a subscriber answered 503, 65 when one refused for good, and gives every line" {
	id=$(place ada)
	placed=$(bakery-order events "$id" | jq -c 'select(.type == "OrderPlaced")')
	bakery-fault set refuses:kitchen
	run --separate-stderr bakery-consume --stdin <<<"$placed"
	assert_failure 75
	echo "$output" | jq -e '.status == 503 and .outcome == "refused"'
	# A malformed line and the 503: the line refused for good outranks.
	bad=$(jq -c '.data.total_cents = -1' <<<"$placed")
	run --separate-stderr bakery-consume --stdin <<<"$placed
$bad"
	assert_failure 65
	assert_equal "$(jq -s -c '[.[].status]' <<<"$output")" "[503,422]"
	# Given again once the kitchen takes it: applied, 0.
	bakery-fault clear refuses:kitchen
	run --separate-stderr bakery-consume --stdin <<<"$placed"
	assert_success
	echo "$output" | jq -e '.outcome == "applied"'
}

@test "a 409 from the kitchen records nothing there" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume >/dev/null 2>&1
	bakery-fault clear refuses:kitchen
	paid=$(bakery-order events "$id" | jq -c 'select(.type == "OrderPaid")')
	paid_id=$(jq -r .id <<<"$paid")
	# Refused for now, and no queue retries a line on stdin: 75.
	run --separate-stderr bakery-consume --stdin <<<"$paid"
	assert_failure 75
	echo "$output" | jq -e '.status == 409 and .outcome == "refused" and (.error | startswith("Kitchen answered 409"))'
	bakery-show kitchen/board | jq -e --arg e "$paid_id" '(.seen | index($e)) == null'
	bakery-show kitchen/board | jq -e '[.state.cards[]?] | length == 0'
	bakery-show kitchen/board | jq -e '[.state.tickets[]?] | length == 0'
}

@test "with refuses:kitchen a paid order's events are delivered four times then dead-lettered with the kitchen's 503" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	results=$output
	for type in OrderPlaced OrderPaid; do
		run jq -sc --arg t "$type" '[.[] | select(.type == $t) | [.delivery, .status, .outcome, .error]]' <<<"$results"
		assert_output '[[1,503,"retried","Kitchen answered 503"],[2,503,"retried","Kitchen answered 503"],[3,503,"retried","Kitchen answered 503"],[4,503,"dead-lettered","Kitchen answered 503"]]'
	done
	[ -z "$(queue_ids)" ]
	run bakery-dlq drain
	run jq -r '"\(.error)|\(.attempts)"' <<<"$output"
	assert_output "Kitchen answered 503|4
Kitchen answered 503|4"
}

@test "while the kitchen refuses, the other subscribers apply each event once" {
	bakery-fault set refuses:kitchen
	id=$(paid_order ada)
	bakery-consume >/dev/null 2>&1
	[ "$(bakery-show schedule/$DAY | jq --arg o "$id" '[.state.reservations[] | select(.order == $o)] | length')" -eq 1 ]
	[ "$(bakery-show schedule/$DAY | jq --arg o "$id" '[.state.holds[] | select(.order == $o)] | length')" -eq 0 ]
	[ "$(bakery-show inbox/ada | jq --arg o "$id" '[.state.receipts[] | select(.order == $o)] | length')" -eq 1 ]
	[ "$(bakery-show customer/ada | jq --arg o "$id" '[.state.orders[] | select(.order == $o)] | length')" -eq 1 ]
	paid_id=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .id')
	[ "$(bakery-show inbox/ada | jq --arg e "$paid_id" '[.seen[] | select(. == $e)] | length')" -eq 1 ]
}

@test "consume --max-retries 1 dead-letters after two deliveries" {
	bakery-fault set refuses:kitchen
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPlaced") | [.delivery, .outcome]]' <<<"$output"
	assert_output '[[1,"retried"],[2,"dead-lettered"]]'
	run bakery-dlq drain
	[ "${#lines[@]}" -eq 2 ]
	run jq -r .attempts <<<"$output"
	assert_output "2
2"
}

@test "a queued message with a malformed body is retried, dead-lettered as malformed, and the consumer survives" {
	queue_raw evt_garbled '{"specversion": "1.0", oops'
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	run jq -sc '[.[] | select(.id == "evt_garbled") | [.delivery, .status, .outcome]]' <<<"$output"
	assert_output '[[1,422,"retried"],[2,422,"retried"],[3,422,"retried"],[4,422,"dead-lettered"]]'
	# It survives: a second run finds nothing left to deliver.
	run --separate-stderr bakery-consume
	assert_success
	assert_output ""
	run bakery-queue peek --dlq
	run jq -r '"\(.id)|\(.last_error | startswith("malformed envelope"))"' <<<"$output"
	assert_output "evt_garbled|true"
	assert_effects_once "$id"
}

@test "a message leased by a consumer killed before its ack is delivered again after the lease expires" {
	sqlite_only "the lease's clock is BAKERY_NOW here, the server's on NATS"
	id=$(paid_order ada)
	crash_at consume.before_ack bakery-consume
	# Still leased: a consumer now finds only the OrderPaid that the
	# killed one's batch recorded at the order and sent.
	run --separate-stderr bakery-consume
	assert_success
	run jq -sc '[.[] | [.type, .delivery, .outcome]]' <<<"$output"
	assert_output '[["OrderPaid",1,"acked"]]'
	later=$(($(date +%s) + 31))
	run --separate-stderr env BAKERY_NOW="$later" bakery-consume
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPlaced") | [.delivery, .status, .outcome]]' <<<"$output"
	assert_output '[[2,200,"acked"]]'
	assert_effects_once "$id"
	[ -z "$(queue_ids)" ]
}

# The syncs of a run of "$@" (fsync, fdatasync) on the files of object $1,
# its journal included: a commit costs the same number each time. None
# fails: the run did not sync there, or the path no longer matches.
syncs_at() {
	local object=$1
	shift
	env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -y -e trace=fsync,fdatasync \
		-o "$BATS_TEST_TMPDIR/trace" "$@" >"$BATS_TEST_TMPDIR/out" || return 1
	grep -c "/default/$object\.db" "$BATS_TEST_TMPDIR/trace"
}

@test "a batch's deliveries to one object commit once there, not once per event" {
	command -v strace >/dev/null || skip "no strace"
	for c in a b c d e f g h i j k l m; do place "$c" >/dev/null; done
	# The two files exist now, and their WALs hold frames (the first
	# commit after a file is made starts its WAL: its header's sync).
	bakery-consume --once --batch 1 >/dev/null
	bakery-consume --once --batch 1 >/dev/null
	one_board=$(syncs_at kitchen/board bakery-consume --once --batch 1)
	[ "$(jq -r .outcome "$BATS_TEST_TMPDIR/out")" = acked ]
	one_day=$(grep -c "/default/schedule/$DAY\.db" "$BATS_TEST_TMPDIR/trace")
	[ "$one_board" -gt 0 ]
	[ "$one_day" -gt 0 ]
	# Ten OrderPlaced, each for the board and the day's schedule.
	ten_board=$(syncs_at kitchen/board bakery-consume --once --batch 10)
	ten_day=$(grep -c "/default/schedule/$DAY\.db" "$BATS_TEST_TMPDIR/trace")
	run jq -sc '[.[] | .outcome] | unique + [length]' "$BATS_TEST_TMPDIR/out"
	assert_output '["acked",10]'
	echo "syncs at the board: $one_board for one event, $ten_board for ten"
	[ "$ten_board" -eq "$one_board" ]
	[ "$ten_day" -eq "$one_day" ]
	[ "$(bakery-show kitchen/board | jq '.state.cards | length')" -eq 13 ]
	[ "$(bakery-show kitchen/board | jq '.seen | length')" -eq 13 ]
	[ "$(bakery-show "schedule/$DAY" | jq '.state.holds | length')" -eq 13 ]
}

@test "a refused event of a batch is retried alone: the others at its object apply and are acked" {
	# An OrderPaid redriven before its OrderPlaced: no card at the kitchen.
	bakery-fault set refuses:kitchen
	c=$(paid_order cy)
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
	paid=$(bakery-order events "$c" | jq -r 'select(.type == "OrderPaid") | .id')
	placed=$(bakery-order events "$c" | jq -r 'select(.type == "OrderPlaced") | .id')
	a=$(place ada)
	b=$(place bob)
	bakery-redrive "$paid" >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --once
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	run jq -sc '[.[] | [.type, .status, .outcome]]' <<<"$output"
	assert_output '[["OrderPlaced",200,"acked"],["OrderPlaced",200,"acked"],["OrderPaid",409,"retried"]]'
	board=$(bakery-show kitchen/board)
	jq -e --arg a "$a" --arg b "$b" '[.state.cards[] | .order] == [$a, $b]' <<<"$board"
	jq -e '.state.tickets == []' <<<"$board"
	jq -e --arg e "$paid" '.seen | index($e) == null' <<<"$board"
	[ "$(queue_ids)" = "$paid" ]
	# Its card comes; the retried OrderPaid may come first and be refused
	# once more: an immediate retry then applies it.
	bakery-redrive "$placed" >/dev/null
	bakery-consume --retry-delay 0 >/dev/null
	assert_effects_once "$c"
	[ -z "$(queue_ids)" ]
}

@test "a batch's new subscriber files are made durable together: one sync of each folder" {
	command -v strace >/dev/null || skip "no strace"
	bakery-order -V | grep -q 'journal_mode=wal)' || skip "WAL only: a rollback journal makes a file at its name"
	paid_order ada >/dev/null
	bakery-consume --drain >/dev/null # the day's files, ada's, the CRM's
	for c in bo cy dee; do paid_order "$c" >/dev/null; done
	bakery-consume --once --batch 20 >/dev/null # OrderPlaced, PaymentSucceeded
	# The three OrderPaid, one batch: each makes its customer's files.
	cd "$BATS_TEST_TMPDIR" || return 1
	strace -f -y -e trace=fsync,fdatasync -o trace \
		env ASAN_OPTIONS=detect_leaks=0 bakery-consume --once --batch 20 >out
	run jq -sc '[.[] | [.type, .outcome]] | unique + [length]' out
	assert_output '[["OrderPaid","acked"],3]'
	# Three new files each at the customer and at the inbox: each synced,
	# and each folder synced once for its three names.
	for kind in customer inbox; do
		assert_equal "$(grep -c "fsync([0-9]*</[^>]*/default/$kind/\.new\.[a-z]*>" trace)" 3
		assert_equal "$(grep -c "fsync([0-9]*</[^>]*/default/$kind>" trace)" 1
	done
	for c in bo cy dee; do
		[ "$(bakery-show "customer/$c" | jq '.seen | length')" -eq 1 ]
	done
}

@test "a batch's new file that cannot be made durable fails its object's deliveries alone: retried, then applied once" {
	bakery-order -V | grep -q 'journal_mode=wal)' || skip "WAL only: a rollback journal makes a file at its name"
	a=$(paid_order ada)
	bakery-consume --once --batch 20 >/dev/null # OrderPlaced, PaymentSucceeded
	run --separate-stderr env BAKERY_FAIL_SYNC_OF=/customer/ bakery-consume --retry-delay 0 --once --batch 20
	assert_success
	run jq -sc '[.[] | [.type, .status, .outcome]]' <<<"$output"
	assert_output '[["OrderPaid",503,"retried"]]'
	[ -z "$(ls -A "$BAKERY_HOME/sandboxes/default/customer")" ]
	# The others applied it: the inbox wrote its receipt, once.
	[ "$(bakery-show inbox/ada | jq '.seen | length')" -eq 1 ]
	bakery-consume --retry-delay 0 --drain >/dev/null
	assert_effects_once "$a"
	[ "$(bakery-show customer/ada | jq '.seen | length')" -eq 1 ]
	[ "$(bakery-show inbox/ada | jq '.seen | length')" -eq 1 ]
}

@test "two consumers making new days' files in opposite orders do not stall each other" {
	days() { for d in $(seq -w 1 12); do echo "2027-01-$d"; done; }
	{ days; days | tac; } | while read -r d; do
		printf '{"cmd":"place","customer":"c1","day":"%s","items":["cardamom-bun=1"]}\n' "$d"
	done | bakery-order --batch >/dev/null
	cd "$BATS_TEST_TMPDIR"
	BAKERY_BUSY_TIMEOUT_MS=20000 bakery-consume --drain --batch 12 >a.out 2>a.err &
	local pa=$!
	BAKERY_BUSY_TIMEOUT_MS=20000 bakery-consume --drain --batch 12 >b.out 2>b.err &
	local pb=$!
	wait "$pa"
	wait "$pb"
	assert_equal "$(jq -r .outcome a.out b.out | sort | uniq -c | awk '{print $1, $2}')" "24 acked"
	assert_equal "$(bakery-show --list | jq -r . | grep -c '^schedule/')" 12
}
