#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
# The promise at the edges: no paid order its subscribers refuse, no
# payment without Billing, no file at a secret's or the menu's name that
# hangs its reader, no object file followed through a link, no answer lost
# without the order's id, no Content-Length but digits, no full disk unseen.
load helpers
bats_require_minimum_version 1.5.0

teardown() {
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then umount "$MNT"; fi
}

# menu N: a menu of N items, item1..itemN at 100 cents, as BAKERY_MENU.
menu() {
	local i
	for i in $(seq "$1"); do printf 'item%d\t100\tItem %d\n' "$i" "$i"; done \
		>"$BATS_TEST_TMPDIR/menu.tsv"
	export BAKERY_MENU="$BATS_TEST_TMPDIR/menu.tsv"
}

# lines N: N item lines, each item at most 99 times in all.
lines() {
	local i
	for i in $(seq "$1"); do printf 'item%d=1\n' $(( (i - 1) % 20 + 1 )); done
}

# forged ORDER: a PaymentSucceeded made by hand for ORDER's total, with a
# payment intent Billing never saw.
forged() {
	local total
	total=$(bakery-order show "$1" | jq .total_cents)
	jq -cn --arg o "$1" --argjson t "$total" --arg at "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" '{
		specversion: "1.0", id: "evt_0123456789abcdef01234567",
		type: "PaymentSucceeded", source: "bakery:default/billing/\($o)",
		subject: "billing/\($o)", time: $at,
		datacontenttype: "application/json", sandbox: "default",
		data: {order: $o, payment_intent: "pi_madeup", amount_cents: $t,
		       currency: "eur", stripe_event: "evt_madeup"}}'
}

# forged_sent: places an order, consumes its OrderPlaced, then sends a
# forged payment of it to the queue; prints the order's id.
forged_sent() {
	local id
	id=$(place ada)
	bakery-consume >/dev/null
	forged "$id" | bakery-queue send >/dev/null
	echo "$id"
}

@test "place refuses more item lines than the subscribers accept, and places nothing" {
	menu 20
	mapfile -t items < <(lines 1001)
	run --separate-stderr bakery-order place --customer ada --day "$DAY" "${items[@]}"
	assert_failure 64
	[[ "$stderr" == "bakery-order: error: too many items: 1001 lines, want at most 1000"* ]]
	assert_equal "$(bakery-order list | wc -l)" 0
}

@test "an order of as many item lines as place takes is paid and reaches the kitchen" {
	menu 20
	mapfile -t items < <(lines 1000)
	id=$(paid_order ada "${items[@]}")
	run bakery-consume --retry-delay 0
	assert_success
	assert_equal "$(jq -sc 'map(.outcome) | unique' <<<"$output")" '["acked"]'
	assert_equal "$(bakery-order show "$id" | jq -r .status)" paid
	assert_effects_once "$id"
}

@test "a PaymentSucceeded made by hand and sent with bakery-queue send pays nothing: the order refuses it" {
	id=$(forged_sent)
	run --separate-stderr bakery-consume --retry-delay 0 --max-retries 0
	assert_success
	assert_equal "$(jq -r 'select(.type == "PaymentSucceeded") | [.status, .outcome] | @tsv' <<<"$output")" \
		"$(printf '422\tdead-lettered')"
	[[ "$(jq -r 'select(.type == "PaymentSucceeded") | .error' <<<"$output")" == *"no payment recorded by Billing"* ]]
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
	assert_equal "$(bakery-show kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o and .status == "confirmed")] | length')" 0
}

@test "a PaymentSucceeded made by hand and fed to bakery-consume --stdin pays nothing" {
	id=$(place ada)
	bakery-consume >/dev/null
	run --separate-stderr bakery-consume --stdin <<<"$(forged "$id")"
	[[ "$output" == *'"status":422'* ]]
	assert_equal "$(bakery-order show "$id" | jq -r .status)" placed
}

@test "the payment event Billing recorded still pays its order when delivered again" {
	id=$(paid_order ada)
	evt=$(bakery-queue peek | jq -r 'select(.envelope.type == "PaymentSucceeded") | .envelope | tojson')
	bakery-consume >/dev/null
	run --separate-stderr bakery-consume --stdin <<<"$evt"
	[[ "$output" == *'"status":200'* ]]
	assert_equal "$(bakery-order show "$id" | jq -r .status)" paid
	assert_effects_once "$id"
}

