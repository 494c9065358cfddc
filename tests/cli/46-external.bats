#!/usr/bin/env bats
# Subscribers outside bakery (bakery-routes(5)): exec: programs and signed
# http: webhooks, routed by the routes file, once in effect by the event id.
load helpers
bats_require_minimum_version 1.5.0

# routes LINE...: HOME/routes, the default one and these lines after it.
routes() {
	{ cat "$TOP/share/routes"; printf '%s\n' "$@"; } >"$BAKERY_HOME/routes"
}

# prog NAME BODY: an executable shell script $BATS_TEST_TMPDIR/NAME that
# logs each call's event id to NAME.calls, then runs BODY.
prog() {
	local f="$BATS_TEST_TMPDIR/$1"
	{
		echo '#!/bin/sh'
		echo "f='$f'"
		echo 'echo "$BAKERY_EVENT_ID" >>"$f.calls"'
		printf '%s\n' "$2"
	} >"$f"
	chmod +x "$f"
}

# calls NAME [ID]: how many times NAME was called (for ID).
calls() {
	local f="$BATS_TEST_TMPDIR/$1.calls"
	[ -f "$f" ] || { echo 0; return; }
	if [ -n "${2:-}" ]; then grep -cx "$2" "$f" || true; else wc -l <"$f"; fi
}

seen_at() { bakery-show "external/$1" | jq -r '.seen[]'; }

teardown() {
	[ -z "${SERVER_PID:-}" ] || kill "$SERVER_PID" 2>/dev/null || true
}

@test "an exec: subscriber gets the envelope on stdin, its id, type and sandbox, a clean environment, descriptors 0-2 only; called once" {
	prog ok 'cat >"$f.stdin"; env >"$f.env"; ls /proc/self/fd >"$f.fds"'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/ok name=ok"
	id=$(paid_order ada)
	# Descriptor 7 open in bakery, a secret in its environment: neither
	# may reach the program.
	env -u TZ -u LC_ALL BAKERY_STRIPE_KEY=sk_test_never LANG=C.UTF-8 \
		BAKERY_SUBSCRIBER_GREETING=hi bakery-consume --retry-delay 0 7</dev/null >"$BATS_TEST_TMPDIR/out"
	evt=$(jq -r 'select(.type == "OrderPaid") | .id' "$BATS_TEST_TMPDIR/out")
	assert_equal "$(jq -r 'select(.type == "OrderPaid") | .outcome' "$BATS_TEST_TMPDIR/out")" acked
	assert_equal "$(calls ok "$evt")" 1
	assert_equal "$(calls ok)" 1
	# stdin: the envelope, one JSON line.
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/ok.stdin")" 1
	assert_equal "$(jq -r '[.id, .type, .data.order] | join(" ")' "$BATS_TEST_TMPDIR/ok.stdin")" \
		"$evt OrderPaid $id"
	# The environment: these and what the shell itself sets (PWD); the
	# delivery's TRACEPARENT: the event's trace, a span id of its own.
	trace=$(jq -r '.traceparent' "$BATS_TEST_TMPDIR/ok.stdin")
	[[ "$trace" =~ ^00-[0-9a-f]{32}-[0-9a-f]{16}-01$ ]]
	run bash -c "grep -v '^PWD=' '$BATS_TEST_TMPDIR/ok.env' | sort"
	assert_output --regexp "^BAKERY_EVENT_ID=$evt
BAKERY_EVENT_TYPE=OrderPaid
BAKERY_SANDBOX=default
BAKERY_SUBSCRIBER_GREETING=hi
LANG=C.UTF-8
PATH=/usr/local/bin:/usr/bin:/bin
TRACEPARENT=${trace:0:36}[0-9a-f]{16}-01\$"
	refute_line "TRACEPARENT=$trace"
	# 0-2, and 3: ls's own handle on /proc/self/fd.
	assert_equal "$(sort -n "$BATS_TEST_TMPDIR/ok.fds" | tr '\n' ' ')" "0 1 2 3 "
	assert_equal "$(seen_at ok)" "$evt"
	assert_effects_once "$id"
	run bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(calls ok)" 1
}

