#!/usr/bin/env bats
# bakery-console under a real lighttpd on 127.0.0.1, attacked with curl:
# every hostile case of its safety rules (bakery-console(1), "What a
# request must pass"), its accounts and sessions, and the facts it shows
# against the shell tools'.
bats_require_minimum_version 1.5.0
load helpers
load lighttpd

PASSWORD=cardamom-and-rye-42

teardown() {
	lighttpd_stop
	release_lock
}

# hold_lock FILE: another process (sqlite3) holds FILE's write lock, a
# BEGIN IMMEDIATE, until release_lock.
hold_lock() {
	rm -f "$BATS_TEST_TMPDIR/lock"
	mkfifo "$BATS_TEST_TMPDIR/lock"
	sqlite3 "$1" <"$BATS_TEST_TMPDIR/lock" >/dev/null 3>&- &
	LOCK_PID=$!
	exec 4>"$BATS_TEST_TMPDIR/lock"
	echo 'BEGIN IMMEDIATE;' >&4
	for _ in $(seq 50); do
		sqlite3 -cmd '.timeout 0' "$1" 'BEGIN IMMEDIATE; ROLLBACK;' \
			2>/dev/null || return 0
		sleep 0.1
	done
	echo "the lock on $1 was not taken" >&2
	return 1
}

release_lock() {
	[ -n "${LOCK_PID:-}" ] || return 0
	exec 4>&-
	wait "$LOCK_PID" || true
	LOCK_PID=
}

# account NAME [OPTIONS...]: a console account with $PASSWORD.
account() {
	echo "$PASSWORD" | bakery-console user add "$@" >/dev/null
}

# signin NAME [PASSWORD]: signs in through the console, its cookie in
# $BATS_TEST_TMPDIR/NAME.jar; prints the status.
signin() {
	curl -s -D "$BATS_TEST_TMPDIR/headers" -o "$RESPONSE" -w '%{http_code}' \
		-c "$BATS_TEST_TMPDIR/$1.jar" -H "Origin: $BASE" \
		--data-urlencode "name=$1" --data-urlencode "password=${2:-$PASSWORD}" \
		"$BASE/console/signin"
}

# jar NAME: the cookie jar of NAME's session.
jar() { echo "$BATS_TEST_TMPDIR/$1.jar"; }

# get NAME PATH: GET /console/PATH with NAME's session (NAME "-": none);
# prints the status, the body in $RESPONSE, the headers in headers.
get() {
	curl -s -D "$BATS_TEST_TMPDIR/headers" -o "$RESPONSE" -w '%{http_code}' \
		${1:+$([ "$1" = - ] || echo "-b $(jar "$1")")} "$BASE/console/$2"
}

# csrf NAME: the CSRF token of NAME's session, from its order page.
csrf() {
	curl -s -b "$(jar "$1")" "$BASE/console/s/$1/" |
		sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1
}

# post NAME PATH DATA [CURL ARGS...]: a form posted from the console's
# own origin with NAME's session; prints the status.
post() {
	local who=$1 path=$2 data=$3
	shift 3
	curl -s -D "$BATS_TEST_TMPDIR/headers" -o "$RESPONSE" -w '%{http_code}' \
		-b "$(jar "$who")" -H "Origin: $BASE" --data-raw "$data" "$@" \
		"$BASE/console/$path"
}

header() { grep -i "^$1:" "$BATS_TEST_TMPDIR/headers" | cut -d' ' -f2- | tr -d '\r'; }

# What sandbox S holds, as the shell tools show it.
facts() {
	{ bakery-order -s "$1" list | jq -c '{id, status}'
	  bakery-fault -s "$1" list | jq -c .name
	  bakery-dlq -s "$1" list | jq -c .id
	  bakery-queue peek --limit 1000 | jq -c .id; } 2>&1
}

# signed ada: lighttpd started, ada's account made and signed in.
signed() {
	lighttpd_start
	account "$1"
	assert_equal "$(signin "$1")" 303
}

@test "every answer carries the CSP, nosniff, Referrer-Policy and no-store" {
	signed ada
	for page in signin "s/ada/" s/ada/orders s/ada/faults s/ada/dead \
	    s/ada/boards s/ada/status s/bob/orders no-such-page; do
		get ada "$page" >/dev/null
		assert_equal "$(header Content-Security-Policy)" "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
		assert_equal "$(header X-Content-Type-Options)" nosniff
		assert_equal "$(header Referrer-Policy)" same-origin
		assert_equal "$(header Cache-Control)" no-store
	done
	run get - s/ada/orders
	assert_output 303
	assert_equal "$(header Content-Security-Policy)" "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
}

@test "the pages carry no script and no inline style, which the CSP would block" {
	signed ada
	for page in signin "s/ada/" s/ada/orders s/ada/faults s/ada/dead s/ada/boards s/ada/status; do
		get ada "$page" >/dev/null
		run grep -Ei '<script|style=| on[a-z]+=|<style' "$RESPONSE"
		assert_failure
	done
}

@test "a page without a session answers 303 to the sign-in page" {
	lighttpd_start
	assert_equal "$(get - s/ada/orders)" 303
	assert_equal "$(header Location)" /console/signin
	assert_equal "$(get - s/ada/dead)" 303
}

@test "a right password signs in with a session cookie: HttpOnly, SameSite=Strict, Path=/console/, not Secure over http" {
	lighttpd_start
	account ada
	assert_equal "$(signin ada)" 303
	assert_equal "$(header Location)" /console/s/ada/
	cookie=$(header Set-Cookie)
	assert_regex "$cookie" '^bakery_session=[0-9a-f]{64}; Path=/console/; HttpOnly; SameSite=Strict$'
	assert_equal "$(get ada s/ada/orders)" 200
}

@test "over https (BAKERY_CONSOLE_ORIGIN) the cookie is Secure and the origin must be https" {
	LIGHTTPD_ORIGIN=https://bakery.example lighttpd_start
	account ada
	assert_equal "$(signin ada)" 403 # Origin http://127.0.0.1:PORT is not the console's
	code=$(curl -s -D "$BATS_TEST_TMPDIR/headers" -o /dev/null -w '%{http_code}' \
		-H 'Origin: https://bakery.example' --data "name=ada&password=$PASSWORD" \
		"$BASE/console/signin")
	assert_equal "$code" 303
	assert_regex "$(header Set-Cookie)" '; Secure$'
}

@test "a wrong password or an unknown name is 403 with no cookie" {
	lighttpd_start
	account ada
	assert_equal "$(signin ada wrong-password-1)" 403
	assert_equal "$(header Set-Cookie)" ""
	grep -q 'Wrong name or password' "$RESPONSE"
	assert_equal "$(signin nobody)" 403
	grep -q 'Wrong name or password' "$RESPONSE"
}