@test "bakery-status flags a dead-lettered payment event Billing never recorded: plain, --json and --prom" {
	id=$(forged_sent)
	bakery-consume --retry-delay 0 --max-retries 0 >/dev/null
	bakery-dlq drain >/dev/null
	want="sandbox default: payment event evt_0123456789abcdef01234567 for order $id has no record in Billing: it paid nothing; find who sent it"
	run --separate-stderr bakery-status
	assert_failure 1
	assert_line "  $want"
	run --separate-stderr bakery-status --json
	assert_equal "$(jq -c --arg w "$want" '[.sandboxes[0].unbilled_payments, (.attention | index($w) != null)]' <<<"$output")" '[1,true]'
	run --separate-stderr bakery-status --prom "$BATS_TEST_TMPDIR/bakery.prom"
	grep -qx 'bakery_payments_unbilled{sandbox="default"} 1' "$BATS_TEST_TMPDIR/bakery.prom"
}

# fifo NAME: a FIFO nobody writes, at $BATS_TEST_TMPDIR/NAME.
fifo() { mkfifo "$BATS_TEST_TMPDIR/$1"; echo "$BATS_TEST_TMPDIR/$1"; }

@test "a FIFO as BAKERY_MENU is refused at once with 78, not waited on" {
	BAKERY_MENU=$(fifo menu) run --separate-stderr timeout 10 bakery-order place --customer ada --day "$DAY" cardamom-bun=1
	assert_failure 78
	assert_equal "$stderr" "bakery-order: error: menu '$BATS_TEST_TMPDIR/menu': not a file"
}

@test "a FIFO as --stripe-key-file is refused at once with 78, not waited on" {
	bakery-order gateway stripe >/dev/null
	id=$(place ada)
	run --separate-stderr timeout 10 bakery-order pay --stripe-key-file "$(fifo key)" "$id"
	assert_failure 78
	assert_equal "$stderr" "bakery-order: error: cannot read the Stripe key file (--stripe-key-file): not a regular file"
}

@test "a FIFO as the webhook's --secret-file is refused at once with 78, not waited on" {
	run --separate-stderr timeout 10 bakery-webhook --signature t=1,v1=00 --secret-file "$(fifo secret)" <<<'{}'
	assert_failure 78
	[[ "$stderr" == *"cannot read the webhook secret file (--secret-file): not a regular file"* ]]
}

@test "a FIFO as BAKERY_STRIPE_WEBHOOK_SECRET_FILE is refused at once with 78, not waited on" {
	BAKERY_STRIPE_WEBHOOK_SECRET_FILE=$(fifo secret) run --separate-stderr timeout 10 bakery-webhook --signature t=1,v1=00 <<<'{}'
	assert_failure 78
	[[ "$stderr" == *"(BAKERY_STRIPE_WEBHOOK_SECRET_FILE): not a regular file"* ]]
}

@test "a FIFO at HOME/webhook-secret is refused at once with 78, not waited on" {
	id=$(place ada)
	mkfifo "$BAKERY_HOME/webhook-secret"
	run --separate-stderr timeout 10 bakery-order pay "$id"
	assert_failure 78
	[[ "$stderr" == *"cannot read the webhook secret '$BAKERY_HOME/webhook-secret': not a regular file"* ]]
}

@test "an object file that is a symlink is refused with 78 and never followed" {
	id=$(place ada)
	f="$BAKERY_HOME/sandboxes/default/order/$id.db"
	mv "$f" "$BATS_TEST_TMPDIR/elsewhere.db"
	ln -s "$BATS_TEST_TMPDIR/elsewhere.db" "$f"
	sum=$(md5sum <"$BATS_TEST_TMPDIR/elsewhere.db")
	run --separate-stderr bakery-order pay "$id"
	assert_failure 78
	[[ "$stderr" == *"$id.db': not a regular file (a symlink): refused"* ]]
	run --separate-stderr bakery-order show "$id"
	assert_failure 78
	assert_equal "$(md5sum <"$BATS_TEST_TMPDIR/elsewhere.db")" "$sum"
}

@test "an object file that is a FIFO is refused with 78 at once, by readers and writers" {
	mkdir -p "$BAKERY_HOME/sandboxes/default/order"
	mkfifo "$BAKERY_HOME/sandboxes/default/order/ord_fifo.db"
	for cmd in show pay; do
		run --separate-stderr timeout 10 bakery-order "$cmd" ord_fifo
		assert_failure 78
		[[ "$stderr" == *"ord_fifo.db': not a regular file (a FIFO): refused"* ]]
	done
}

@test "a hard link planted at a new object's .new.NAME is never written through: its name goes, the object is made anew" {
	id=$(paid_order ada)
	d=$BAKERY_HOME/sandboxes/default
	echo precious >"$BATS_TEST_TMPDIR/victim"
	chmod 0644 "$BATS_TEST_TMPDIR/victim"
	mkdir -p "$d/crm"
	ln "$BATS_TEST_TMPDIR/victim" "$d/crm/.new.customers"
	run --separate-stderr bakery-consume
	assert_success
	assert_equal "$(cat "$BATS_TEST_TMPDIR/victim")" precious
	assert_equal "$(stat -c '%h %a' "$BATS_TEST_TMPDIR/victim")" "1 644"
	[[ $stderr == *"foreign_file_removed file=$d/crm/.new.customers why=\"a file of more than one link\""* ]]
	assert_equal "$(stat -c '%h %a' "$d/crm/customers.db")" "1 600"
	assert_effects_once "$id"
}

