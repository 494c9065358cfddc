#!/usr/bin/env bats
# bakery-order --batch: a JSON command a line, an answer a line after its
# commit and its group's one queue send; a kill leaves every answered line
# committed and sent, and nothing after it answered.
load helpers
bats_require_minimum_version 1.5.0

# Every test in a folder of its own: the files it writes stay in it.
eval "helpers_$(declare -f setup)"
setup() {
	helpers_setup
	cd "$BATS_TEST_TMPDIR" || return 1
}

# A test that fails shows what its batches answered and said on prove's
# own output (a run's log keeps it), not only in bats's TAP comments.
exec {stderr_fd}>&2
teardown() {
	local f
	[ -n "${BATS_TEST_COMPLETED:-}" ] && return 0
	for f in "$BATS_TEST_TMPDIR"/*.out "$BATS_TEST_TMPDIR"/*.err \
		"$BATS_TEST_TMPDIR"/out "$BATS_TEST_TMPDIR"/err; do
		[ -s "$f" ] || continue
		echo "-- ${f##*/} (last 20):"
		tail -20 "$f"
	done 2>&1 | sed 's/^/# 17-batch: /' >&"$stderr_fd"
	return 0
}

# places N [FROM] [KEY]: N place lines with keys KEY1.., one a line.
places() {
	local n=$1 from=${2:-1} key=${3:-k}
	for i in $(seq "$from" $((from + n - 1))); do
		printf '{"cmd":"place","customer":"c%d","day":"%s","items":["cardamom-bun=1"],"key":"%s%d"}\n' \
			$((i % 7)) "$DAY" "$key" "$i"
	done
}

# batch IN: runs bakery-order --batch < IN; $status, stdout in $BATCH_OUT
# (a file) and stderr in $BATCH_ERR.
batch() {
	BATCH_OUT=$BATS_TEST_TMPDIR/out BATCH_ERR=$BATS_TEST_TMPDIR/err
	status=0
	bakery-order --batch < "$1" > "$BATCH_OUT" 2> "$BATCH_ERR" || status=$?
}

queue_ready() { bakery-queue stats | jq '."bakery-events".ready'; }
outbox_rows() { bakery-status --json | jq '[.sandboxes[].outbox_rows] | add // 0'; }
orders() { bakery-order list | jq -s length; }

@test "good lines are each answered with their line number, exit 0 and the result" {
	places 3 > in
	echo '{"cmd":"show","order":"nope"}' >> in
	batch in
	[ "$status" -eq 66 ]
	assert_equal "$(jq -c '[.line, .exit]' "$BATCH_OUT" | paste -sd' ')" \
		"[1,0] [2,0] [3,0] [4,66]"
	assert_equal "$(jq -r 'select(.exit == 0) | .result.status' "$BATCH_OUT" | sort -u)" placed
	assert_equal "$(jq -r 'select(.exit == 0) | .sent' "$BATCH_OUT" | sort -u)" true
	id=$(head -1 "$BATCH_OUT" | jq -r .result.id)
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	assert_equal "$(orders)" 3
	assert_equal "$(queue_ready)" 3
	assert_equal "$(outbox_rows)" 0
}

@test "a place answered in a batch is the order the single command prints" {
	places 1 > in
	batch in
	assert_equal "$status" 0
	single=$(bakery-order place --key k1 --customer c1 --day "$DAY" cardamom-bun=1)
	assert_equal "$(jq -c .result "$BATCH_OUT")" "$(echo "$single" | jq -c .)"
}

@test "pay and show lines pay and show, and a declined card is exit 1 with its result" {
	a=$(place ada) b=$(place bo)
	{
		printf '{"cmd":"pay","order":"%s"}\n' "$a"
		printf '{"cmd":"pay","order":"%s","card":"4000000000000002"}\n' "$b"
		printf '{"cmd":"show","order":"%s"}\n' "$a"
	} > in
	batch in
	assert_equal "$status" 1
	assert_equal "$(sed -n 1p "$BATCH_OUT" | jq -r .result.status)" succeeded
	assert_equal "$(sed -n 2p "$BATCH_OUT" | jq -c '[.exit, .result.status, .error]')" \
		"[1,\"declined\",\"payment declined: '$b': card_declined\"]"
	assert_equal "$(sed -n 3p "$BATCH_OUT" | jq -r .result.id)" "$a"
	bakery-consume >/dev/null
	assert_equal "$(bakery-order show "$a" | jq -r .status)" paid
	assert_equal "$(bakery-order show "$b" | jq -r .status)" placed
}