@test "an exec: subscriber gets the envelope as the queue holds it when it is one line, else as one line" {
	prog ok 'cat >"$f.$BAKERY_EVENT_ID"'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/ok name=ok"
	env='"specversion": "1.0", "source": "bakery:default/order/ord_raw",
		"type": "OrderPaid", "time": "2099-01-01T00:00:00.000Z",
		"sandbox": "default", "data": {"order": "ord_raw",
		"day": "2026-12-01", "customer": "ada"}'
	one=$(printf '{"id": "evt_one",  %s}' "$(tr -d '\n\t' <<<"$env")")
	queue_raw evt_one "$one"
	queue_raw evt_lines "$(printf '{\n"id": "evt_lines",\n%s}' "$env")"
	bakery-consume --retry-delay 0 >/dev/null || true
	# As it came, spaces and all: not dumped again.
	assert_equal "$(cat "$BATS_TEST_TMPDIR/ok.evt_one")" "$one"
	# On several lines in the queue: one line on stdin all the same.
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/ok.evt_lines")" 1
	assert_equal "$(jq -r '.id + " " + .data.order' "$BATS_TEST_TMPDIR/ok.evt_lines")" \
		"evt_lines ord_raw"
}

@test "exit 75 is tried again: applied once on the next delivery, and the subscriber that applied it is not called again" {
	prog flaky 'cat >/dev/null
[ -e "$f.once" ] || { : >"$f.once"; echo "busy, later" >&2; exit 75; }'
	prog ok 'cat >/dev/null'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/ok name=ok" \
		"OrderPaid exec:$BATS_TEST_TMPDIR/flaky name=flaky"
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error]]' <<<"$output"
	assert_output '[[1,503,"retried","Flaky answered 503: exit 75: busy, later"],[2,200,"acked",null]]'
	assert_equal "$(calls flaky)" 2
	assert_equal "$(calls ok)" 1
	assert_equal "$(seen_at flaky)" "$(seen_at ok)"
	assert_effects_once "$id"
}

@test "a failing program (exit 3) is retried to the dead letter with its last stderr line; nothing else is applied again" {
	prog bad 'cat >/dev/null; echo "first line" >&2; printf "the \033[1mlast\033[0m line\n\n" >&2; exit 3'
	prog ok 'cat >/dev/null'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/ok name=ok" \
		"OrderPaid exec:$BATS_TEST_TMPDIR/bad name=bad"
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 2
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPaid") | [.delivery, .status, .outcome]]' <<<"$output"
	assert_output '[[1,500,"retried"],[2,500,"retried"],[3,500,"dead-lettered"]]'
	assert_equal "$(calls bad)" 3
	assert_equal "$(calls ok)" 1
	bakery-dlq drain >/dev/null
	# Control bytes made '?', the last nonblank line kept.
	assert_equal "$(bakery-dlq list | jq -r .error)" \
		"Bad answered 500: exit 3: the ?[1mlast?[0m line"
	assert_effects_once "$id"
	# bakery-trace shows both: applied at one, not at the other.
	evt=$(bakery-dlq list | jq -r .id)
	run bakery-trace "$evt"
	assert_success
	assert_line --regexp 'applied +external/ok$'
	assert_line --regexp 'not applied +external/bad$'
	assert_line --partial 'last error: Bad answered 500: exit 3'
}

@test "exit 65 is refused for good: a dead letter at once; fixed and redriven, applied once, the others not again" {
	prog picky 'cat >/dev/null; echo "no such customer" >&2; exit 65'
	prog ok 'cat >/dev/null'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/picky name=picky" \
		"OrderPaid exec:$BATS_TEST_TMPDIR/ok name=ok"
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error]]' <<<"$output"
	assert_output '[[1,422,"dead-lettered","Picky answered 422: exit 65: no such customer"]]'
	assert_equal "$(calls picky)" 1
	prog picky 'cat >/dev/null'
	bakery-dlq drain >/dev/null
	bakery-redrive --all >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" acked
	assert_equal "$(calls picky)" 2 # the old program's call, the new one's
	assert_equal "$(calls ok)" 1
	assert_equal "$(seen_at picky)" "$(seen_at ok)"
	assert_effects_once "$id"
}