@test "sign-in is slowed: the 6th try of a minute is 429, even with the right password" {
	lighttpd_start
	account ada
	for _ in 1 2 3 4 5; do
		assert_equal "$(signin ada "wrong-$RANDOM-pw")" 403
	done
	assert_equal "$(signin ada)" 429
	assert_equal "$(header Retry-After)" 60
	assert_equal "$(header Set-Cookie)" ""
	# Another name is not slowed by ada's failures.
	account bo
	assert_equal "$(signin bo)" 303
}

@test "failed sign-ins are logged with the account's name, never the password" {
	lighttpd_start
	account ada
	signin ada "hunter2-$RANDOM-secret" >/dev/null
	signin "$PASSWORD" "$PASSWORD" >/dev/null # a password typed as a name
	for _ in 1 2 3 4 5; do signin ada wrong-password-x >/dev/null; done
	grep -q 'signin_failed account=ada' "$LIGHTTPD_DIR/stderr"
	grep -q 'signin_failed account=(unknown)' "$LIGHTTPD_DIR/stderr"
	grep -q 'signin_throttled account=ada' "$LIGHTTPD_DIR/stderr"
	run grep -r -e hunter2 -e "$PASSWORD" -e wrong-password "$LIGHTTPD_DIR/stderr" "$BAKERY_HOME"
	assert_failure
}

@test "the password is kept only as a yescrypt hash" {
	account ada
	run sqlite3 "$BAKERY_HOME/console.db" 'SELECT hash FROM accounts'
	assert_output --regexp '^\$y\$'
	run grep -rl "$PASSWORD" "$BAKERY_HOME"
	assert_failure
}

@test "a session token is kept only as its SHA-256" {
	signed ada
	token=$(awk '$6 == "bakery_session" { print $7 }' "$(jar ada)")
	assert_regex "$token" '^[0-9a-f]{64}$'
	run sqlite3 "$BAKERY_HOME/console.db" 'SELECT token_hash FROM sessions'
	assert_output "$(printf %s "$token" | sha256sum | cut -d' ' -f1)"
	run grep -rl "$token" "$BAKERY_HOME"
	assert_failure
}

@test "signing in makes a new session, and the one the browser came with ends" {
	signed ada
	old=$(awk '$6 == "bakery_session" { print $7 }' "$(jar ada)")
	cp "$(jar ada)" "$BATS_TEST_TMPDIR/old.jar"
	curl -s -o /dev/null -b "$(jar ada)" -c "$(jar ada)" -H "Origin: $BASE" \
		--data "name=ada&password=$PASSWORD" "$BASE/console/signin"
	new=$(awk '$6 == "bakery_session" { print $7 }' "$(jar ada)")
	[ "$new" != "$old" ]
	assert_equal "$(get old s/ada/orders)" 303
	assert_equal "$(get ada s/ada/orders)" 200
}

@test "signing out deletes the session: its cookie opens nothing after" {
	signed ada
	cp "$(jar ada)" "$BATS_TEST_TMPDIR/kept.jar"
	assert_equal "$(post ada signout "csrf=$(csrf ada)")" 303
	assert_equal "$(header Location)" /console/signin
	assert_regex "$(header Set-Cookie)" '^bakery_session=; Path=/console/;.*Max-Age=0'
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM sessions')" 0
	assert_equal "$(get kept s/ada/orders)" 303
}

@test "a forged or malformed cookie opens no session" {
	signed ada
	for c in "bakery_session=$(openssl rand -hex 32)" 'bakery_session=zz' \
	    "bakery_session=$(openssl rand -hex 32)0" 'bakery_session='; do
		run curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $c" "$BASE/console/s/ada/orders"
		assert_output 303
	done
	# Two cookies of the name (one planted by a sibling host) are none.
	token=$(awk '$6 == "bakery_session" { print $7 }' "$(jar ada)")
	run curl -s -o /dev/null -w '%{http_code}' \
		-H "Cookie: bakery_session=$token; bakery_session=$(openssl rand -hex 32)" \
		"$BASE/console/s/ada/orders"
	assert_output 303
}

@test "a session unused for 12 hours, or 7 days old, has ended" {
	signed ada
	now=$(($(date +%s) * 1000))
	sqlite3 "$BAKERY_HOME/console.db" "UPDATE sessions SET used_at = $((now - 12 * 3600 * 1000 - 1000))"
	assert_equal "$(get ada s/ada/orders)" 303
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM sessions')" 0
	signin ada >/dev/null
	sqlite3 "$BAKERY_HOME/console.db" "UPDATE sessions SET created_at = $((now - 7 * 86400 * 1000 - 1000))"
	assert_equal "$(get ada s/ada/orders)" 303
}

@test "a changed password or a deleted account ends its sessions" {
	signed ada
	echo 'a-brand-new-password' | bakery-console user passwd ada >/dev/null
	assert_equal "$(get ada s/ada/orders)" 303
	assert_equal "$(signin ada)" 403
	assert_equal "$(signin ada a-brand-new-password)" 303
	bakery-console user del ada >/dev/null
	assert_equal "$(get ada s/ada/orders)" 303
	assert_equal "$(signin ada a-brand-new-password)" 403
}

@test "an action without the session's CSRF token is 403 and changes nothing" {
	signed ada
	account bo
	signin bo >/dev/null
	before=$(facts ada)
	assert_equal "$(post ada s/ada/faults 'fault=refuses:kitchen')" 403
	assert_equal "$(post ada s/ada/faults "csrf=$(openssl rand -hex 32)&fault=refuses:kitchen")" 403
	assert_equal "$(post ada s/ada/faults "csrf=$(csrf bo)&fault=refuses:kitchen")" 403
	assert_equal "$(post ada s/ada/faults "csrf=$(csrf ada)&csrf=$(csrf ada)&fault=refuses:kitchen")" 403
	assert_equal "$(post ada s/ada/orders "csrf=x&customer=ada&day=$DAY&qty.cardamom-bun=1")" 403
	assert_equal "$(facts ada)" "$before"
}

@test "an action from another origin is 403 and changes nothing" {
	signed ada
	token=$(csrf ada)
	before=$(facts ada)
	for h in 'Origin: http://evil.example' 'Origin: null' \
	    "Origin: ${BASE}.evil.example" 'Origin: https://127.0.0.1'; do
		run curl -s -o /dev/null -w '%{http_code}' -b "$(jar ada)" -H "$h" \
			--data "csrf=$token&fault=refuses:kitchen" "$BASE/console/s/ada/faults"
		assert_output 403
	done
	# Without Origin: Sec-Fetch-Site, else Referer, must say so; none is 403.
	for h in 'Sec-Fetch-Site: cross-site' 'Sec-Fetch-Site: same-site' \
	    'Referer: http://evil.example/console/' "Referer: ${BASE}.evil.example/" 'X-Nothing: 1'; do
		run curl -s -o /dev/null -w '%{http_code}' -b "$(jar ada)" -H "$h" \
			--data "csrf=$token&fault=refuses:kitchen" "$BASE/console/s/ada/faults"
		assert_output 403
	done
	assert_equal "$(facts ada)" "$before"
	# The sign-in form too: a login planted from elsewhere is refused.
	run curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://evil.example' \
		--data "name=ada&password=$PASSWORD" "$BASE/console/signin"
	assert_output 403
}