@test "a malformed line in the middle is an error line with its number and the others apply" {
	{ places 2; echo '{"cmd":"place",'; places 2 3; } > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.line, .exit]' "$BATCH_OUT" | paste -sd' ')" \
		"[1,0] [2,0] [3,65] [4,0] [5,0]"
	assert_equal "$(sed -n 3p "$BATCH_OUT" | jq -r .error)" \
		"malformed JSON: Unfinished JSON term at EOF at line 1, column 15 (while parsing '{\"cmd\":\"place\",')"
	assert_equal "$(orders)" 4
}

@test "a line with invalid UTF-8 or a NUL byte is refused with 65, not placed with its bytes replaced" {
	{
		places 1
		printf '{"cmd":"place","customer":"c2","day":"%s","items":["cardamom-bun=1"],"delivery":"1 Mill \xff Lane"}\n' "$DAY"
		printf '{"cmd":"place","customer":"c3","day":"%s","items":["cardamom-bun=1"],"delivery":"1 Mill \000 Lane"}\n' "$DAY"
		places 1 4
	} > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.line, .exit]' "$BATCH_OUT" | paste -sd' ')" \
		"[1,0] [2,65] [3,65] [4,0]"
	assert_equal "$(sed -n 2p "$BATCH_OUT" | jq -r .error)" "malformed JSON: invalid UTF-8"
	assert_equal "$(sed -n 3p "$BATCH_OUT" | jq -r .error)" "malformed JSON: NUL byte"
	assert_equal "$(orders)" 2
}

@test "a field holding an escaped NUL is refused with 65, never read as not given" {
	local p='{"cmd":"place","customer":"ada","day":"'$DAY'","items":'
	{
		echo "$p"'["cardamom-bun=1"],"key":"order-42\u0000"}'
		echo "$p"'["cardamom-bun=1"],"key":"order-42\u0000"}'
		echo "$p"'["cardamom-bun=1"],"delivery":"1 Main St\u0000"}'
		echo "$p"'["cardamom-bun=1\u0000junk","country-loaf=1"]}'
		echo '{"cmd":"show","order":"ord_1\u0000x"}'
	} > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.exit, .error]' "$BATCH_OUT" | sort | uniq -c | sed 's/^ *//')" \
		'5 [65,"a string holds a NUL (\\u0000)"]'
	assert_equal "$(orders)" 0
}

@test "a line naming a field twice is refused with 65, neither value taken" {
	local p='"customer":"ada","day":"'$DAY'","items":["cardamom-bun=1"]'
	{
		echo '{"cmd":"show",'"$p"',"cmd":"place"}'
		echo '{"cmd":"place",'"$p"',"key":"a","k\u0065y":"b"}'
		echo '{"cmd":"place",'"$p"',"delivery":"1 Main St","delivery":null}'
	} > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.exit, .error]' "$BATCH_OUT" | sort | uniq -c | sed 's/^ *//')" \
		'3 [65,"a key named twice in one object"]'
	assert_equal "$(orders)" 0
}

@test "a line that fails with 74 is said in its answer, and stderr repeats no error of another line" {
	{ places 1; echo '{"cmd":"show","order":"ord_nope"}'; } > in
	BATCH_OUT=$BATS_TEST_TMPDIR/out BATCH_ERR=$BATS_TEST_TMPDIR/err
	status=0
	BAKERY_FAIL_WRITE_AT=1+ bakery-order --batch < in > "$BATCH_OUT" 2> "$BATCH_ERR" || status=$?
	assert_equal "$status" 74
	assert_equal "$(jq -c '[.line, .exit]' "$BATCH_OUT" | paste -sd' ')" "[1,74] [2,66]"
	run grep -c ': error: ' "$BATCH_ERR"
	assert_output 0
}