@test "a program past --subscriber-timeout is killed with its process group: a failure, retried" {
	# A program that hangs (its sleeps), and a child of its own.
	prog hang 'sleep 60 & echo $! >"$f.child"; sleep 60'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/hang name=hang"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1 --subscriber-timeout 1
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error]]' <<<"$output"
	assert_output '[[1,504,"retried","Hang answered 504: timed out after 1 s"],[2,504,"dead-lettered","Hang answered 504: timed out after 1 s"]]'
	assert_equal "$(calls hang)" 2
	# The background child of the last call went with the group.
	# (Gone, or a zombie left for whoever reaps orphans here.)
	child=$(cat "$BATS_TEST_TMPDIR/hang.child")
	[ ! -e "/proc/$child" ] || grep -q '^State:.*Z' "/proc/$child/status"
	run bakery-consume --subscriber-timeout 0
	assert_failure 64
}

@test "a program killed by SIGSEGV is a failure, retried" {
	prog crash 'kill -SEGV $$'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/crash name=crash"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1
	assert_success
	run jq -sc '[.[] | select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error]]' <<<"$output"
	assert_output '[[1,500,"retried","Crash answered 500: killed by signal 11"],[2,500,"dead-lettered","Crash answered 500: killed by signal 11"]]'
	assert_equal "$(calls crash)" 2
}

@test "a program that reads nothing of its stdin and exits 0 is applied" {
	prog deaf 'exec 0<&-; exit 0'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/deaf name=deaf"
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(jq -r 'select(.type == "OrderPaid") | .outcome' <<<"$output")" acked
	assert_equal "$(calls deaf)" 1
	[ -n "$(seen_at deaf)" ]
	assert_effects_once "$id"
}

# maxrss FILE: the max RSS /usr/bin/time wrote to FILE, in kB.
maxrss() { awk '{ print $2 }' "$1"; }

@test "a program that prints megabytes neither blocks nor fills memory: the last line is its error" {
	# The same run with a quiet program first: bakery's own RSS, whatever
	# the build (ASan, valgrind) makes of it.
	prog quiet 'cat >/dev/null; exit 1'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/quiet name=quiet"
	paid_order ada >/dev/null
	/usr/bin/time -f 'maxrss_kb %M' -o "$BATS_TEST_TMPDIR/rss.quiet" \
		bakery-consume --retry-delay 0 --max-retries 0 >/dev/null 2>&1
	prog loud 'cat >/dev/null; head -c 50000000 /dev/zero; head -c 40000000 /dev/zero | tr "\0" y >&2; printf "\nenough\n" >&2; exit 1'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/loud name=loud"
	paid_order bo >/dev/null
	run --separate-stderr /usr/bin/time -f 'maxrss_kb %M' -o "$BATS_TEST_TMPDIR/rss" \
		bakery-consume --retry-delay 0 --max-retries 0
	assert_success
	run jq -r 'select(.type == "OrderPaid") | .error' <<<"$output"
	assert_output "Loud answered 500: exit 1: enough"
	# 90 MB written; bakery keeps a 64 KiB tail of stderr: its RSS grows
	# by less than 8 MB over the quiet run's (measured: see the report).
	quiet=$(maxrss "$BATS_TEST_TMPDIR/rss.quiet") loud=$(maxrss "$BATS_TEST_TMPDIR/rss")
	echo "# bakery-consume max RSS: ${quiet} kB quiet, ${loud} kB loud" >&3
	[ "$loud" -lt $((quiet + 8192)) ]
}