@test "a .new.NAME left 0666, or a FIFO there, is made anew: the object, its -wal and -shm are 0600" {
	d=$BAKERY_HOME/sandboxes/default
	id=$(place ada)
	mkdir -p "$d/schedule" "$d/billing"
	touch "$d/schedule/.new.$DAY"
	chmod 0666 "$d/schedule/.new.$DAY"
	# A FIFO at the new Billing file's name is taken away, never waited on.
	mkfifo "$d/billing/.new.$id"
	run --separate-stderr timeout 10 bakery-order pay "$id"
	assert_success
	[ ! -e "$d/billing/.new.$id" ]
	run --separate-stderr bakery-consume
	assert_success
	for f in "$d/schedule/$DAY.db" "$d/schedule/$DAY.db-wal" "$d/schedule/$DAY.db-shm"; do
		assert_equal "$(stat -c %a "$f")" 600
	done
	assert_effects_once "$id"
}

@test "a folder at a new object's .new.NAME is a configuration error naming it, 78, not a failure to try again" {
	d=$BAKERY_HOME/sandboxes/default
	mkdir -p "$d/kitchen/.new.board"
	run --separate-stderr bakery-show kitchen/board
	assert_failure 66
	id=$(place ada)
	run --separate-stderr bakery-consume
	assert_equal "$(jq -r 'select(.type == "OrderPlaced") | .error' <<<"$output")" \
		"Kitchen answered 503: cannot make '$d/kitchen/board.db': '$d/kitchen/.new.board' is a folder, not bakery's: remove it"
	mkdir -p "$d/billing/.new.$id"
	run --separate-stderr bakery-order pay "$id"
	assert_failure 78
	assert_equal "$stderr" "bakery-order: error: billing answered 503: cannot make '$d/billing/$id.db': '$d/billing/.new.$id' is a folder, not bakery's: remove it"
	[ -d "$d/billing/.new.$id" ]
}

@test "a place whose answer cannot be written says the order was placed and gives its id" {
	run --separate-stderr bash -c "bakery-order place --key k1 --customer ada --day $DAY cardamom-bun=1 >/dev/full"
	assert_failure 74
	id=$(bakery-order list | jq -r .id)
	assert_equal "$stderr" "bakery-order: error: order $id was placed, but its answer was lost: cannot write to standard output: No space left on device"
}

# reader_gone CMD...: runs CMD with stdout a pipe whose reader has gone,
# as "CMD | true" is once true has exited: every write is EPIPE.
reader_gone() {
	python3 -c 'import os, sys
r, w = os.pipe()
os.close(r)
os.dup2(w, 1)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

@test "a place or a pay whose reader is gone exits 74 and names the order, as for a full disk" {
	run --separate-stderr reader_gone bakery-order place --key k1 --customer ada --day "$DAY" cardamom-bun=1
	assert_failure 74
	id=$(bakery-order list | jq -r .id)
	assert_equal "$stderr" "bakery-order: error: order $id was placed, but its answer was lost: cannot write to standard output: Broken pipe"
	run --separate-stderr reader_gone bakery-order pay "$id"
	assert_failure 74
	assert_equal "$stderr" "bakery-order: error: order $id: payment succeeded, but its answer was lost: cannot write to standard output: Broken pipe"
	# A listing cut short by its reader is no failure.
	run --separate-stderr reader_gone bakery-order list
	assert_success
}

@test "the webhook as a CGI program takes a Content-Length of digits only" {
	for bad in ' 2' '+2' '-0' '2 ' '0x2'; do
		run --separate-stderr env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST \
			CONTENT_LENGTH="$bad" BAKERY_STRIPE_WEBHOOK_SECRET=whsec_x bakery-webhook <<<'{}'
		assert_equal "$(head -1 <<<"$output")" $'Status: 400 Bad Request\r'
		[[ "$output" == *'"message":"bad Content-Length: want digits only"'* ]]
	done
}

@test "bakery-status reports a full disk under needs attention" {
	tmpfs_home 2m
	place ada >/dev/null
	dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null || true
	run --separate-stderr bakery-status --json
	assert_failure 1
	assert_equal "$(jq '.disk_free_bytes' <<<"$output")" 0
	[[ "$(jq -r '.attention[]' <<<"$output")" == "home $BAKERY_HOME: its disk is full (0 bytes free): every write fails (74) until space is freed"* ]]
}