@test "the exit status is the first failure's, whatever fails after it" {
	{ places 1; echo '{"cmd":"list"}'; echo '[1]'; } > in
	batch in
	assert_equal "$status" 64
	assert_equal "$(jq -c '[.line, .exit]' "$BATCH_OUT" | paste -sd' ')" "[1,0] [2,64] [3,65]"
}

@test "an unknown command is refused with exit 64 and names the commands" {
	echo '{"cmd":"list"}' > in
	batch in
	assert_equal "$status" 64
	assert_equal "$(cat "$BATCH_OUT")" \
		"{\"line\":1,\"exit\":64,\"error\":\"unknown command: 'list': want place, pay or show\"}"
}

@test "a bad field is refused and places nothing" {
	{
		echo '{"cmd":"place","customer":"c1","day":"'"$DAY"'","items":["cardamom-bun=1"],"colour":"red"}'
		echo '{"cmd":"place","customer":"c1","day":"'"$DAY"'","items":"cardamom-bun=1"}'
		echo '{"cmd":"place","customer":7,"day":"'"$DAY"'","items":["cardamom-bun=1"]}'
		echo '{"cmd":"place","customer":"c1","day":"2026-02-30","items":["cardamom-bun=1"]}'
		echo '{"cmd":"place","customer":"c1","day":"'"$DAY"'","items":["cardamom-bun=100"]}'
		echo '{"cmd":"pay","order":"x","card":"4242424242424242","payment_method":"pm_card_visa"}'
	} > in
	batch in
	assert_equal "$status" 64
	assert_equal "$(jq -r .error "$BATCH_OUT" | cut -c1-40 | paste -sd'|')" \
		"$(printf '%s|' 'unknown field: "colour" in place' \
			'place needs "items", an array of "ITEM=Q' '"customer" must be a string' \
			"bad day: '2026-02-30': want YYYY-MM-DD" "bad quantity: 'cardamom-bun=100': want 1" \
			'pay takes "card" or "payment_method"' | sed 's/|$//')"
	assert_equal "$(jq -r .exit "$BATCH_OUT" | sort -u)" 64
	assert_equal "$(orders)" 0
	assert_equal "$(outbox_rows)" 0
}

@test "a key used again with other details is refused (65) and changes nothing" {
	places 1 > in
	echo '{"cmd":"place","customer":"zed","day":"'"$DAY"'","items":["cardamom-bun=1"],"key":"k1"}' >> in
	batch in
	assert_equal "$status" 65
	assert_equal "$(orders)" 1
	assert_equal "$(bakery-order list | jq -r .customer)" c1
}

@test "an empty line is answered as an error and keeps the numbering" {
	{ places 1; echo; places 1 2; } > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.line, .exit, .error]' "$BATCH_OUT" | paste -sd' ')" \
		'[1,0,null] [2,65,"empty line"] [3,0,null]'
}

@test "a line over 64 KiB is refused and the next line still runs" {
	{
		printf '{"cmd":"place","customer":"c1","day":"%s","items":["cardamom-bun=1"],"delivery":"' "$DAY"
		head -c 70000 /dev/zero | tr '\0' a
		echo '"}'
		places 1
	} > in
	batch in
	assert_equal "$status" 65
	assert_equal "$(jq -c '[.line, .exit, .error]' "$BATCH_OUT" | head -1)" \
		'[1,65,"line too long: over 65536 bytes"]'
	assert_equal "$(sed -n 2p "$BATCH_OUT" | jq -c '[.line, .exit]')" '[2,0]'
	assert_equal "$(orders)" 1
}

@test "a 50 MB line is read in bounded memory" {
	# Against the same program's RSS for one short line, so that a
	# sanitizer build's larger floor (make check SANITIZE=1) counts too.
	places 1 > small
	/usr/bin/time -f %M -o base bakery-order --batch < small > /dev/null
	{ head -c 50000000 /dev/zero | tr '\0' a; echo; places 1; } > in
	/usr/bin/time -f %M -o rss bakery-order --batch < in > out || true
	assert_equal "$(jq -c '[.line, .exit]' out | paste -sd' ')" '[1,65] [2,0]'
	rss=$(tail -1 rss) base=$(tail -1 base)
	[ "$rss" -lt $((base + 12000)) ] ||
		{ echo "max RSS $rss KiB, $base KiB for one short line" >&2; false; }
}