@test "a new program under the same name is not called for what the old one applied" {
	prog old 'cat >/dev/null'
	prog new 'cat >/dev/null'
	prog flaky 'cat >/dev/null; [ -e "$f.once" ] || { : >"$f.once"; exit 75; }'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/old name=rcpt" \
		"OrderPaid exec:$BATS_TEST_TMPDIR/flaky name=flaky"
	id=$(paid_order ada)
	bakery-consume --once >/dev/null # OrderPlaced, PaymentSucceeded
	# OrderPaid: old applies, flaky answers 75.
	bakery-consume --once --retry-delay 0 >/dev/null
	assert_equal "$(calls old)" 1
	assert_equal "$(calls flaky)" 1
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/new name=rcpt" \
		"OrderPaid exec:$BATS_TEST_TMPDIR/flaky name=flaky"
	run --separate-stderr bakery-consume
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" acked
	assert_equal "$(calls new)" 0
	assert_equal "$(calls flaky)" 2
	assert_effects_once "$id"
}

@test "killed between an external answer and its record: the one repeat, measured, and the receiver's dedupe keeps one effect" {
	sqlite_only "the lease is waited out with --visibility 1 on the embedded queue"
	export BAKERY_SUBSCRIBER_RECEIVER_DIR="$BATS_TEST_TMPDIR/recv"
	routes "OrderPaid exec:$TOP/share/examples/dedupe-receiver name=archive"
	id=$(paid_order ada)
	crash_at external.after_answer bakery-consume --visibility 1
	evt=$(cat "$BATS_TEST_TMPDIR/recv/calls.log")
	[ -d "$BATS_TEST_TMPDIR/recv/done/$evt" ]
	[ -z "$(seen_at archive)" ]
	run --separate-stderr lease_out bakery-consume --visibility 1
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" acked
	# Called twice (the repeat the design allows here, and only here),
	# applied once, recorded once.
	assert_equal "$(grep -cx "$evt" "$BATS_TEST_TMPDIR/recv/calls.log")" 2
	assert_equal "$(ls "$BATS_TEST_TMPDIR/recv/done" | wc -l)" 1
	assert_equal "$(jq -r .id "$BATS_TEST_TMPDIR/recv/done/$evt/event.json")" "$evt"
	assert_equal "$(seen_at archive)" "$evt"
	assert_effects_once "$id"
	run "$TOP/build/tests/checker" --drained "$BAKERY_HOME"
	assert_success
}