@test "a browser that sends no Origin passes by Sec-Fetch-Site or by its Referer" {
	signed ada
	token=$(csrf ada)
	run curl -s -o /dev/null -w '%{http_code}' -b "$(jar ada)" -H 'Sec-Fetch-Site: same-origin' \
		--data "csrf=$token&fault=refuses:kitchen" "$BASE/console/s/ada/faults"
	assert_output 303
	run curl -s -o /dev/null -w '%{http_code}' -b "$(jar ada)" -H "Referer: $BASE/console/s/ada/faults" \
		--data "csrf=$token" "$BASE/console/s/ada/faults"
	assert_output 303
	assert_equal "$(bakery-fault -s ada list)" ""
}

@test "a GET changes nothing, whatever its query asks" {
	signed ada
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	token=$(csrf ada)
	before=$(facts ada)
	for page in "s/ada/faults?csrf=$token&fault=refuses:kitchen" \
	    "s/ada/orders?csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1" \
	    "s/ada/orders/$id?csrf=$token&card=4242424242424242" \
	    "s/ada/?csrf=$token" "s/ada/boards" "s/ada/status" "s/ada/dead"; do
		get ada "$page" >/dev/null
	done
	assert_equal "$(get ada "s/ada/orders/$id/pay?csrf=$token&card=4242424242424242")" 405
	assert_equal "$(get ada "s/ada/dead/redrive?csrf=$token")" 405
	assert_equal "$(get ada "signout?csrf=$token")" 405
	assert_equal "$(facts ada)" "$before"
	assert_equal "$(bakery-order -s ada show "$id" | jq -r .status)" placed
}

@test "every action answers 303 to the page of its outcome" {
	signed ada
	token=$(csrf ada)
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=refuses:kitchen")" 303
	assert_equal "$(header Location)" "/console/s/ada/faults?done=saved"
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=2&delivery=")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=placed"
	assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$token&card=4000+0000+0000+0002")" 303
	assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=declined:card_declined"
	get ada "s/ada/orders/$id?done=declined:card_declined" >/dev/null
	grep -q 'The card was declined: card_declined' "$RESPONSE"
	assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$token&card=4242+4242+4242+4242")" 303
	assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=paid"
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token")" 303
	assert_equal "$(header Location)" "/console/s/ada/dead?done=none"
}

# form_key NAME: the key of a new order form NAME's order page renders.
form_key() {
	curl -s -b "$(jar "$1")" "$BASE/console/s/$1/" |
		sed -n 's/.*name="key" value="\([^"]*\)".*/\1/p' | head -1
}

# orders S: how many order files sandbox S holds, and how many orders
# bakery-order lists.
orders() {
	echo "$(find "$BAKERY_HOME/sandboxes/$1/order" -name '*.db' 2>/dev/null | wc -l) $(bakery-order -s "$1" list | wc -l)"
}

@test "the order form carries a fresh key: sent twice, it is one order, both answers 303 to it" {
	signed ada
	token=$(csrf ada)
	key=$(form_key ada)
	assert_regex "$key" '^form_[0-9a-f]{24}$'
	other=$(form_key ada)
	assert_regex "$other" '^form_[0-9a-f]{24}$'
	[ "$key" != "$other" ]
	form="csrf=$token&key=$key&customer=ada&day=$DAY&qty.cardamom-bun=2&delivery="
	assert_equal "$(post ada s/ada/orders "$form")" 303
	first=$(header Location)
	assert_regex "$first" '^/console/s/ada/orders/ord_[0-9a-f]{24}\?done=placed$'
	assert_equal "$(post ada s/ada/orders "$form")" 303
	assert_equal "$(header Location)" "$first"
	assert_equal "$(orders ada)" "1 1"
	id=$(bakery-order -s ada list | jq -r .id)
	assert_equal "$first" "/console/s/ada/orders/$id?done=placed"
	# The same key with other details is refused; nothing more placed.
	assert_equal "$(post ada s/ada/orders "csrf=$token&key=$key&customer=ada&day=$DAY&qty.cardamom-bun=3")" 422
	grep -q 'same key, other details' "$RESPONSE"
	# Another form's key is another order.
	assert_equal "$(post ada s/ada/orders "csrf=$token&key=$other&customer=ada&day=$DAY&qty.cardamom-bun=2")" 303
	[ "$(header Location)" != "$first" ]
	assert_equal "$(orders ada)" "2 2"
}

@test "the Pay button pressed twice pays once: one payment, one PaymentSucceeded" {
	signed ada
	token=$(csrf ada)
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	for _ in 1 2; do
		assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$token&card=4242424242424242")" 303
		assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=paid"
	done
	assert_equal "$(bakery-show -s ada "billing/$id" | jq '.state.payments | length')" 1
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/ada/billing/$id.db" "select count(*) from events where type = 'PaymentSucceeded'")" 1
	bakery-consume >/dev/null 2>&1
	# Paid by then: a third press answers paid and records nothing.
	assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$token&card=4242424242424242")" 303
	assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=paid"
	assert_equal "$(sqlite3 "$BAKERY_HOME/sandboxes/ada/billing/$id.db" "select count(*) from events")" 1
	assert_equal "$(bakery-order -s ada show "$id" | jq -r .status)" paid
}

@test "a hostile order key is 400 with the reason, and nothing is placed" {
	signed ada
	token=$(csrf ada)
	form="csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1"
	long=$(printf 'k%.0s' $(seq 129))
	for key in "$long" 'k+1' 'k%091' 'k%01' 'k%7F' '' \
	    k%E2%80%AA1 k%E2%80%AB1 k%E2%80%AC1 k%E2%80%AD1 k%E2%80%AE1 \
	    k%E2%81%A61 k%E2%81%A71 k%E2%81%A81 k%E2%81%A91; do
		assert_equal "$(post ada s/ada/orders "$form&key=$key")" 400
		grep -q "key is not 1 to 128 bytes of UTF-8 without spaces or control characters" "$RESPONSE"
	done
	# Named twice, or not UTF-8: the form is malformed.
	assert_equal "$(post ada s/ada/orders "$form&key=k1&key=k2")" 400
	assert_equal "$(post ada s/ada/orders "$form&key=k%C0%AF")" 400
	assert_equal "$(orders ada)" "0 0"
	# 128 bytes is a key.
	assert_equal "$(post ada s/ada/orders "$form&key=${long:1}")" 303
	assert_equal "$(orders ada)" "1 1"
}

