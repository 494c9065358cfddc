#!/bin/sh
# The bakery scenario, narrated: every step prints the command it runs.
# Runs in a fresh temporary home, with its log of deliveries beside it
# (a home holds only what bakery makes); `make demo` builds first.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
PATH="$top/bin:$PATH"
BAKERY_MENU="$top/share/menu.tsv"
demo=$(mktemp -d "${TMPDIR:-/tmp}/bakery-demo.XXXXXX")
BAKERY_HOME=$demo/home
export PATH BAKERY_MENU BAKERY_HOME
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_NOW BAKERY_CRASH_AT BAKERY_LOG || true
log=$demo/deliveries.jsonl
: >"$log"
day=2026-12-01

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	bold=$(printf '\033[1m') dim=$(printf '\033[2m') off=$(printf '\033[0m')
else
	bold='' dim='' off=''
fi
# jq 1.6 colours a terminal and knows nothing of NO_COLOR: -M says it.
if [ -n "${NO_COLOR:-}" ]; then
	jq() { command jq -M "$@"; }
fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$off"; }
say() { printf '%s\n' "$*"; }
# run CMD...: shows the command, then runs it.
run() { printf '%s$ %s%s\n' "$dim" "$*" "$off" >&2; "$@"; }
# consume [ARGS]: runs bakery-consume, keeps its lines for the summary.
consume() {
	printf '%s$ bakery-consume%s%s\n' "$dim" "${*:+ $*}" "$off"
	bakery-consume "$@" | tee -a "$log" |
		jq -r '"  \(.type) delivery \(.delivery): \(.status) \(.outcome)\(if .error then " (" + .error + ")" else "" end)"'
}
fail() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }
card_of() { bakery-show kitchen/board | jq -c --arg o "$1" '[.state.cards[] | select(.order == $o)]'; }
tickets_of() { bakery-show kitchen/board | jq --arg o "$1" '[.state.tickets[] | select(.order == $o)] | length'; }

say "bakery demo — home: $BAKERY_HOME"

step "0. This home pays through the built-in test gateway: no money moves"
run bakery-order gateway test | jq -c .

step "1. Two cardamom buns and a country loaf for delivery, paid by test card"
o1=$(run bakery-order place --customer ada --day $day --delivery "1 Mill Lane" \
	cardamom-bun=2 country-loaf=1 | jq -r .id)
say "  order $o1 placed"
run bakery-order pay "$o1" | jq -c .
consume
say "  board:       $(card_of "$o1")"
say "  tickets:     $(tickets_of "$o1")"
say "  receipts:    $(bakery-show inbox/ada | jq -c '[.state.receipts[].order]')"
say "  reservation: $(bakery-show schedule/$day | jq -c '[.state.reservations[].order]')"
say "  dispatch:    $(bakery-show dispatch/$day | jq -c '.state.stops')"
[ "$(tickets_of "$o1")" = 1 ] || fail "step 1: want one oven ticket"

step "2. The kitchen refuses; another order is paid"
run bakery-fault set refuses:kitchen
o2=$(run bakery-order place --customer bo --day $day cinnamon-roll=3 | jq -r .id)
run bakery-order pay "$o2" | jq -c .
say "  (retries at once for the demo; by default they wait 5 s, 30 s, 2 min)"
consume --retry-delay 0
say "  order status: $(bakery-order show "$o2" | jq -r .status)"
run bakery-dlq drain | jq -r '"  dead letter \(.type): \(.error) after \(.attempts) deliveries"'
say "  receipts for bo: $(bakery-show inbox/bo | jq '.state.receipts | length')," \
	"reservations: $(bakery-show schedule/$day | jq --arg o "$o2" '[.state.reservations[] | select(.order == $o)] | length')"
[ "$(bakery-dlq list | jq -s length)" = 2 ] || fail "step 2: want two dead letters"

step "3. The fault is cleared; OrderPaid redriven first: the kitchen has no card yet"
run bakery-fault clear refuses:kitchen
paid=$(bakery-dlq list | jq -r 'select(.type == "OrderPaid") | .id')
placed=$(bakery-dlq list | jq -r 'select(.type == "OrderPlaced") | .id')
run bakery-redrive "$paid" | jq -c .
consume --retry-delay 0
run bakery-dlq drain | jq -r '"  dead letter \(.type) again: \(.error)"'

step "4. OrderPlaced redriven, then OrderPaid"
run bakery-redrive "$placed" | jq -c .
consume
run bakery-redrive "$paid" | jq -c .
consume
say "  board:        $(card_of "$o2")"
say "  tickets:      $(tickets_of "$o2")"
say "  dead letters: $(bakery-dlq list | jq -s length)"
[ "$(tickets_of "$o2")" = 1 ] || fail "step 4: want one oven ticket"
[ "$(bakery-dlq list | jq -s length)" = 0 ] || fail "step 4: want no dead letters"

step "5. The queue lab: three consumers, one killed between applying and acknowledging"
for c in cy di ed; do
	o=$(bakery-order place --customer $c --day $day almond-croissant=2 | jq -r .id)
	bakery-order pay "$o" >/dev/null
	o3=${o3:-$o}
done
say "  three more orders placed and paid"
# The first consumer runs alone, so it is the one holding a batch when it is
# killed; the other two then run side by side on what is left.
printf '%s$ BAKERY_CRASH_AT=consume.before_ack bakery-consume --batch 2 --visibility 1%s\n' "$dim" "$off"
BAKERY_CRASH_AT=consume.before_ack bakery-consume --batch 2 --visibility 1 >>"$log" 2>/dev/null ||
	say "  consumer 1 killed (exit $?) after applying, before acknowledging"
printf '%s$ bakery-consume --batch 2 --visibility 1 & bakery-consume --batch 2 --visibility 1 &%s\n' "$dim" "$off"
bakery-consume --batch 2 --visibility 1 >>"$log" &
a=$!
bakery-consume --batch 2 --visibility 1 >>"$log" &
b=$!
wait $a $b || true
say "  queue: $(bakery-queue stats | jq -c '."bakery-events"')"
sleep 1.1
say "  the lease expired; the message is delivered again:"
consume
redelivered=$(jq -s '[.[] | select(.delivery > 1 and .outcome == "acked")] | length' "$log")
say "  redelivered and acknowledged: $redelivered"
[ "$redelivered" -ge 1 ] || fail "step 5: want the killed consumer's message delivered again"
total=$(bakery-show kitchen/board | jq '.state.tickets | length')
unique=$(bakery-show kitchen/board | jq '[.state.tickets[].order] | unique | length')
say "  oven tickets: $total for $unique orders"
[ "$total" = "$unique" ] || fail "step 5: a ticket exists twice"

step "Summary: deliveries received and effects applied per subscriber"
routes=$(bakery-consume --routes | jq -s .)
# Deliveries: every delivery of a message reached each subscriber of its type.
jq -s --argjson routes "$routes" -r '
	[.[] | .type as $t | $routes[] | select(.type == $t) | .to | split("/")[0]]
	| group_by(.) | map("\(.[0]) \(length)") | .[]' "$log" |
while read -r kind n; do
	applied=0
	for a in $(bakery-show --list | jq -r --arg k "$kind" 'select(startswith($k + "/"))'); do
		applied=$((applied + $(bakery-show "$a" | jq '.seen | length')))
	done
	printf '  %-10s %3d deliveries  %3d effects applied\n' "$kind" "$n" "$applied"
done
say ""
say "Every paid order's effects applied once; the home is kept: $BAKERY_HOME"