@test "the receipt mailer mails one receipt per paid order through SENDMAIL; a failing sendmail is tried again" {
	mkdir "$BATS_TEST_TMPDIR/mail"
	cat >"$BATS_TEST_TMPDIR/sendmail" <<EOF
#!/bin/sh
[ "\$1" = -t ] || exit 64
[ ! -e "$BATS_TEST_TMPDIR/down" ] || exit 1
cat >"$BATS_TEST_TMPDIR/mail/\$\$"
EOF
	chmod +x "$BATS_TEST_TMPDIR/sendmail"
	export BAKERY_SUBSCRIBER_SENDMAIL="$BATS_TEST_TMPDIR/sendmail -t"
	routes "OrderPaid exec:$TOP/share/examples/receipt-mailer name=receipts"
	: >"$BATS_TEST_TMPDIR/down"
	id=$(paid_order ada cardamom-bun=2)
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 0
	assert_success
	run jq -r 'select(.type == "OrderPaid") | .error' <<<"$output"
	assert_output "Receipts answered 503: exit 75: receipt-mailer: sendmail failed"
	rm "$BATS_TEST_TMPDIR/down"
	bakery-dlq drain >/dev/null
	bakery-redrive --all >/dev/null
	bakery-consume >/dev/null
	bakery-consume >/dev/null
	assert_equal "$(ls "$BATS_TEST_TMPDIR/mail" | wc -l)" 1
	mail=$(cat "$BATS_TEST_TMPDIR/mail"/*)
	evt=$(seen_at receipts)
	[[ "$mail" == *"To: ada@example.com"* ]]
	[[ "$mail" == *"Subject: Your receipt for order $id"* ]]
	[[ "$mail" == *"Message-ID: <$evt@bakery>"* ]]
	[[ "$mail" == *"is paid: 9.00 eur."* ]]
	assert_effects_once "$id"
}

@test "the dedupe receiver keeps one copy of an event called twice" {
	export BAKERY_SUBSCRIBER_RECEIVER_DIR="$BATS_TEST_TMPDIR/recv"
	r="$TOP/share/examples/dedupe-receiver"
	for _ in 1 2; do
		echo '{"id":"evt_1"}' | env BAKERY_EVENT_ID=evt_1 "$r"
	done
	echo '{"id":"evt_2"}' | env BAKERY_EVENT_ID=evt_2 "$r"
	run env BAKERY_EVENT_ID=../x "$r" </dev/null
	assert_failure 65
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/recv/calls.log")" 3
	assert_equal "$(ls "$BATS_TEST_TMPDIR/recv/done" | tr '\n' ' ')" "evt_1 evt_2 "
	assert_equal "$(jq -r .id "$BATS_TEST_TMPDIR/recv/done/evt_1/event.json")" evt_1
}

@test "routes files: --routes prints the file in effect, HOME/routes, then --routes-file or BAKERY_ROUTES first" {
	run --separate-stderr bakery-consume --routes
	assert_success
	assert_equal "${#lines[@]}" 9
	assert_equal "$(jq -r .subscriber <<<"${lines[1]}")" builtin:kitchen
	routes "OrderPaid exec:/usr/bin/true name=t"
	run --separate-stderr bakery-consume --routes
	assert_equal "${#lines[@]}" 10
	jq -e '.subscriber == "exec:/usr/bin/true" and .to == "external/t" and .line == 22' <<<"${lines[9]}"
	printf 'PaymentSucceeded builtin:order\nOrderPaid builtin:crm\n' >"$BATS_TEST_TMPDIR/one"
	run --separate-stderr bakery-consume --routes --routes-file "$BATS_TEST_TMPDIR/one"
	assert_line --index 1 '{"type":"OrderPaid","from":"order","to":"crm/customers","subscriber":"builtin:crm","line":2}'
	run --separate-stderr env BAKERY_ROUTES="$BATS_TEST_TMPDIR/one" bakery-consume --routes
	assert_equal "${#lines[@]}" 2
	# Only the routed subscribers hear: the order and the CRM.
	id=$(paid_order ada)
	BAKERY_ROUTES="$BATS_TEST_TMPDIR/one" bakery-consume >/dev/null
	assert_equal "$(bakery-show crm/customers | jq '.state.customers | length')" 1
	run bakery-show kitchen/board
	assert_failure
	[ -n "$id" ]
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "an http route whose userinfo looks like the loopback is refused (78, FILE:LINE), nothing consumed" {
	paid_order ada >/dev/null
	before=$(queue_ids | sort)
	f="$BATS_TEST_TMPDIR/routes"
	for url in 'http://127.0.0.1:80@example.com/hook' 'http://[::1]@evil/' \
		'https://user:pw@erp.example/hook'; do
		printf 'OrderPaid builtin:crm\nOrderPaid %s name=a secret=/s\n' "$url" >"$f"
		run --separate-stderr bakery-consume --routes-file "$f"
		assert_failure 78
		assert_output ""
		[[ "$stderr" == *"$f:2: a URL with userinfo"* ]]
	done
	printf 'OrderPaid http://127.0.0.1.example.com/ name=a secret=/s\n' >"$f"
	run --separate-stderr bakery-consume --routes-file "$f"
	assert_failure 78
	[[ "$stderr" == *"$f:1: http:// is for"* ]]
	assert_equal "$(queue_ids | sort)" "$before"
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "hostile routes files are a configuration error (78) naming the file and line; nothing is consumed" {
	paid_order ada >/dev/null
	before=$(queue_ids | sort)
	f="$BATS_TEST_TMPDIR/routes"
	check() { # LINE WHY: the file f fails so
		run --separate-stderr bakery-consume --routes-file "$f"
		assert_failure 78
		[[ "$stderr" == *"$f:$1: $2"* ]] || { echo "stderr: $stderr" >&2; return 1; }
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	}
	printf 'OrderPaid builtin:crm\nOrderPaid\n' >"$f"; check 2 "want EVENT-TYPE SUBSCRIBER"
	printf 'OrderShipped builtin:crm\n' >"$f"; check 1 "unknown event type"
	printf '# x\n\nOrderPaid ftp://h/x name=a\n' >"$f"; check 3 "unknown subscriber kind"
	printf 'OrderPaid builtin:nonesuch\n' >"$f"; check 1 "unknown built-in subscriber"
	printf 'PaymentSucceeded builtin:kitchen\n' >"$f"; check 1 "builtin:kitchen cannot apply PaymentSucceeded"
	printf 'OrderPaid exec:bin/prog name=a\n' >"$f"; check 1 "exec: wants an absolute path"
	printf 'OrderPaid exec:/bin/true\n' >"$f"; check 1 "an external subscriber wants name=NAME"
	printf 'OrderPaid http://example.com/x name=a secret=/s\n' >"$f"; check 1 "http:// is for"
	printf 'OrderPaid builtin:crm\nOrderPaid builtin:crm\0\n' >"$f"; check 2 "a NUL byte"
	printf 'OrderPaid builtin:crm\n# caf\xe9\n' >"$f"; check 2 "not UTF-8"
	{ echo 'OrderPaid builtin:crm'; head -c 5000 /dev/zero | tr '\0' x; echo; } >"$f"
	check 2 "a line longer than 4096 bytes"
	refuses 78 "cannot read routes file '$BATS_TEST_TMPDIR/nonesuch'" bakery-consume --routes-file "$BATS_TEST_TMPDIR/nonesuch"
	run --separate-stderr env BAKERY_ROUTES="$f" bakery-consume --routes
	assert_failure 78
	# A FIFO or a device is no routes file, and does not hang the reader.
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	for bad in "$BATS_TEST_TMPDIR/fifo" /dev/zero "$BATS_TEST_TMPDIR"; do
		run --separate-stderr timeout 10 bakery-consume --routes --routes-file "$bad"
		assert_failure 78
		[[ "$stderr" == *"routes file '$bad': not a file"* ]]
	done
	# HOME/routes is read when present, and a bad one stops the consumer.
	printf 'OrderPaid\n' >"$BAKERY_HOME/routes"
	run --separate-stderr bakery-consume
	assert_failure 78
	[[ "$stderr" == *"$BAKERY_HOME/routes:1: "* ]]
	assert_equal "$(queue_ids | sort)" "$before"
}

# server: starts tests/webhook-receiver.py on a free port with secret $1;
# URL is its base.
server() {
	RECEIVER_SECRET=$1 python3 "$TOP/tests/webhook-receiver.py" \
		"$BATS_TEST_TMPDIR/port" "$BATS_TEST_TMPDIR/hooks.log" 3>&- &
	SERVER_PID=$!
	for _ in $(seq 50); do
		[ -s "$BATS_TEST_TMPDIR/port" ] && break
		sleep 0.1
	done
	URL=http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")
}

# secret_file NAME SECRET: a secret file, mode 600.
secret_file() {
	(umask 077; printf '%s\n' "$2" >"$BATS_TEST_TMPDIR/$1")
	echo "$BATS_TEST_TMPDIR/$1"
}

# hooks PATH: the receiver's log lines for PATH.
hooks() { jq -c --arg p "$1" 'select(.path == $p)' "$BATS_TEST_TMPDIR/hooks.log"; }

# outcomes: delivery, status, outcome and error of each OrderPaid answer
# in $output, one TSV line each.
outcomes() {
	jq -r 'select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error] | @tsv' <<<"$output"
}

# http_order PATH NAME right|wrong [OPTION...]: the receiver, one route to
# PATH signed with the right or a wrong secret, an order paid ($id) and
# consumed with --retry-delay 0 and the options; $output is then its
# outcomes.
http_order() {
	local path=$1 name=$2 key
	key=whsec_$(printf 'the right key, 32 bytes long!!!!' | base64)
	server "$key"
	[ "$3" = right ] || key=whsec_$(printf 'some other key entirely, 32 byte' | base64)
	shift 3
	routes "OrderPaid $URL/$path name=$name secret=$(secret_file key "$key")"
	id=$(paid_order ada)
	run --separate-stderr bakery-consume --retry-delay 0 "$@"
	assert_success
	run outcomes
}

@test "http: a subscriber is POSTed the envelope signed per Standard Webhooks and its answer applies the event once" {
	http_order ok hook right
	assert_output "$(printf '1\t200\tacked\t')"
	evt=$(seen_at hook)
	[ -n "$evt" ]
	assert_equal "$(hooks /ok | jq -sc 'map([.id, .valid, .body_id == .id])')" "[[\"$evt\",true,true]]"
	assert_effects_once "$id"
}

@test "http: a subscriber that finds the signature wrong refuses it, and the event is dead-lettered" {
	http_order ok forged wrong
	assert_output "$(printf '1\t422\tdead-lettered\tForged answered 422: HTTP 401: bad signature')"
	assert_equal "$(hooks /ok | jq -sc 'map([.valid, .body_id == .id])')" '[[false,true]]'
	assert_equal "$(seen_at forged)" ""
}

@test "http: a 4xx answer is final: dead-lettered at the first delivery" {
	http_order refuse refuse right
	assert_output "$(printf '1\t422\tdead-lettered\tRefuse answered 422: HTTP 400: no such customer')"
	assert_equal "$(hooks /refuse | jq -s length)" 1
}

@test "http: a redirect is a failure, retried, and never followed" {
	http_order redirect moved right --max-retries 1
	assert_output "$(printf '%s\t500\t%s\tMoved answered 500: HTTP 302 (redirects are not followed)\n' 1 retried 2 dead-lettered)"
	assert_equal "$(hooks /redirect | jq -s length)" 2
	assert_equal "$(hooks /ok | jq -s length)" 0
}

@test "http: a huge answer is read capped and the event applies" {
	http_order huge huge right
	assert_output "$(printf '1\t200\tacked\t')"
	[ -n "$(seen_at huge)" ]
	assert_equal "$(hooks /huge | jq -s length)" 1
	assert_effects_once "$id"
}

@test "http: a 5xx and a timeout are failures, tried again, their errors naming no secret" {
	key=whsec_$(printf 'the right key, 32 bytes long!!!!' | base64)
	server "$key"
	s=$(secret_file key "$key")
	routes "OrderPaid $URL/fail name=down secret=$s" \
		"OrderPaid $URL/slow name=slow secret=$s"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1 --subscriber-timeout 1
	assert_success
	run outcomes
	assert_output "$(printf '%s\n' \
		"$(printf '1\t503\tretried\tDown answered 503: HTTP 503: down for maintenance; Slow answered 504: timed out after 1 s')" \
		"$(printf '2\t503\tdead-lettered\tDown answered 503: HTTP 503: down for maintenance; Slow answered 504: timed out after 1 s')")"
	assert_equal "$(hooks /fail | jq -s length)" 2
	assert_equal "$(hooks /slow | jq -s length)" 2
	[[ "$stderr" != *"$key"* ]]
}

@test "http: the secret is read from its file, a group-readable one is warned of, and the secret is never named" {
	key=whsec_$(printf 'the right key, 32 bytes long!!!!' | base64)
	server "$key"
	s=$(secret_file key "$key")
	chmod 644 "$s"
	routes "OrderPaid $URL/ok name=hook secret=$s"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(hooks /ok | jq -sc 'map(.valid)')" '[true]'
	# The group-readable secret file is warned of, by what it is.
	[[ "$stderr" == *"secret_file_mode"* ]]
	[[ "$stderr" != *"$key"* ]]
}

@test "a lease that runs out during a slow call does not make a second consumer call the subscriber for the same event" {
	sqlite_only "the lease is --visibility 1 on the embedded queue"
	# The call lasts 2 s of real time: the second consumer comes during it.
	prog slow 'cat >/dev/null; touch "$f.started"; sleep 2'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/slow name=slow"
	id=$(paid_order ada)
	bakery-consume --once >/dev/null # OrderPlaced, PaymentSucceeded
	bakery-consume --once --visibility 1 >"$BATS_TEST_TMPDIR/a" &
	a=$!
	wait_for 10 test -e "$BATS_TEST_TMPDIR/slow.started"
	# The lease is out (the clock pinned past it): this one receives
	# OrderPaid while the call runs, waits for external/slow, then finds
	# the event seen there.
	BAKERY_NOW=$(($(date +%s) + 120)) BAKERY_BUSY_TIMEOUT_MS=5000 \
		bakery-consume --once --visibility 5 >"$BATS_TEST_TMPDIR/b"
	wait "$a"
	assert_equal "$(jq -r .delivery "$BATS_TEST_TMPDIR/b")" 2
	assert_equal "$(calls slow)" 1
	assert_equal "$(seen_at slow | wc -l)" 1
	assert_effects_once "$id"
}

@test "a program that exits leaving a child in the background has its group killed with it" {
	# The child holds no pipe of bakery's: only the group's kill ends it.
	prog daemon 'cat >/dev/null; sleep 60 </dev/null >/dev/null 2>&1 & echo $! >"$f.child"'
	routes "OrderPaid exec:$BATS_TEST_TMPDIR/daemon name=daemon"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(jq -r 'select(.type == "OrderPaid") | .outcome' <<<"$output")" acked
	child=$(cat "$BATS_TEST_TMPDIR/daemon.child")
	# Gone, or a zombie left for whoever reaps orphans here.
	[ ! -e "/proc/$child" ] || grep -q '^State:.*Z' "/proc/$child/status"
}

@test "http: a bare status line and a closed connection is no answer: a failure, retried, not applied" {
	key=whsec_$(printf 'the right key, 32 bytes long!!!!' | base64)
	server "$key"
	s=$(secret_file key "$key")
	routes "OrderPaid $URL/bare name=bare secret=$s"
	paid_order ada >/dev/null
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 1
	assert_success
	run jq -r 'select(.type == "OrderPaid") | [.delivery, .status, .outcome, .error] | @tsv' <<<"$output"
	assert_output "$(printf '%s\t503\t%s\tBare answered 503: HTTP 200: not a complete HTTP response (its headers never ended)\n' 1 retried 2 dead-lettered)"
	assert_equal "$(hooks /bare | jq -s length)" 2
	assert_equal "$(seen_at bare)" ""
}

@test "a FIFO named as a subscriber's secret= file is refused without blocking: a failure, retried" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	routes "OrderPaid http://127.0.0.1:9/none name=hook secret=$BATS_TEST_TMPDIR/fifo"
	paid_order ada >/dev/null
	run --separate-stderr timeout 20 bakery-consume --retry-delay 0 --max-retries 0 --subscriber-timeout 5
	assert_success
	run jq -r 'select(.type == "OrderPaid") | [.status, .outcome, .error] | @tsv' <<<"$output"
	assert_output "$(printf '503\tdead-lettered\tHook answered 503: cannot read a subscriber'"'"'s webhook secret file (secret=): not a regular file')"
}

@test "http: a subscriber gets the event's trace in a traceparent header beside the signature, with a span id of its own" {
	key=whsec_$(printf 'the right key, 32 bytes long!!!!' | base64)
	server "$key"
	routes "OrderPaid $URL/ok name=hook secret=$(secret_file key "$key")"
	id=$(TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \
		TRACESTATE=rojo=00f067aa0ba902b7 paid_order ada)
	# The consumer's own trace is not the event's: the event's wins.
	TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01 \
		run --separate-stderr bakery-consume --retry-delay 0
	assert_success
	run outcomes
	assert_output "$(printf '1\t200\tacked\t')"
	paid=$(bakery-order events "$id" | jq -r 'select(.type == "OrderPaid") | .traceparent')
	[[ "$paid" == 00-4bf92f3577b34da6a3ce929d0e0e4736-* ]]
	run hooks /ok
	assert_equal "$(jq -r .valid <<<"$output")" true
	tp=$(jq -r .traceparent <<<"$output")
	[[ "$tp" =~ ^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$ ]]
	[ "$tp" != "$paid" ]
	assert_equal "$(jq -r .tracestate <<<"$output")" rojo=00f067aa0ba902b7
}