@test "a last line without a newline is run and answered" {
	places 2 > in
	printf '%s' "$(places 1 3)" >> in
	batch in
	assert_equal "$status" 0
	assert_equal "$(jq -r .line "$BATCH_OUT" | paste -sd' ')" "1 2 3"
	assert_equal "$(orders)" 3
}

@test "an answer comes as soon as its line is committed and sent, before the next is written" {
	mkfifo cmds
	coproc BATCH { bakery-order --batch < cmds; }
	# bash unsets BATCH and BATCH_PID once the coprocess has ended: keep them.
	pid=$BATCH_PID
	exec 6<&"${BATCH[0]}"
	exec 5> cmds
	places 1 >&5
	read -r -t 20 first <&6
	assert_equal "$(echo "$first" | jq -c '[.line, .exit, .sent]')" '[1,0,true]'
	assert_equal "$(queue_ready)" 1
	places 1 2 >&5
	read -r -t 20 second <&6
	exec 5>&-
	wait "$pid"
	exec 6<&-
	assert_equal "$(echo "$second" | jq -c '[.line, .exit]')" '[2,0]'
}

@test "the lines read together go to the queue in one send: one commit of queue.db" {
	sqlite_only "counts the commits of queue.db"
	places 1 > one
	bakery-order --batch < one > /dev/null # the queue is made
	places 1 2 a > one
	places 40 1 b > forty
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	strace -f -y -e trace=fsync,fdatasync -o one.trace \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order --batch < one > /dev/null
	strace -f -y -e trace=fsync,fdatasync -o forty.trace \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order --batch < forty > out
	assert_equal "$(jq -r .exit out | sort -u)" 0
	one_syncs=$(grep -c 'queue\.db' one.trace || true)
	forty_syncs=$(grep -c 'queue\.db' forty.trace || true)
	[ "$one_syncs" -ge 1 ]
	assert_equal "$forty_syncs" "$one_syncs"
	# Each of the 40 new orders' -wal takes its relayed mark unsynced,
	# its header too: the process made it (walvfs.c knows 40 files).
	assert_equal "$(grep -c 'order/ord_[0-9a-f]*\.db-wal' forty.trace)" 0
	# The queue's side: the 40 messages were enqueued by one transaction.
	assert_equal "$(sqlite3 "$BAKERY_HOME/queue.db" "SELECT count(*),
		count(DISTINCT enqueued_at) FROM messages WHERE id IN (SELECT id
		FROM messages ORDER BY enqueued_at DESC LIMIT 40)")" "40|1"
}

