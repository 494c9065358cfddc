#!/usr/bin/env bats
# The version, and the bakery a home records (docs/adr/0010-a-home-records-
# its-bakery.md): the mark HOME/.layout names the newest bakery that wrote
# in the home; a program of an older one writes nothing there (78, naming
# both), the read-only ones read; a home 0.1.0 wrote (no record) is taken
# and recorded on the first write; a mark bakery did not write is 78.
load helpers
bats_require_minimum_version 1.5.0

VERSION=0.2.0
SECRET=whsec_test_0c5a1e

# mark TEXT: the home's mark, as printf writes TEXT.
mark() {
	# shellcheck disable=SC2059 # TEXT is the format, on purpose
	printf "$1" >"$BAKERY_HOME/.layout"
}

# snapshot: every entry of the home, its size, mode, time and content.
snapshot() {
	(cd "$BAKERY_HOME" && find . -printf '%p %y %s %m %T@\n' | sort &&
		find . -type f -exec sha256sum {} + | sort)
}

# A home with something for every writer to do: paid orders whose events
# wait in the queue, a console account, a fault set.
busy_home() {
	paid_order ada >/dev/null
	ID=$(place bob)
	echo cardamom-and-rye-42 | bakery-console user add ada >/dev/null
	bakery-fault set queue-refuses >/dev/null
	place cy >/dev/null 2>&1 || true
	bakery-fault clear queue-refuses >/dev/null
}

# A Stripe event paying order $1, signed with $SECRET, in $BATS_TEST_TMPDIR/ev;
# prints the signature.
stripe_event() {
	local total t mac
	total=$(bakery-order show "$1" | jq .total_cents)
	jq -nc --arg o "$1" --argjson amount "$total" \
		'{id: "evt_v", object: "event", type: "payment_intent.succeeded",
		  created: now | floor, data: {object: {id: "pi_v",
		  object: "payment_intent", amount: $amount, currency: "eur",
		  status: "succeeded", metadata: {order_id: $o, sandbox: "default"}}}}' |
		tr -d '\n' >"$BATS_TEST_TMPDIR/ev"
	t=$(date +%s)
	mac=$({ printf '%s.' "$t"; cat "$BATS_TEST_TMPDIR/ev"; } | openssl dgst -sha256 -hmac "$SECRET" -r)
	echo "t=$t,v1=${mac%% *}"
}

# refuses_newer NEWER CMD...: CMD exits 78 naming the home, NEWER and this
# bakery, with nothing on stdout.
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
refuses_newer() {
	local newer=$1
	shift
	run --separate-stderr "$@"
	[ "$status" -eq 78 ] || fail "$*: exit $status, stderr: $stderr"
	[ -z "$output" ] || fail "$*: stdout: $output"
	[[ $stderr == *"home '$BAKERY_HOME' was written by bakery $newer, newer than this one ($VERSION)"* ]] ||
		fail "$*: stderr: $stderr"
}

@test "a new home's mark records the bakery that made it" {
	place ada >/dev/null
	assert_equal "$(cat "$BAKERY_HOME/.layout")" "sandboxes
bakery $VERSION"
}

@test "a home 0.1.0 wrote (a mark without a record) is read as it is, and recorded on the first write, once" {
	paid_order ada >/dev/null
	mark 'sandboxes\n'
	before=$(snapshot)
	bakery-order list >/dev/null
	bakery-status >/dev/null
	bakery-trace "$(bakery-order list | jq -r .id)" >/dev/null
	assert_equal "$(snapshot)" "$before"
	place bob >/dev/null
	assert_equal "$(cat "$BAKERY_HOME/.layout")" "sandboxes
bakery $VERSION"
	# Rewritten only when it changes: the same file after more writes.
	was=$(stat -c '%i %Y.%y' "$BAKERY_HOME/.layout")
	place cy >/dev/null
	bakery-consume --drain >/dev/null
	assert_equal "$(stat -c '%i %Y.%y' "$BAKERY_HOME/.layout")" "$was"
	# An empty mark too: 0.1.0 could leave one so.
	mark ''
	place dee >/dev/null
	assert_equal "$(sed -n 2p "$BAKERY_HOME/.layout")" "bakery $VERSION"
}