@test "a form without a key (a page from before it had one) places a fresh order each time" {
	signed ada
	token=$(csrf ada)
	form="csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1"
	assert_equal "$(post ada s/ada/orders "$form")" 303
	first=$(header Location)
	assert_equal "$(post ada s/ada/orders "$form")" 303
	[ "$(header Location)" != "$first" ]
	assert_equal "$(orders ada)" "2 2"
}

@test "an outcome code the console does not know is never shown" {
	signed ada
	get ada 's/ada/faults?done=%3Cb%3Eowned%3C%2Fb%3E' >/dev/null
	run grep -c 'owned' "$RESPONSE"
	assert_output 0
}

@test "a customer named like markup is refused, and the refusal shows it as text" {
	signed ada
	token=$(csrf ada)
	assert_equal "$(post ada s/ada/orders "csrf=$token&day=$DAY&qty.cardamom-bun=1" \
		--data-urlencode 'customer=<script>alert(1)</script>')" 422
	grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$RESPONSE"
	run grep -F '<script>' "$RESPONSE"
	assert_failure
	assert_equal "$(bakery-order -s ada list)" ""
}

@test "a delivery address with quotes and markup is shown as text on every page" {
	signed ada
	token=$(csrf ada)
	evil='"><img src=x onerror=alert(1)> 1 '"'"'Main'"'"' St & Co'
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1" \
		--data-urlencode "delivery=$evil")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	bakery-order -s ada pay "$id" >/dev/null
	bakery-consume >/dev/null 2>&1
	for page in "s/ada/orders/$id" s/ada/boards; do
		get ada "$page" >/dev/null
		grep -qF '&quot;&gt;&lt;img src=x onerror=alert(1)&gt; 1 &#39;Main&#39; St &amp; Co' "$RESPONSE"
		run grep -F '<img' "$RESPONSE"
		assert_failure
	done
}

@test "an error text a subscriber returned is shown as text in the dead letters and the trace" {
	cat >"$BATS_TEST_TMPDIR/evil" <<'SH'
#!/bin/sh
echo '<script>alert("x")</script> & '"'"'quoted'"'" >&2
exit 65
SH
	chmod +x "$BATS_TEST_TMPDIR/evil"
	printf 'OrderPlaced exec:%s name=evil\n' "$BATS_TEST_TMPDIR/evil" >"$BAKERY_HOME/routes"
	signed ada
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-consume >/dev/null 2>&1
	for page in s/ada/dead "s/ada/orders/$id"; do
		get ada "$page" >/dev/null
		grep -qF '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;' "$RESPONSE"
		run grep -F '<script' "$RESPONSE"
		assert_failure
	done
}

@test "another account's sandbox, order or dead letter is 404, and nothing of it changes" {
	lighttpd_start
	account ada
	account bo
	signin ada >/dev/null
	signin bo >/dev/null
	bakery-fault -s bo set refuses:kitchen
	theirs=$(bakery-order -s bo place --customer bo --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-dlq drain >/dev/null
	dead=$(bakery-dlq -s bo list | jq -r .id)
	[ -n "$dead" ]
	before=$(facts bo)
	token=$(csrf ada)
	for page in s/bo/ s/bo/orders "s/bo/orders/$theirs" s/bo/dead s/bo/faults s/bo/boards s/bo/status "s/ada/orders/$theirs"; do
		assert_equal "$(get ada "$page")" 404
		run grep -e "$theirs" -e "$dead" "$RESPONSE"
		assert_failure
	done
	assert_equal "$(post ada s/bo/faults "csrf=$token")" 404
	assert_equal "$(post ada s/bo/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1")" 404
	assert_equal "$(post ada "s/bo/orders/$theirs/pay" "csrf=$token&card=4242424242424242")" 404
	assert_equal "$(post ada "s/ada/orders/$theirs/pay" "csrf=$token&card=4242424242424242")" 404
	assert_equal "$(post ada s/bo/dead/redrive "csrf=$token&one=$dead")" 404
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token&one=$dead")" 404
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token&id=$dead")" 404
	assert_equal "$(facts bo)" "$before"
	assert_equal "$(bakery-order -s ada list)" ""
}

