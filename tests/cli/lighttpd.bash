# lighttpd_start: lighttpd with the shipped configuration
# (share/lighttpd/bakery-webhook.conf), pointed at this test's home,
# queue, programs and webhook secret, on a free loopback port. BASE is
# http://127.0.0.1:PORT, URL the webhook's endpoint, LIGHTTPD_DIR its
# folder (stderr: the programs' logs), RESPONSE a file for an answer's
# body. LIGHTTPD_QUEUE (default:
# BAKERY_QUEUE), LIGHTTPD_ORIGIN (BAKERY_CONSOLE_ORIGIN), LIGHTTPD_NOW
# (the console's BAKERY_NOW) and LIGHTTPD_BUSY_MS (the console's
# BAKERY_BUSY_TIMEOUT_MS), OTEL_EXPORTER_OTLP_ENDPOINT and BAKERY_TRACE_URL
# are handed to the programs. lighttpd keeps
# the test's user: the machine that runs the tests has no user bakery for
# server.username to drop to. The test's teardown ends it (lighttpd_stop).
# Outside bats (tests/failover.sh), LIGHTTPD_TMP is the folder for www/
# and the response (default: BATS_TEST_TMPDIR) and TOP the repository.
lighttpd_start() {
	local tmp=${LIGHTTPD_TMP:-$BATS_TEST_TMPDIR}
	local dir=$tmp/www port url=${BAKERY_TRACE_URL:-}
	# BAKERY_TRACE_URL as a string of lighttpd's, then for sed.
	url=${url//\\/\\\\} url=${url//\"/\\\"}
	url=${url//\\/\\\\} url=${url//&/\\&} url=${url//|/\\|}
	# shellcheck disable=SC2034 # read by the test files
	LIGHTTPD_DIR=$dir RESPONSE=$tmp/response
	mkdir -p "$dir/root"
	printf '%s\n' "${SECRET:-whsec_unused}" >"$dir/secret"
	for _ in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		sed -e "s|^var.bakery_port .*|var.bakery_port = $port|" \
			-e "s|^var.bakery_home .*|var.bakery_home = \"$BAKERY_HOME\"|" \
			-e "s|^var.bakery_webhook .*|var.bakery_webhook = \"$TOP/bin/bakery-webhook\"|" \
			-e "s|^var.bakery_console .*|var.bakery_console = \"$TOP/bin/bakery-console\"|" \
			-e "s|^var.bakery_secret_file .*|var.bakery_secret_file = \"$dir/secret\"|" \
			-e "s|^server.document-root .*|server.document-root = \"$dir/root\"|" \
			-e "s|^var.bakery_queue .*|var.bakery_queue = \"${LIGHTTPD_QUEUE-${BAKERY_QUEUE:-}}\"|" \
			-e "s|^var.bakery_origin .*|var.bakery_origin = \"${LIGHTTPD_ORIGIN:-}\"|" \
			-e "s|^var.bakery_otlp .*|var.bakery_otlp = \"${OTEL_EXPORTER_OTLP_ENDPOINT:-}\"|" \
			-e "s|^var.bakery_otlp_headers .*|var.bakery_otlp_headers = \"\"|" \
			-e "s|^var.bakery_trace_url .*|var.bakery_trace_url = \"$url\"|" \
			-e "/^server.username /d" \
			-e '/^server.groupname /d' \
			"$TOP/share/lighttpd/bakery-webhook.conf" >"$dir/lighttpd.conf"
		# LIGHTTPD_NOW pins the console's clock (BAKERY_NOW), for a
		# test whose counts must not age on a slow machine.
		[ -z "${LIGHTTPD_NOW:-}" ] ||
			sed -i "s|^\(\t*\)\"BAKERY_CONSOLE_ORIGIN\" => bakery_origin,|&\n\1\"BAKERY_NOW\" => \"$LIGHTTPD_NOW\",|" \
				"$dir/lighttpd.conf"
		# LIGHTTPD_BUSY_MS: how long the console waits for a lock,
		# for a test that holds one.
		[ -z "${LIGHTTPD_BUSY_MS:-}" ] ||
			sed -i "s|^\(\t*\)\"BAKERY_CONSOLE_ORIGIN\" => bakery_origin,|&\n\1\"BAKERY_BUSY_TIMEOUT_MS\" => \"$LIGHTTPD_BUSY_MS\",|" \
				"$dir/lighttpd.conf"
		lighttpd -D -f "$dir/lighttpd.conf" 2>>"$dir/stderr" 3>&- &
		LIGHTTPD_PID=$!
		BASE=http://127.0.0.1:$port
		URL=$BASE/stripe/webhook
		for _ in $(seq 50); do
			kill -0 "$LIGHTTPD_PID" 2>/dev/null || break
			curl -s -o /dev/null "$URL" && return 0
			sleep 0.1
		done
		kill "$LIGHTTPD_PID" 2>/dev/null || true
	done
	echo "lighttpd did not start: $(cat "$dir/stderr" "$dir/error.log" 2>/dev/null)" >&2
	return 1
}

lighttpd_stop() {
	[ -z "${LIGHTTPD_PID:-}" ] || kill "$LIGHTTPD_PID" 2>/dev/null || true
}