@test "a mark naming an older bakery is brought forward by the first write, and by one program of many at once" {
	place ada >/dev/null
	mark 'sandboxes\nbakery 0.1.9\n'
	seq 8 | xargs -P 8 -I{} bakery-order place --customer "c{}" --day "$DAY" cardamom-bun=1 >/dev/null
	assert_equal "$(cat "$BAKERY_HOME/.layout")" "sandboxes
bakery $VERSION"
	assert_equal "$(bakery-order list | jq -s length)" 9
	# No stray temporary of the mark is left.
	assert_equal "$(find "$BAKERY_HOME" -maxdepth 1 -name '.layout.*' ! -name .layout.lock)" ""
}

@test "a home a newer bakery wrote: place, pay, consume, relay, wipe, the webhook and the console refuse with 78 naming both, and write nothing" {
	busy_home
	sig=$(stripe_event "$ID")
	for newer in 0.3.0 9.9.9 10.0.0; do
		mark "sandboxes\nbakery $newer\n"
		before=$(snapshot)
		refuses_newer "$newer" bakery-order place --customer dee --day "$DAY" cardamom-bun=1
		refuses_newer "$newer" bakery-order pay "$ID"
		refuses_newer "$newer" bakery-consume --drain
		refuses_newer "$newer" bakery-relay --all
		refuses_newer "$newer" bakery-relay --due
		refuses_newer "$newer" bakery-wipe --all
		refuses_newer "$newer" bakery-wipe -s default
		refuses_newer "$newer" bakery-fault set queue-refuses
		refuses_newer "$newer" bakery-dlq drain
		refuses_newer "$newer" bakery-redrive --all
		refuses_newer "$newer" bakery-order gateway test
		refuses_newer "$newer" bakery-queue send < <(bakery-order events "$ID" | head -1)
		# The webhook's answer is its output: a 503, for Stripe to retry.
		run --separate-stderr env BAKERY_STRIPE_WEBHOOK_SECRET=$SECRET \
			bakery-webhook --signature "$sig" <"$BATS_TEST_TMPDIR/ev"
		assert_equal "$status" 78
		assert_equal "$(jq -r .status <<<"$output")" 503
		[[ $(jq -r .message <<<"$output") == *"written by bakery $newer, newer than this one ($VERSION)"* ]]
		refuses_newer "$newer" bakery-console user add bob <<<cardamom-and-rye-42
		refuses_newer "$newer" bakery-console user del ada
		# The console's sign-in (it writes a session): 503, exit 78.
		body='name=ada&password=cardamom-and-rye-42'
		run --separate-stderr env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
			PATH_INFO=/signin HTTP_HOST=127.0.0.1 HTTP_ORIGIN=http://127.0.0.1 \
			CONTENT_TYPE=application/x-www-form-urlencoded \
			CONTENT_LENGTH=${#body} bakery-console <<<"$body"
		assert_equal "$status" 78
		assert_line --index 0 $'Status: 503 Service Unavailable\r'
		[[ $stderr == *"written by bakery $newer, newer than this one ($VERSION)"* ]]
		assert_equal "$(snapshot)" "$before"
	done
}

@test "a home a newer bakery wrote is read by the programs that only look" {
	busy_home
	id=$(bakery-order list | jq -r .id | head -1)
	orders=$(bakery-order list)
	mark 'sandboxes\nbakery 9.9.9\n'
	# What SQLite's readers note in a -shm aside, they change nothing.
	before=$(snapshot | grep -v -- '-shm')
	assert_equal "$(bakery-order list)" "$orders"
	bakery-order show "$id" >/dev/null
	bakery-show "order/$id" >/dev/null
	bakery-status >/dev/null
	bakery-trace "$id" >/dev/null
	bakery-queue peek >/dev/null
	bakery-queue stats >/dev/null
	bakery-dlq list >/dev/null
	bakery-fault list >/dev/null
	bakery-wipe --all --dry-run >/dev/null
	assert_equal "$(sed -n 2p "$BAKERY_HOME/.layout")" "bakery 9.9.9"
	assert_equal "$(snapshot | grep -v -- '-shm')" "$before"
	run --separate-stderr bakery-doctor
	assert_line --regexp "^warn  home: '$BAKERY_HOME', .*, [0-9]+ entries, written by bakery 9\\.9\\.9, newer than this one \\($VERSION\\), which writes nothing in it\$"
}

@test "a mark that is garbage, too long, not a version or not a file is 78 for every program, naming it, and left as it is" {
	place ada >/dev/null
	local bad=(
		'sandboxes\nbakery 1.2\n'
		'sandboxes\nbakery 01.2.3\n'
		'sandboxes\nbakery 1.2.3.4\n'
		'sandboxes\nbakery 123456.0.0\n'
		'sandboxes\nbakery x.y.z\n'
		'sandboxes\nbakery 1.2.3'
		'sandboxes\nbakery -1.2.3\n'
		'sandboxes\nbakery 0.2.0\nmore\n'
		'sandboxes\nbakery 0.2.0 \n'
		'sandboxes\nwritten 0.2.0\n'
		'sandbox\n'
		'\x00\x01\xff\n'
		"sandboxes\nbakery $(head -c 200 /dev/zero | tr '\0' 9).0.0\n"
		"$(head -c 100000 /dev/zero | tr '\0' x)"
	)
	for m in "${bad[@]}"; do
		mark "$m"
		before=$(snapshot)
		for cmd in "bakery-order place --customer bob --day $DAY cardamom-bun=1" \
		    "bakery-order list" "bakery-status" "bakery-consume --drain"; do
			read -ra argv <<<"$cmd"
			run --separate-stderr "${argv[@]}"
			[ "$status" -eq 78 ] || fail "$m: $cmd: exit $status: $stderr"
			[[ $stderr == *"its mark '$BAKERY_HOME/.layout' "* ]] || fail "$m: $cmd: $stderr"
			assert_output ""
		done
		assert_equal "$(snapshot)" "$before"
		run --separate-stderr bakery-doctor
		[[ $output == *"FAIL  home: cannot use home '$BAKERY_HOME': its mark '$BAKERY_HOME/.layout' "* ]] || fail "doctor: $output"
	done
	run --separate-stderr bakery-order list
	[[ $stderr == *"is too long (over 64 bytes)"* ]]
	# Not a regular file: a link to a good mark, a folder, a FIFO.
	printf 'sandboxes\nbakery %s\n' "$VERSION" >"$BATS_TEST_TMPDIR/good"
	rm "$BAKERY_HOME/.layout"
	ln -s "$BATS_TEST_TMPDIR/good" "$BAKERY_HOME/.layout"
	refuses 78 "its mark '$BAKERY_HOME/.layout' is not a regular file" bakery-order list
	rm "$BAKERY_HOME/.layout"
	mkfifo "$BAKERY_HOME/.layout"
	refuses 78 "is not a regular file" timeout 10 bakery-order place --customer bob --day "$DAY" cardamom-bun=1
	rm "$BAKERY_HOME/.layout"
	mkdir "$BAKERY_HOME/.layout"
	refuses 78 "is not a regular file" bakery-order list
}

@test "a long-running program stops with 78 at its next turn once a newer bakery recorded itself" {
	place ada >/dev/null
	bakery-consume --drain >/dev/null
	bakery-consume --follow >"$BATS_TEST_TMPDIR/consume.out" 2>"$BATS_TEST_TMPDIR/consume.err" &
	consumer=$!
	BAKERY_ALARM_DELAY=1 bakery-relay --watch >/dev/null 2>"$BATS_TEST_TMPDIR/relay.err" &
	relay=$!
	bakery-dlq drain --follow >/dev/null 2>"$BATS_TEST_TMPDIR/dlq.err" &
	dlq=$!
	sleep 1 # each past its first turn, on a home of this bakery
	kill -0 "$consumer" "$relay" "$dlq"
	# A newer bakery records itself as bakery does: a whole file renamed.
	printf 'sandboxes\nbakery 9.9.9\n' >"$BAKERY_HOME/.layout.new"
	mv "$BAKERY_HOME/.layout.new" "$BAKERY_HOME/.layout"
	for p in consumer relay dlq; do
		rc=0
		timeout 40 tail --pid="${!p}" -f /dev/null || fail "$p still running"
		wait "${!p}" || rc=$?
		assert_equal "$rc" 78
	done
	for f in consume relay dlq; do
		grep -q "was written by bakery 9.9.9, newer than this one ($VERSION)" "$BATS_TEST_TMPDIR/$f.err" ||
			fail "$f: $(cat "$BATS_TEST_TMPDIR/$f.err")"
	done
}