@test "an operator may look and act in every sandbox" {
	lighttpd_start
	account root-op --operator -s ops
	account bo
	signin root-op >/dev/null
	theirs=$(bakery-order -s bo place --customer bo --day "$DAY" cardamom-bun=1 | jq -r .id)
	assert_equal "$(get root-op "s/bo/orders/$theirs")" 200
	assert_equal "$(get root-op s/bo/status)" 200
	grep -q 'href="/console/s/bo/status"' "$RESPONSE"
	token=$(curl -s -b "$(jar root-op)" "$BASE/console/s/ops/" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	assert_equal "$(post root-op s/bo/faults "csrf=$token&fault=refuses:crm")" 303
	assert_equal "$(bakery-fault -s bo list | jq -r .name)" refuses:crm
}

@test "a bad name in a path is refused as the programs refuse it: 400" {
	signed ada
	for page in s/Ada/orders s/ada/orders/ORD_1 "s/ada/orders/a..b" "s/-x/dead"; do
		assert_equal "$(get ada "$page")" 400
		grep -q 'Bad name: want \[a-z0-9\]' "$RESPONSE"
	done
	assert_equal "$(get ada s/ada/orders/ord_nope)" 404
	assert_equal "$(get ada s/ada/nothing)" 404
	assert_equal "$(get ada s/ada/orders/ord_1/x)" 404
}

@test "a 1 MB form is 413 and changes nothing" {
	signed ada
	token=$(csrf ada)
	head -c 1000000 /dev/zero | tr '\0' a >"$BATS_TEST_TMPDIR/big"
	before=$(facts ada)
	code=$(curl -s -o "$RESPONSE" -w '%{http_code}' -b "$(jar ada)" -H "Origin: $BASE" \
		--data-binary "csrf=$token&fault=refuses:kitchen&pad=@$BATS_TEST_TMPDIR/big" \
		--data-binary "@$BATS_TEST_TMPDIR/big" "$BASE/console/s/ada/faults")
	assert_equal "$code" 413
	assert_equal "$(facts ada)" "$before"
}

@test "a malformed form is 400 and changes nothing" {
	signed ada
	token=$(csrf ada)
	before=$(facts ada)
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=refuses%3kitchen")" 400
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=%00")" 400
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=%C3%28")" 400
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault")" 400
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=refuses:nothing")" 400
	assert_equal "$(post ada s/ada/faults "{\"csrf\":\"$token\"}" -H 'Content-Type: application/json')" 400
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=lots")" 400
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&customer=bo&day=$DAY&qty.cardamom-bun=1")" 400
	assert_equal "$(facts ada)" "$before"
}

@test "another method than GET, HEAD or POST is 405" {
	signed ada
	run curl -s -o /dev/null -w '%{http_code}' -X PUT -b "$(jar ada)" "$BASE/console/s/ada/orders"
	assert_output 405
	run curl -s -o /dev/null -w '%{http_code}' -X DELETE -b "$(jar ada)" "$BASE/console/s/ada/faults"
	assert_output 405
	run curl -s -I -o /dev/null -w '%{http_code}' -b "$(jar ada)" "$BASE/console/s/ada/orders"
	assert_output 200
}

@test "with the queue down, an order is placed, its event waits in its outbox, and the page says so" {
	sqlite_only "the console's queue is made unreachable by URL"
	LIGHTTPD_QUEUE=nats://127.0.0.1:1 signed ada
	token=$(csrf ada)
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	assert_equal "$(header Location)" "/console/s/ada/orders/$id?done=placed-queue-down"
	assert_equal "$(bakery-show -s ada "order/$id" | jq '.outbox | length')" 1
	get ada "s/ada/orders/$id?done=placed-queue-down" >/dev/null
	grep -q 'the queue cannot be reached: its event waits in the order&#39;s outbox' "$RESPONSE"
	grep -q '1 event waiting to be sent' "$RESPONSE"
	assert_equal "$(get ada s/ada/dead)" 200
	grep -q 'The queue cannot be reached' "$RESPONSE"
	# The alarm sends it once the queue is back, as on the shell.
	BAKERY_NOW=$(($(date +%s) + 60)) bakery-relay --due >/dev/null
	assert_equal "$(bakery-show -s ada "order/$id" | jq '.outbox | length')" 0
}

@test "the dead letters page lists what bakery-dlq list lists, newest first" {
	signed ada
	bakery-fault -s ada set refuses:kitchen
	for c in ada bo cy; do
		id=$(bakery-order -s ada place --customer "$c" --day "$DAY" cardamom-bun=1 | jq -r .id)
		bakery-order -s ada pay "$id" >/dev/null
	done
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	# Not drained yet: the page drains them first.
	assert_equal "$(get ada s/ada/dead)" 200
	shown=$(sed -n 's/.*<td class="id">\([^<]*\)<.*/\1/p' "$RESPONSE")
	listed=$(bakery-dlq -s ada list | jq -r .id | tac)
	assert_equal "$(echo "$shown" | wc -l)" 6
	assert_equal "$shown" "$listed"
	assert_equal "$(bakery-queue stats | jq '."bakery-events-dlq".ready')" 0
}

@test "Redrive sends the selected in the order shown, the same ids, and the kitchen gets each card once" {
	signed ada
	bakery-fault -s ada set refuses:kitchen
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=2 | jq -r .id)
	bakery-order -s ada pay "$id" >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	bakery-fault -s ada clear refuses:kitchen
	get ada s/ada/dead >/dev/null
	placed=$(bakery-dlq -s ada list | jq -r 'select(.type == "OrderPlaced").id')
	paid=$(bakery-dlq -s ada list | jq -r 'select(.type == "OrderPaid").id')
	token=$(csrf ada)
	# OrderPaid first: the kitchen has no card, 409, and it comes back.
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token&one=$paid")" 303
	assert_equal "$(header Location)" /console/s/ada/dead?done=redriven
	assert_equal "$(bakery-queue peek | jq -r .id)" "$paid"
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	get ada s/ada/dead >/dev/null
	grep -q 'Kitchen answered 409' "$RESPONSE"
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token&id=$placed&id=$paid")" 303
	assert_equal "$(bakery-dlq -s ada list)" ""
	bakery-consume >/dev/null 2>&1
	assert_equal "$(bakery-show -s ada kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o and .status == "confirmed")] | length')" 1
}

@test "a home paying through Stripe gets no card field, and a posted card is 409" {
	signed ada
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-order gateway stripe >/dev/null
	get ada "s/ada/orders/$id" >/dev/null
	grep -q 'the console takes test-gateway payments only' "$RESPONSE"
	run grep -c 'name="card"' "$RESPONSE"
	assert_output 0
	assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$(csrf ada)&card=4242424242424242")" 409
	run bakery-show -s ada "billing/$id"
	assert_failure 66
}

@test "user add, passwd, del and list; the shapes refused" {
	echo 'a-long-password' | bakery-console user add ada
	run bakery-console user list
	assert_success
	assert_equal "$(echo "$output" | jq -c '{name, sandbox, operator, sessions}')" \
		'{"name":"ada","sandbox":"ada","operator":false,"sessions":0}'
	run bakery-console user add ada <<<'a-long-password'
	assert_failure 73
	run bakery-console user add bo <<<'short'
	assert_failure 65
	run bakery-console user add 'Bad Name' <<<'a-long-password'
	assert_failure 64
	run bakery-console user add bo -s '../x' <<<'a-long-password'
	assert_failure 64
	run bakery-console user passwd nobody <<<'a-long-password'
	assert_failure 66
	run bakery-console user del nobody
	assert_failure 66
	run bakery-console user passwd ada --operator <<<'a-long-password'
	assert_failure 64
	run bakery-console user del ada
	assert_success
	assert_equal "$(bakery-console user list)" ""
	run bakery-console
	assert_failure 64
}

@test "sign-in tries sent at once are slowed as tries in a row: at most 5 of 20 reach the password" {
	lighttpd_start
	account ada
	pids=()
	for i in $(seq 20); do
		curl -s -o /dev/null -w '%{http_code}\n' -H "Origin: $BASE" \
			--data "name=ada&password=wrong-$i-password" "$BASE/console/signin" \
			>"$BATS_TEST_TMPDIR/try.$i" &
		pids+=($!)
	done
	wait "${pids[@]}" # not lighttpd
	codes=$(cat "$BATS_TEST_TMPDIR"/try.* | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' ')
	assert_equal "$(cat "$BATS_TEST_TMPDIR"/try.* | grep -c 403)" 5 "$codes"
	assert_equal "$(cat "$BATS_TEST_TMPDIR"/try.* | grep -c 429)" 15 "$codes"
	assert_equal "$(signin ada)" 429
}

@test "the throttle tells nobody which names exist, and keeps no name typed" {
	# The console's clock stands still: the 60 s window must not let the
	# first failures go on a machine that takes longer for all of them.
	now=$(date +%s)
	LIGHTTPD_NOW=$now lighttpd_start
	account ada
	for _ in 1 2 3 4 5; do
		assert_equal "$(signin ada wrong-password-1)" 403
		assert_equal "$(signin nobody wrong-password-1)" 403
	done
	# A known and an unknown name are slowed alike, each alone.
	assert_equal "$(signin ada wrong-password-1)" 429
	assert_equal "$(signin nobody wrong-password-1)" 429
	assert_equal "$(signin nobody-else wrong-password-1)" 403
	account bo
	assert_equal "$(signin bo)" 303
	# What the file counts under is a keyed hash, not the name typed.
	run sqlite3 "$BAKERY_HOME/console.db" 'SELECT DISTINCT name FROM signin_failures'
	assert_success
	assert_equal "$(echo "$output" | wc -l)" 3
	# (Whole lines: a hash in hex may hold "ada" by chance.)
	refute_line ada
	refute_line nobody
	assert_equal "$(echo "$output" | grep -cvE '^[0-9a-f]{64}$')" 0
	# Counted at the clock the console was given.
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT DISTINCT at FROM signin_failures')" "${now}000"
	# A right password afterwards leaves no failure of its own.
	before=$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM signin_failures')
	account cy
	assert_equal "$(signin cy)" 303
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM signin_failures')" "$before"
}

