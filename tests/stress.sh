#!/bin/bash
# stress.sh — many processes on one object: 16 writers and 4 consumers on
# one queue for SECONDS (default 60). Each writer, in a loop, places the
# same keyed order (one object, order/ord_…, all 16 at once), then an order
# of its own for the same day, and pays it; the consumers apply everything
# to the same kitchen/board, schedule/DAY, dispatch/DAY and crm/customers.
# No SQLITE_BUSY may reach a user (every command exits 0, no "locked" or
# "busy" on stderr); the checker must be clean; the latency of each writer
# command (its wait for the lock included) is summarised.
#
#   tests/stress.sh [SECONDS]      (make stress STRESS_TIME=S)
set -u
SECONDS_TO_RUN=${1:-60}
WRITERS=${STRESS_WRITERS:-16}
CONSUMERS=${STRESS_CONSUMERS:-4}
TOP="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$TOP/bin:$PATH" BAKERY_MENU="$TOP/share/menu.tsv"
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_CRASH_AT BAKERY_LOG BAKERY_SYNC BAKERY_NOW
W=$(mktemp -d "${TMPDIR:-/tmp}/stress.XXXXXX")
export BAKERY_HOME="$W/home"
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
DAY=2026-12-01

ms() { echo $(( $(date +%s%N) / 1000000 )); }

writer() {
	local k=$1 end=$2 t0 rc id out
	while [ "$(date +%s)" -lt "$end" ]; do
		t0=$(ms)
		bakery-order place --key hot --customer hot --day "$DAY" cardamom-bun=1 >/dev/null 2>>"$W/err.$k"
		rc=$?
		echo "$(( $(ms) - t0 )) $rc place-hot" >>"$W/lat.$k"
		t0=$(ms)
		out=$(bakery-order place --customer "c$k" --day "$DAY" --delivery "$k Lane" cardamom-bun=1 2>>"$W/err.$k")
		rc=$?
		echo "$(( $(ms) - t0 )) $rc place" >>"$W/lat.$k"
		id=$(echo "$out" | jq -r '.id // empty')
		[ -n "$id" ] || continue
		echo "$id" >>"$W/placed"
		t0=$(ms)
		bakery-order pay "$id" >/dev/null 2>>"$W/err.$k"
		rc=$?
		echo "$(( $(ms) - t0 )) $rc pay" >>"$W/lat.$k"
		[ "$rc" = 0 ] && echo "$id" >>"$W/paid"
	done
}

mkdir -p "$BAKERY_HOME"
bakery-order gateway test >/dev/null # no money moves
: >"$W/placed"; : >"$W/paid"
cpids=()
for ((c = 1; c <= CONSUMERS; c++)); do
	bakery-consume --follow >"$W/out.consume$c" 2>"$W/err.consume$c" &
	cpids+=($!)
done
end=$(( $(date +%s) + SECONDS_TO_RUN ))
wpids=()
for ((k = 1; k <= WRITERS; k++)); do
	writer "$k" "$end" &
	wpids+=($!)
done
for p in "${wpids[@]}"; do wait "$p"; done
for _ in $(seq 300); do
	[ "$(bakery-queue stats | jq '."bakery-events" | .ready + .leased + .delayed')" = 0 ] && break
	sleep 0.2
done
kill -TERM "${cpids[@]}"
for p in "${cpids[@]}"; do wait "$p"; done
bakery-relay --all >/dev/null
bakery-consume >>"$W/out.final"

args=()
for f in "$W"/out.*; do args+=(--deliveries "$f"); done
result=$("$TOP/build/tests/checker" -v --drained --placed "$W/placed" --paid "$W/paid" \
	"${args[@]}" "$BAKERY_HOME" 2>"$W/check.err")
rc=$?
cat "$W"/lat.* | sort -n >"$W/lat"
n=$(wc -l <"$W/lat")
failed=$(awk '$2 != 0' "$W/lat" | wc -l)
busy=$(cat "$W"/err.* | grep -ci 'locked\|busy' || true)
errors=$(cat "$W"/err.* | grep -c 'error' || true)
pct() { sed -n "$(( (n * $1 + 99) / 100 ))p" "$W/lat" | cut -d' ' -f1; }
echo "stress: checker: $result"
[ "$rc" = 0 ] || head -20 "$W/check.err"
[ "$errors" = 0 ] || { echo "stress: errors:"; cat "$W"/err.* | grep error | sort | uniq -c | head; }
echo "stress: $WRITERS writers, $CONSUMERS consumers, $SECONDS_TO_RUN s: $n commands ($(wc -l <"$W/paid") orders paid), $failed failed, $busy busy errors; latency p50 $(pct 50) ms, p99 $(pct 99) ms, max $(tail -1 "$W/lat" | cut -d' ' -f1) ms"
[ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "$busy" = 0 ] && [ "$errors" = 0 ] && [ "$n" -gt 0 ]