@test "a group's new files are made durable together: each written back, then each synced, one sync of their folder" {
	bakery-order -V | grep -q 'journal_mode=wal)' || skip "WAL only: a rollback journal makes a file at its name"
	places 1 > one
	bakery-order --batch < one > /dev/null # the home and its folders
	places 5 1 g > five
	strace -f -y -e trace=fsync,fdatasync,sync_file_range,rename -o five.trace \
		env ASAN_OPTIONS=detect_leaks=0 bakery-order --batch < five > out
	assert_equal "$(jq -r .exit out | sort -u)" 0
	new='</[^>]*/order/\.new\.ord_[0-9a-f]*>'
	assert_equal "$(grep -c " sync_file_range([0-9]*$new" five.trace)" 5
	assert_equal "$(grep -c " fsync([0-9]*$new" five.trace)" 5
	assert_equal "$(grep -c ' rename(' five.trace)" 5
	# The order folder synced once, after the five names.
	assert_equal "$(grep -c ' fsync([0-9]*</[^>]*/order>' five.trace)" 1
	last_writeback=$(grep -n "sync_file_range([0-9]*$new" five.trace | tail -1 | cut -d: -f1)
	first_sync=$(grep -n "fsync([0-9]*$new" five.trace | head -1 | cut -d: -f1)
	last_sync=$(grep -n "fsync([0-9]*$new" five.trace | tail -1 | cut -d: -f1)
	first_name=$(grep -n ' rename(' five.trace | head -1 | cut -d: -f1)
	folder=$(grep -n 'fsync([0-9]*</[^>]*/order>' five.trace | cut -d: -f1)
	last_name=$(grep -n ' rename(' five.trace | tail -1 | cut -d: -f1)
	[ "$last_writeback" -lt "$first_sync" ]
	[ "$last_sync" -lt "$first_name" ]
	[ "$last_name" -lt "$folder" ]
	assert_equal "$(orders)" 6
	assert_equal "$(find "$BAKERY_HOME/sandboxes/default/order" -name '.new.*' | wc -l)" 0
}

@test "a group's file that cannot be made durable fails its own line alone, and nothing is at its name" {
	id=$(place ada)
	{ places 2 1 s; printf '{"cmd":"pay","order":"%s"}\n' "$id"; places 1 3 s; } > in
	BAKERY_FAIL_SYNC_OF=/billing/ batch in
	[ "$status" -eq 74 ]
	assert_equal "$(jq -c '[.line, .exit, .sent]' "$BATCH_OUT" | paste -sd' ')" \
		"[1,0,true] [2,0,true] [3,74,null] [4,0,true]"
	run jq -r 'select(.line == 3) | .error' "$BATCH_OUT"
	assert_output --partial "cannot sync"
	assert_equal "$(jq -r 'select(.line == 3) | .result' "$BATCH_OUT")" null
	[ ! -e "$BAKERY_HOME/sandboxes/default/billing/$id.db" ]
	[ ! -e "$BAKERY_HOME/sandboxes/default/billing/.new.$id" ]
	assert_equal "$(orders)" 4
	assert_equal "$(queue_ready)" 4 # three OrderPlaced of the batch, one before
	printf '{"cmd":"pay","order":"%s"}\n' "$id" > again
	batch again
	assert_equal "$status" 0
	assert_equal "$(jq -r .result.status "$BATCH_OUT")" succeeded
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	bakery-consume --drain > /dev/null
	assert_equal "$(bakery-order show "$id" | jq -r .status)" paid
}

@test "a refused queue leaves the lines committed in their outboxes, answered sent false, exit 0" {
	bakery-fault set queue-refuses
	places 3 > in
	batch in
	assert_equal "$status" 0
	assert_equal "$(jq -c '[.exit, .sent]' "$BATCH_OUT" | sort -u)" '[0,false]'
	assert_equal "$(grep -c relay_error "$BATCH_ERR")" 3
	assert_equal "$(outbox_rows)" 3
	bakery-fault clear queue-refuses
	run bakery-relay --all
	assert_success
	assert_equal "$(outbox_rows)" 0
	assert_equal "$(queue_ready)" 3
}

# killed POINT: 70 place lines (a group of 64, then 6) killed at POINT:1;
# checks that every answered line is committed and sent, then runs the
# same lines again and checks every order is there once, its event in the
# queue once.
killed() {
	places 70 > in
	status=0
	env BAKERY_CRASH_AT="$1:1" bakery-order --batch < in > out 2> err || status=$?
	assert_equal "$status" 137
	answered=$(wc -l < out)
	assert_equal "$answered" "$2"
	for id in $(jq -r .result.id out); do
		bakery-order show "$id" > /dev/null
		assert_equal "$(bakery-show "order/$id" | jq '.outbox | length')" 0
	done
	# Every event committed is in the queue or its outbox (or both,
	# between the send and the settle).
	assert_equal "$(( $(queue_ready) + $(outbox_rows) ))" "$3"
	batch in
	assert_equal "$status" 0
	assert_equal "$(jq -r .exit "$BATCH_OUT" | sort | uniq -c | awk '{ print $1, $2 }')" "70 0"
	assert_equal "$(orders)" 70
	run bakery-relay --all
	assert_success
	assert_equal "$(outbox_rows)" 0
	assert_equal "$(queue_ready)" 70
	assert_equal "$(queue_ids | sort | uniq -d)" ""
}

@test "killed after the group's commits, before its send: nothing answered, the outboxes hold the events" {
	killed batch.after_commit 0 64
}

@test "killed between the queue's commit and the outboxes' settle: nothing answered, the repeat is absorbed" {
	killed relay.after_send 0 128
}

@test "killed after the send, before the answers: nothing answered, every event in the queue" {
	killed batch.after_send 0 64
}

@test "killed after a group's answers: those lines committed and sent, none after them answered" {
	killed batch.after_answer 64 64
}

@test "a batch that exits before its send is recovered by the relay: the events are in the outboxes with the alarm" {
	export BAKERY_NOW=1796115600 # 2026-12-01T09:00:00Z
	places 5 > in
	status=0
	env BAKERY_CRASH_AT=batch.after_commit bakery-order --batch < in > out 2> err || status=$?
	assert_equal "$status" 137
	assert_equal "$(wc -l < out)" 0
	assert_equal "$(outbox_rows)" 5
	assert_equal "$(bakery-status --json | jq '[.sandboxes[].alarms_armed] | add')" 5
	run env BAKERY_NOW=$((BAKERY_NOW + 30)) bakery-relay --due
	assert_success
	assert_equal "$(outbox_rows)" 0
	assert_equal "$(bakery-queue stats | jq '."bakery-events" | .ready + .delayed')" 5
}

@test "--batch refuses operands and command options" {
	run bakery-order --batch place
	assert_failure 64
	assert_output --partial "error: --batch takes its commands on stdin"
	run bakery-order --batch --customer c1
	assert_failure 64
	assert_output --partial "error: --batch takes its commands on stdin"
}

# key_id KEY: the id a place with KEY gets in the default sandbox (derived
# from the two), learnt in a home of its own.
key_id() {
	BAKERY_HOME=$BATS_TEST_TMPDIR/learn bakery-order gateway test >/dev/null
	BAKERY_HOME=$BATS_TEST_TMPDIR/learn bakery-order place --key "$1" \
		--customer c0 --day "$DAY" cardamom-bun=1 | jq -r .id
}

@test "a group waits on another maker's lock only with no lock of its own: the other is never stalled by it" {
	local dir=$BAKERY_HOME/sandboxes/default/order
	places 6 > in
	k4=$(key_id k4)
	# Another maker holds k4's making: the batch, at its fourth line,
	# waits for it with k1..k3 made.
	mkdir -p "$dir"
	(umask 077 && : >"$dir/.new.$k4")
	(exec 9<>"$dir/.new.$k4" && flock -x 9 && exec sleep 60) &
	local holder=$!
	for _ in $(seq 200); do
		[ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	bakery-order --batch <in >out 2>err &
	local batch=$!
	for _ in $(seq 200); do
		holds_file "$batch" "$dir/.new.$k4" && break
		sleep 0.05
	done
	holds_file "$batch" "$dir/.new.$k4"
	# Its group was settled before the wait: k1..k3 are at their names,
	# and another process making k1 (the same order) does not wait for
	# the batch, which waits on another.
	for k in k1 k2 k3; do
		[ -e "$dir/$(key_id "$k").db" ]
	done
	run --separate-stderr env BAKERY_BUSY_TIMEOUT_MS=3000 bakery-order place --key k1 \
		--customer c1 --day "$DAY" cardamom-bun=1
	assert_success
	assert_equal "$(jq -r .id <<<"$output")" "$(key_id k1)"
	kill "$holder"
	wait "$batch"
	assert_equal "$(jq -c '[.line, .exit]' out | paste -sd' ')" \
		"[1,0] [2,0] [3,0] [4,0] [5,0] [6,0]"
	assert_equal "$(orders)" 6
}

@test "two batches making the same orders in opposite orders do not stall each other" {
	places 12 > a
	tac a > b
	BAKERY_BUSY_TIMEOUT_MS=20000 bakery-order --batch <a >a.out 2>a.err &
	local pa=$!
	BAKERY_BUSY_TIMEOUT_MS=20000 bakery-order --batch <b >b.out 2>b.err &
	local pb=$!
	wait "$pa"
	wait "$pb"
	assert_equal "$(jq -s -c '[.[].exit] | unique' a.out b.out)" "[0]"
	assert_equal "$(orders)" 12
	assert_equal "$(jq -r .result.id a.out | sort)" "$(jq -r .result.id b.out | sort)"
}