@test "a Host that is not the loopback's is 400 unless BAKERY_CONSOLE_ORIGIN names it (DNS rebinding)" {
	lighttpd_start
	account ada
	port=${BASE##*:}
	for host in "evil.example:$port" evil.example "127.0.0.1.evil.example:$port"; do
		assert_equal "$host $(curl -s -o "$RESPONSE" -w '%{http_code}' -H "Host: $host" \
			"$BASE/console/signin")" "$host 400"
		assert_equal "$host $(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" \
			-H "Origin: http://$host" --data "name=ada&password=$PASSWORD" \
			"$BASE/console/signin")" "$host 400"
	done
	grep -q 'names a host this console does not serve' "$RESPONSE"
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM sessions')" 0
	for host in "localhost:$port" "127.0.0.1:$port" "[::1]:$port" localhost; do
		assert_equal "$host $(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" \
			"$BASE/console/signin")" "$host 200"
	done
	# Shapes a server may pass on as they came.
	for host in "localhost:$port.evil" "localhost:" "localhost:$port:1" "localhost.:$port" ""; do
		run --separate-stderr env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET \
			PATH_INFO=/signin HTTP_HOST="$host" bakery-console
		assert_equal "$host ${lines[0]}" "$host "$'Status: 400 Bad Request\r'
	done
	lighttpd_stop
	LIGHTTPD_ORIGIN=http://bakery.example lighttpd_start
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: bakery.example" "$BASE/console/signin")
	assert_equal "$code" 200
}

@test "a BAKERY_CONSOLE_ORIGIN of another form is 400 on every request" {
	for origin in http:// https:// ftp://x http://x/ 'http://x y' http; do
		run --separate-stderr env BAKERY_CONSOLE_ORIGIN="$origin" GATEWAY_INTERFACE=CGI/1.1 \
			REQUEST_METHOD=GET PATH_INFO=/signin HTTP_HOST=127.0.0.1 bakery-console
		assert_line --index 0 $'Status: 400 Bad Request\r'
	done
	run --separate-stderr env BAKERY_CONSOLE_ORIGIN=https://bakery.example GATEWAY_INTERFACE=CGI/1.1 \
		REQUEST_METHOD=GET PATH_INFO=/signin HTTP_HOST=127.0.0.1 bakery-console
	assert_line --index 0 $'Status: 200 OK\r'
}

# shellcheck disable=SC2154 # $stderr: set by bats's run --separate-stderr
@test "a BAKERY_QUEUE that names no queue of its own is 503 on every request, nothing written" {
	for url in "sqlite:queue.db" "sqlite::memory:" "nats:/127.0.0.1:1" "sqlite:$BAKERY_HOME/q.db?mode=memory"; do
		run --separate-stderr env BAKERY_QUEUE="$url" GATEWAY_INTERFACE=CGI/1.1 \
			REQUEST_METHOD=GET PATH_INFO=/signin HTTP_HOST=127.0.0.1 bakery-console
		assert_equal "$url ${lines[0]}" "$url "$'Status: 503 Service Unavailable\r'
		[[ "$stderr" == *"bad queue URL"* ]] || fail "$url: $stderr"
	done
	[ ! -e "$BAKERY_HOME/console.db" ]
	[ ! -e "$BAKERY_HOME/queue.db" ]
}

@test "under a web server no argument is read: a query passed as operands changes nothing" {
	run --separate-stderr env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET QUERY_STRING=user+add+eve \
		bakery-console user add eve <<<'a-long-password'
	assert_failure 64
	assert_line --index 0 $'Status: 400 Bad Request\r'
	assert_equal "$(bakery-console user list)" ""
	mkdir "$BATS_TEST_TMPDIR/other"
	run --separate-stderr env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET PATH_INFO=/signin \
		HTTP_HOST=127.0.0.1 bakery-console --home "$BATS_TEST_TMPDIR/other"
	assert_failure 64
	assert_line --index 0 $'Status: 400 Bad Request\r'
}

@test "an account whose sandbox in console.db is not a name never reaches a Location" {
	signed ada
	sqlite3 "$BAKERY_HOME/console.db" "UPDATE accounts SET sandbox = 'x'||char(13,10)||'Set-Cookie: a=b' WHERE name = 'ada'"
	assert_equal "$(get ada '')" 503
	run grep -ci 'set-cookie: a=b' "$BATS_TEST_TMPDIR/headers"
	assert_output 0
	assert_equal "$(signin ada)" 503
	assert_equal "$(header Location)" ""
	grep -q "has a bad" "$LIGHTTPD_DIR/stderr"
}

@test "a dead letter named twice in one redrive is 400 and nothing is sent" {
	signed ada
	bakery-fault -s ada set refuses:kitchen
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	get ada s/ada/dead >/dev/null
	placed=$(bakery-dlq -s ada list | jq -r 'select(.type == "OrderPlaced").id')
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$(csrf ada)&id=$placed&id=$placed")" 400
	grep -q 'named twice' "$RESPONSE"
	assert_equal "$(bakery-queue peek)" ""
	assert_equal "$(bakery-dlq -s ada list | jq -r .id)" "$placed"
	[ -n "$id" ]
}

@test "the orders page shows an order whose file cannot be read as a row saying so, and the others" {
	signed ada
	a=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	b=$(bakery-order -s ada place --customer ada --day "$DAY" country-loaf=1 | jq -r .id)
	f=$BAKERY_HOME/sandboxes/ada/order/$b.db
	rm -f "$f-wal" "$f-shm"
	head -c 4096 /dev/urandom >"$f"
	assert_equal "$(get ada s/ada/orders)" 200
	grep -q "<td>$b</td><td colspan=\"5\" class=\"dead\">This order.s file could not be read" "$RESPONSE"
	grep -q "href=\"/console/s/ada/orders/$a\"" "$RESPONSE"
	run grep -c "$BAKERY_HOME" "$RESPONSE"
	assert_output 0
	# The server's log names the file and says why.
	grep -q "console_unread file=$f error=\".*file is not a database" "$LIGHTTPD_DIR/stderr"
}

@test "console.db locked past the busy timeout at sign-in is 503 busy with Retry-After, and no failed sign-in is counted" {
	LIGHTTPD_BUSY_MS=200 lighttpd_start
	account ada
	hold_lock "$BAKERY_HOME/console.db"
	for _ in 1 2 3 4 5 6; do
		assert_equal "$(signin ada)" 503
		assert_equal "$(header Retry-After)" 5
		assert_equal "$(header Set-Cookie)" ""
	done
	grep -q 'bakery is busy' "$RESPONSE"
	release_lock
	run grep -c signin_throttled "$LIGHTTPD_DIR/stderr"
	assert_output 0
	assert_equal "$(sqlite3 "$BAKERY_HOME/console.db" 'SELECT count(*) FROM signin_failures')" 0
	assert_equal "$(signin ada)" 303
	# Signing out waits as long, and answers the same.
	token=$(csrf ada)
	hold_lock "$BAKERY_HOME/console.db"
	assert_equal "$(post ada signout "csrf=$token")" 503
	assert_equal "$(header Retry-After)" 5
	release_lock
	assert_equal "$(post ada signout "csrf=$token")" 303
}

@test "a corrupt console.db is 503 to a visitor, the server's path in its log only" {
	lighttpd_start
	account ada
	signin ada >/dev/null
	rm -f "$BAKERY_HOME"/console.db*
	head -c 8192 /dev/zero | tr '\0' x >"$BAKERY_HOME/console.db"
	# With a cookie, on any page, or signing in: 503.
	assert_equal "$(get ada s/ada/orders)" 503
	run grep -e "$BAKERY_HOME" -e console.db -e 'not a database' "$RESPONSE"
	assert_failure
	assert_equal "$(signin ada)" 503
	grep -q 'the failure is in the server' "$RESPONSE"
	run grep -e "$BAKERY_HOME" -e console.db -e 'not a database' "$RESPONSE"
	assert_failure
	grep -q "console_failed doing=\"signing in\" error=\"cannot open .$BAKERY_HOME/console.db.: file is not a database" "$LIGHTTPD_DIR/stderr"
	grep -q "console_failed doing=\"reading the session\" error=\"cannot open .$BAKERY_HOME/console.db" "$LIGHTTPD_DIR/stderr"
}

@test "who signed in, placed, paid, set or cleared a fault and redrove is in the server's log, with the account" {
	signed ada
	grep -q 'bakery-console: warning: signed_in account=ada sandbox=ada operator=no' "$LIGHTTPD_DIR/stderr"
	bakery-order gateway test >/dev/null
	token=$(csrf ada)
	assert_equal "$(post ada s/ada/faults "csrf=$token&fault=refuses:kitchen")" 303
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1")" 303
	id=$(bakery-order -s ada list | jq -r .id)
	assert_equal "$(post ada "s/ada/orders/$id/pay" "csrf=$token&card=4242424242424242")" 303
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	assert_equal "$(post ada s/ada/faults "csrf=$token")" 303
	get ada s/ada/dead >/dev/null
	placed=$(bakery-dlq -s ada list | jq -r 'select(.type == "OrderPlaced").id')
	assert_equal "$(post ada s/ada/dead/redrive "csrf=$token&one=$placed")" 303
	assert_equal "$(post ada signout "csrf=$token")" 303
	log=$LIGHTTPD_DIR/stderr
	grep -q 'bakery-console: warning: fault_set account=ada sandbox=ada fault=refuses:kitchen$' "$log"
	grep -q "bakery-console: warning: order_placed account=ada sandbox=ada order=$id\$" "$log"
	grep -q "bakery-console: warning: order_paid account=ada sandbox=ada order=$id\$" "$log"
	grep -q 'bakery-console: warning: fault_cleared account=ada sandbox=ada fault=refuses:kitchen$' "$log"
	grep -q "bakery-console: warning: redriven account=ada sandbox=ada id=$placed type=OrderPlaced\$" "$log"
	grep -q 'bakery-console: warning: signed_out account=ada$' "$log"
}

@test "a 405 names in Allow the methods its path takes; another method on no page is 404" {
	signed ada
	allow() {
		curl -s -D "$BATS_TEST_TMPDIR/headers" -o /dev/null -w '%{http_code}' \
			-b "$(jar ada)" -H "Origin: $BASE" "$@"
	}
	assert_equal "$(allow -X PUT "$BASE/console/s/ada/orders")" 405
	assert_equal "$(header Allow)" "GET, HEAD, POST"
	assert_equal "$(allow -X DELETE "$BASE/console/s/ada/status")" 405
	assert_equal "$(header Allow)" "GET, HEAD"
	assert_equal "$(allow --data "csrf=x" "$BASE/console/s/ada/status")" 405
	assert_equal "$(header Allow)" "GET, HEAD"
	assert_equal "$(allow "$BASE/console/signout")" 405
	assert_equal "$(header Allow)" POST
	assert_equal "$(allow "$BASE/console/s/ada/dead/redrive")" 405
	assert_equal "$(header Allow)" POST
	assert_equal "$(allow -X PUT "$BASE/console/s/ada/nothing")" 404
	assert_equal "$(header Allow)" ""
}

@test "the dead letters' Subscriber is who refused, not whom its error text names" {
	cat >"$BATS_TEST_TMPDIR/ext" <<'SH'
#!/bin/sh
echo 'upstream down; Kitchen answered 503' >&2
exit 75
SH
	chmod +x "$BATS_TEST_TMPDIR/ext"
	{ cat "$TOP/share/routes"
	  printf 'OrderPlaced exec:%s name=ext\n' "$BATS_TEST_TMPDIR/ext"; } >"$BAKERY_HOME/routes"
	signed ada
	id=$(bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 | jq -r .id)
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	# The kitchen applied it: its card is there.
	assert_equal "$(bakery-show -s ada kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | length')" 1
	assert_equal "$(get ada s/ada/dead)" 200
	row=$(grep '<td class="type">OrderPlaced' "$RESPONSE")
	[[ $row == *'</td><td>Ext</td><td class="error">Ext answered 503: exit 75: upstream down, Kitchen answered 503</td>'* ]] ||
		fail "row: $row"
	# Two that refused are both named.
	bakery-fault -s ada set refuses:kitchen
	bakery-order -s ada place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	get ada s/ada/dead >/dev/null
	grep -q '<td>Kitchen, Ext</td>' "$RESPONSE"
}

@test "a dead letter whose id is not a name is redriven by the page, alone or selected with others" {
	account ops --sandbox default
	lighttpd_start
	assert_equal "$(signin ops)" 303
	bakery-fault set refuses:kitchen
	body=$(jq -nc --arg day "$DAY" '{specversion: "1.0", id: "Evt 1/x", type: "OrderPlaced",
		source: "bakery:default/order/ord_1", subject: "order/ord_1",
		time: "2026-12-01T09:00:00.000Z", datacontenttype: "application/json",
		sandbox: "default", data: {customer: "ada", day: $day, delivery: null,
		items: [{item: "cardamom-bun", qty: 1, price_cents: 450}],
		total_cents: 450, currency: "eur", placed_at: "2026-12-01T09:00:00.000Z",
		order: "ord_1"}}')
	queue_raw 'Evt 1/x' "$body"
	place ada >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	assert_equal "$(get ops s/default/dead)" 200
	grep -q 'value="Evt 1/x"' "$RESPONSE"
	other=$(bakery-dlq list | jq -r 'select(.id != "Evt 1/x" and .type == "OrderPlaced").id')
	[ -n "$other" ]
	token=$(curl -s -b "$(jar ops)" "$BASE/console/s/default/" |
		sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	assert_equal "$(post ops s/default/dead/redrive "csrf=$token&id=Evt+1%2Fx&id=$other")" 303
	assert_equal "$(header Location)" /console/s/default/dead?done=redriven
	assert_equal "$(bakery-dlq list | jq -r 'select(.type == "OrderPlaced").id')" ""
	assert_equal "$(queue_ids | sort)" "$(printf '%s\n' "Evt 1/x" "$other" | sort)"
	grep -q 'redriven account=ops sandbox=default id="Evt 1/x"' "$LIGHTTPD_DIR/stderr"
	# Alone, by its row's own button, once it is dead again.
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	get ops s/default/dead >/dev/null
	assert_equal "$(post ops s/default/dead/redrive "csrf=$token&one=Evt+1%2Fx")" 303
	assert_equal "$(header Location)" /console/s/default/dead?done=redriven
	assert_equal "$(bakery-dlq list | jq -r 'select(.id == "Evt 1/x").id')" ""
}

@test "a signed-in account's status counts its sandbox's messages not yet drained and shows its faults" {
	signed ada
	account bo
	bakery-fault -s ada set refuses:kitchen
	bakery-order -s ada place --customer ada --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-order -s ada place --customer bo --day "$DAY" cardamom-bun=1 >/dev/null
	bakery-consume --max-retries 0 >/dev/null 2>&1
	bakery-status | grep -q '2 messages not yet drained'
	assert_equal "$(get ada s/ada/status)" 200
	run grep -c 'Nothing needs attention' "$RESPONSE"
	assert_output 0
	grep -qF '<li>sandbox ada: 2 messages in bakery-events-dlq not yet drained (bakery-dlq -s ada drain)</li>' "$RESPONSE"
	grep -q '<tr><td>2</td><td>messages in the dead-letter queue, not yet drained</td></tr>' "$RESPONSE"
	grep -q '<li>refuses:kitchen, since ' "$RESPONSE"
	# Another account's sandbox holds none of them, and no fault.
	assert_equal "$(signin bo)" 303
	assert_equal "$(get bo s/bo/status)" 200
	grep -q 'Nothing needs attention' "$RESPONSE"
	grep -q 'No fault set' "$RESPONSE"
	grep -q '<tr><td>0</td><td>messages in the dead-letter queue, not yet drained</td></tr>' "$RESPONSE"
}

@test "a delivery address with a bidi control is refused by the console's form as by bakery-order" {
	signed ada
	token=$(csrf ada)
	for c in %E2%80%AA %E2%80%AE %E2%81%A6 %E2%81%A9; do
		assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1&delivery=Main+St+1${c}evil")" 422
		grep -q 'bad delivery address' "$RESPONSE"
	done
	assert_equal "$(bakery-order -s ada list)" ""
	# The marks that only set a direction (U+200E) are not controls of that kind.
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=$DAY&qty.cardamom-bun=1&delivery=Main+St+1%E2%80%8E")" 303
}

@test "a selected dead letter that cannot be redriven is said so, and the others are sent" {
	account ops --sandbox default
	lighttpd_start
	assert_equal "$(signin ops)" 303
	bakery-fault set refuses:kitchen
	queue_raw evt_bad '{"id":"evt_bad","type":"OrderPlaced","sandbox":"default"}'
	queue_raw evt_bad2 '{"id":"evt_bad2","type":"OrderPlaced","sandbox":"default"}'
	place ada >/dev/null
	bakery-consume --retry-delay 0 >/dev/null 2>&1
	assert_equal "$(get ops s/default/dead)" 200
	good=$(bakery-dlq list | jq -r 'select((.id | startswith("evt_bad") | not) and .type == "OrderPlaced").id')
	[ -n "$good" ]
	token=$(curl -s -b "$(jar ops)" "$BASE/console/s/default/" |
		sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	assert_equal "$(post ops s/default/dead/redrive "csrf=$token&id=evt_bad&id=$good")" 303
	assert_equal "$(header Location)" /console/s/default/dead?done=partial
	assert_equal "$(queue_ids)" "$good"
	assert_equal "$(bakery-dlq list | jq -r 'select(.type == "OrderPlaced").id' | sort)" "$(printf 'evt_bad\nevt_bad2')"
	grep -q "console_failed doing=redriving error=\"cannot redrive 'evt_bad': " "$LIGHTTPD_DIR/stderr"
	# Alone, it is refused with its reason, as bakery-redrive refuses it.
	assert_equal "$(post ops s/default/dead/redrive "csrf=$token&one=evt_bad")" 422
	grep -q "cannot redrive &#39;evt_bad&#39;: missing &#39;specversion&#39;" "$RESPONSE"
	refuses 65 "cannot redrive 'evt_bad'" bakery-redrive evt_bad
	# Selected with none that can go: the page says none went.
	assert_equal "$(post ops s/default/dead/redrive "csrf=$token&id=evt_bad&id=evt_bad2")" 303
	assert_equal "$(header Location)" /console/s/default/dead?done=refused
	get ops "s/default/dead?done=refused" >/dev/null
	grep -q 'None could be sent' "$RESPONSE"
	assert_equal "$(queue_ids)" "$good"
}

@test "a corrupt file of a sandbox is 503 to its account, the server's path in its log only" {
	signed ada
	bakery-fault -s ada set refuses:kitchen
	rm -f "$BAKERY_HOME"/sandboxes/ada/sandbox.db*
	head -c 8192 /dev/zero | tr '\0' x >"$BAKERY_HOME/sandboxes/ada/sandbox.db"
	for page in s/ada/faults s/ada/dead; do
		assert_equal "$(get ada "$page")" 503
		run grep -e "$BAKERY_HOME" -e sandbox.db -e 'not a database' "$RESPONSE"
		assert_failure
	done
	grep -q "console_failed doing=\"reading faults\" error=\"cannot open .$BAKERY_HOME/sandboxes/ada/sandbox.db.: file is not a database" "$LIGHTTPD_DIR/stderr"
	# What was asked wrong is still said: 422 with its reason.
	token=$(csrf ada)
	assert_equal "$(post ada s/ada/orders "csrf=$token&customer=ada&day=2026-13-01&qty.cardamom-bun=1")" 422
	grep -q 'bad day' "$RESPONSE"
}
