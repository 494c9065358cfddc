#!/bin/bash
# soak.sh — the chaos soak: parallel clients place and pay orders while
# three consumers, the relay (--watch) and the DLQ handler run; faults
# (refuses:kitchen, queue-refuses) are toggled; workers are SIGKILLed, both
# by kill -9 from outside and at random crash points (BAKERY_CRASH_AT);
# dead letters are redriven. Then the faults clear, everything drains with
# the ordinary tools, and tests/checker judges the home.
#
# --kills: kills only. No fault is ever set, nothing is redriven and no
# operator tool runs: consumers, the relay and clients are killed at random
# while orders are placed and paid, and the reorderings the kills cause (an
# OrderPaid that overtakes an OrderPlaced held in a killed consumer's lease)
# must heal through the consumers' waiting retries alone. The home must
# drain by itself and end with every paid order's effects applied once and
# no dead letter.
#
# SOAK_QUEUE=nats: the same on the NATS driver, against a nats-server the
# soak starts itself (JetStream, a temporary store, a free loopback port,
# tests/nats.bash), which is SIGKILLed too, every 2 to 6 s (seeded), and
# started again on the same port with the same store after 0.1 to 2.9 s.
# bakery's processes ride it out: the client library reconnects, a worker
# that exits (69, 75) is run again as its systemd unit would, an order's
# send that finds no server stays in its outbox for the alarm. The streams
# must end holding nothing owed (the checker reads only the embedded
# queue): a message left there must be one a consumer acked or a dead
# letter stored, deleted and then brought back by the server's restart
# (nats-server 2.9 keeps such deletes in a lazily written index,
# docs/nats.md); any other fails the soak.
#
#   tests/soak.sh [--kills] [ORDERS [SEED]]
#   (make soak [SOAK_MODE=kills] [QUEUE=nats] SOAK_ORDERS=N SOAK_SEED=S)
#
# Last line:
#   soak: N orders, K kills across M points: L lost, T applied twice,
#   D duplicate deliveries absorbed[, R dead letters]
# on NATS "soak (nats): N orders, K kills across M points, S server kills:
# ...", and a message owed in a stream at the end fails the soak.
# Orders spread over one sandbox per 250 orders (a visitor's sandbox in the
# demo): a day's schedule and dispatch and a customer's objects are one JSON
# row each, rewritten on every event they apply (the kitchen's cards and the
# CRM's customers are rows; see docs/reliability.md, "Throughput").
set -u
MODE=chaos
[ "${1:-}" = --kills ] && { MODE=kills; shift; }
ORDERS=${1:-200}
SEED=${2:-1}
CLIENTS=${SOAK_CLIENTS:-4}
QUEUE_KIND=${SOAK_QUEUE:-sqlite}
case $QUEUE_KIND in
sqlite | nats) ;;
*) echo "soak: SOAK_QUEUE: want sqlite or nats, not '$QUEUE_KIND'" >&2; exit 64 ;;
esac
TOP="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$TOP/bin:$PATH" BAKERY_MENU="$TOP/share/menu.tsv"
CHECKER="$TOP/build/tests/checker"
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_CRASH_AT BAKERY_LOG BAKERY_SYNC BAKERY_NOW \
	BAKERY_STRIPE_KEY BAKERY_STRIPE_API
W=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
export BAKERY_HOME="$W/home" BAKERY_ALARM_DELAY=2
# The consumers' timings, a tenth of the defaults (30 s leases, 30 s
# alarms; here 3 s and 2 s) so that a kill heals in seconds. The chaos
# retries every second and redrives its dead letters; the kills-only soak
# keeps the default retry schedule's shape (5 s, 30 s, 2 min against a 30 s
# lease: the first two retries outlast a killed consumer's lease, the last
# is four of them), scaled the same way.
# SOAK_RETRY_DELAY overrides the delays (0: immediate retries, to see what
# the waits are for).
VISIBILITY=3
if [ "$MODE" = kills ]; then DELAYS=1,3,12; else DELAYS=1; fi
DELAYS=${SOAK_RETRY_DELAY:-$DELAYS}
SANDBOXES=$(( (ORDERS + 249) / 250 ))
RANDOM=$SEED
start=$(date +%s)

# Whether pid is still one of ours (a bakery program in this home): a
# worker's pid file may outlive it, and the pid may be reused.
ours() {
	grep -qz "^BAKERY_HOME=$BAKERY_HOME\$" "/proc/$1/environ" 2>/dev/null
}

# Whether pid is this soak's nats-server (its store is in $W).
our_server() {
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "-sd $W/nats/store "
}

cleanup() {
	touch "$W/stop" "$W/drain"
	for f in "$W"/slot.*.pid; do
		[ -e "$f" ] && ours "$(cat "$f")" && kill -TERM "$(cat "$f")" 2>/dev/null
	done
	wait 2>/dev/null
	[ -e "$W/nats.pid" ] && our_server "$(cat "$W/nats.pid")" && nats_stop "$(cat "$W/nats.pid")"
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

# A worker slot: runs its program again and again until $W/stop (or
# $W/drain for the chaos), sometimes with a crash point; each exit is
# logged as "SLOT STATUS POINT".
slot() {
	local name=$1 points=$2 r=$3 point pid rc
	shift 3
	RANDOM=$r
	while [ ! -e "$W/stop" ]; do
		point=
		if [ ! -e "$W/drain" ] && [ -n "$points" ] && [ $((RANDOM % 3)) = 0 ]; then
			local a
			read -ra a <<<"$points"
			point="${a[RANDOM % ${#a[@]}]}:$((RANDOM % 40 + 1))"
		fi
		env ${point:+BAKERY_CRASH_AT=$point} "$@" >>"$W/out.$name" 2>>"$W/err.$name" 3>&- &
		pid=$!
		echo "$pid" >"$W/slot.$name.pid"
		wait "$pid"
		rc=$?
		[ -e "$W/killed.$pid" ] && point=kill-9
		echo "$name $rc ${point%%:*}" >>"$W/exits"
		# The queue unavailable (a nats-server down): run again a second
		# later, as the systemd units do (Restart=always, RestartSec=2s).
		case $rc in 69 | 75) sleep 1 ;; esac
	done
}

# A client: places and pays its share of the orders, sometimes killed at a
# crash point of its own; a paid order is one whose pay exited 0.
client() {
	local k=$1 i s c day id out rc point delivery
	RANDOM=$((SEED * 100 + k))
	for ((i = k; i < ORDERS; i += CLIENTS)); do
		s=s$((i % SANDBOXES))
		c=c$((RANDOM % 40))
		day=2026-12-0$((RANDOM % 7 + 1))
		point=
		[ $((RANDOM % 10)) = 0 ] && point=order.after_commit
		[ $((RANDOM % 20)) = 0 ] && point=relay.after_send
		[ $((RANDOM % 20)) = 0 ] && point=make.before_rename
		delivery=()
		[ $((RANDOM % 2)) = 0 ] && delivery=(--delivery "$i Lane")
		out=$(env ${point:+BAKERY_CRASH_AT=$point} bakery-order -s "$s" place --customer "$c" \
			--day "$day" "${delivery[@]}" cardamom-bun=$((RANDOM % 3 + 1)) 2>>"$W/err.client$k")
		rc=$?
		[ -n "$point" ] && echo "client$k $rc $point" >>"$W/exits"
		id=$(echo "$out" | jq -r '.id // empty' 2>/dev/null)
		if [ -z "$id" ]; then
			echo "client$k: place $i failed: $rc" >>"$W/client-failures"
			continue
		fi
		echo "$s $id" >>"$W/placed"
		for _ in 1 2 3 4 5; do
			point=
			[ $((RANDOM % 15)) = 0 ] && point=relay.after_send
			[ $((RANDOM % 20)) = 0 ] && point=make.before_rename
			env ${point:+BAKERY_CRASH_AT=$point} bakery-order -s "$s" pay "$id" \
				>/dev/null 2>>"$W/err.client$k"
			rc=$?
			[ -n "$point" ] && echo "client$k $rc $point" >>"$W/exits"
			[ "$rc" = 0 ] && { echo "$s $id" >>"$W/paid"; break; }
			sleep 1
		done
	done
}

# kill_one: kill -9 a random worker of this mode.
kill_one() {
	local slots=(consume1 consume2 consume3 relay dlq) f pid
	[ "$MODE" = kills ] && slots=(consume1 consume2 consume3 relay)
	f="$W/slot.${slots[RANDOM % ${#slots[@]}]}.pid"
	if [ -e "$f" ] && ours "$(cat "$f")"; then
		pid=$(cat "$f")
		: >"$W/killed.$pid"
		kill -9 "$pid" 2>/dev/null
	fi
}

# The chaos: every ~0.3 s one of kill -9 a random worker, set a fault,
# clear one, or redrive a sandbox's dead letters (sometimes killed). With
# --kills, every ~0.3 s a kill -9, and nothing else.
chaos() {
	RANDOM=$((SEED * 7))
	local s
	while [ ! -e "$W/drain" ]; do
		sleep 0.$((RANDOM % 4 + 1))
		s=s$((RANDOM % SANDBOXES))
		if [ "$MODE" = kills ]; then
			kill_one
			continue
		fi
		case $((RANDOM % 6)) in
		0 | 1) kill_one ;;
		2) bakery-fault -s "$s" set refuses:kitchen >/dev/null 2>>"$W/err.chaos" ;;
		3) bakery-fault -s "$s" set queue-refuses >/dev/null 2>>"$W/err.chaos" ;;
		4)
			bakery-fault -s "$s" clear refuses:kitchen >/dev/null 2>>"$W/err.chaos"
			bakery-fault -s "$s" clear queue-refuses >/dev/null 2>>"$W/err.chaos"
			;;
		5)
			local point=
			[ $((RANDOM % 3)) = 0 ] && point=redrive.after_send
			env ${point:+BAKERY_CRASH_AT=$point} bakery-redrive -s "$s" --all \
				>/dev/null 2>>"$W/err.chaos"
			local rc=$?
			[ -n "$point" ] && echo "chaos $rc $point" >>"$W/exits"
			;;
		esac
	done
}

# The nats-server's own chaos: SIGKILL every 2 to 6 s, down 0.1 to 2.9 s,
# then started again on the same port with the same store; until the drain,
# and it always leaves the server running.
server_chaos() {
	RANDOM=$((SEED * 13))
	local pid
	while [ ! -e "$W/drain" ]; do
		sleep $((RANDOM % 4 + 2)).$((RANDOM % 10))
		[ -e "$W/drain" ] && break
		pid=$(cat "$W/nats.pid")
		our_server "$pid" || { echo "soak: nats-server $pid is gone" >>"$W/err.server"; break; }
		kill -KILL "$pid"
		while (exec 3<>"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null; do sleep 0.05; done
		echo "$(date +%s) $pid" >>"$W/server-kills"
		sleep 0.$((RANDOM % 29 + 1))
		for _ in 1 2 3; do
			nats_restart "$W/nats" 2>>"$W/err.server" && break
			sleep 1
		done
		echo "$NATS_PID" >"$W/nats.pid"
	done
}

# On NATS: the ids the streams hold that no consumer acked and no DLQ
# handler stored, i.e. owed; what the server brought back after its kill
# was acked or stored before.
done_ids() {
	cat "$W"/out.consume* "$W/out.final" | jq -Rr 'fromjson? | select(.outcome? == "acked") | .id'
	cat "$W/out.dlq" | jq -Rr 'fromjson? | .id? // empty'
}
stream_ids() {
	{ bakery-queue peek --limit 1000000 && bakery-queue peek --dlq --limit 1000000; } | jq -r .id
}
owed_in_streams() {
	local ids
	ids=$(stream_ids) || { echo unknown; return; }
	comm -23 <(sort -u <<<"$ids" | sed '/^$/d') <(done_ids 2>/dev/null | sort -u) | wc -l
}

# A NATS soak that lost or doubled an event keeps its folder and says, per
# event the checker named, where the store's scan and the consumers' lines
# put it: at which sequence, against which floors, delivered how often.
explain_nats() {
	local what id at seen
	KEEP=1
	echo "soak: kept $W (the store by sequence: $W/scan.jsonl)"
	jq -c 'select(.stream or .consumer)' "$W/scan.jsonl"
	sed -n -e 's/^checker: lost: \(evt_[0-9a-z]*\).*/lost \1/p' \
		-e 's/^checker: applied twice: \(evt_[0-9a-z]*\).*/twice \1/p' "$W/check.err" |
		while read -r what id; do
			at=$(jq -c --arg id "$id" 'select(.id == $id) | .seq' "$W/scan.jsonl" | tr '\n' ' ')
			seen=$(cat "$W"/out.consume* "$W/out.final" |
				jq -Rc --arg id "$id" 'fromjson? | select(.id? == $id) | [.delivery, .outcome]' | tr '\n' ' ')
			echo "soak: $what $id: at sequence ${at:-none} in the store; deliveries (delivery, outcome): ${seen:-none}"
		done
}

sandboxes() { for d in "$BAKERY_HOME"/sandboxes/*/; do [ -d "$d" ] && basename "$d"; done; }
queued() { bakery-queue stats | jq '[.[] | .ready + .leased + .delayed] | add // 0'; }
# What is still owed anywhere: queued messages, dead letters, outbox rows.
# On NATS the streams' share is owed_in_streams (below).
owed() {
	if [ "$QUEUE_KIND" = nats ]; then
		local rows
		rows=$(bakery-status --json 2>/dev/null |
			jq '[.sandboxes[] | .outbox_rows + .dead_letters] | add // 0') || rows=unknown
		echo "$rows $(owed_in_streams)" | awk '$1 == 0 && $2 == 0 { print 0; next } { print "some" }'
		return
	fi
	bakery-status --json 2>/dev/null | jq '([.queue[] | .ready + .leased + .delayed] | add)
		+ ([.sandboxes[] | .outbox_rows + .dead_letters] | add // 0)'
}

mkdir -p "$BAKERY_HOME"
bakery-order gateway test >/dev/null # no money moves
# One subscriber outside bakery, routed as an operator would: the receipt
# mailer of share/examples on every OrderPaid, through a sendmail stand-in
# that files each mail under $W/mail/ (bakery passes BAKERY_SUBSCRIBER_*
# on to it).
mkdir -p "$W/mail"
printf '#!/bin/sh\nexec cat >"$(mktemp %s/mail.XXXXXX)"\n' "$W/mail" >"$W/sendmail"
chmod +x "$W/sendmail"
export BAKERY_SUBSCRIBER_SENDMAIL="$W/sendmail -t"
{
	cat "$TOP/share/routes"
	echo "OrderPaid exec:$TOP/share/examples/receipt-mailer name=receipts"
} >"$BAKERY_HOME/routes"
: >"$W/exits"; : >"$W/placed"; : >"$W/paid"; : >"$W/out.final"; : >"$W/client-failures"
: >"$W/server-kills"
if [ "$QUEUE_KIND" = nats ]; then
	# shellcheck disable=SC1091 # nats_free_port, nats_restart, nats_stop
	. "$TOP/tests/nats.bash"
	NATS_PORT=$(nats_free_port)
	mkdir -p "$W/nats/store"
	# Started from a subshell, so that the server is not this shell's
	# child: the bare waits below wait for the workers, not for it.
	(nats_restart "$W/nats" && echo "$NATS_PID" >"$W/nats.pid") || exit 69
	export BAKERY_QUEUE=nats://127.0.0.1:$NATS_PORT
	bakery-queue init >/dev/null || exit 69
fi
CONSUME_POINTS="consume.after_apply consume.before_ack relay.after_send make.before_rename"
for n in 1 2 3; do
	slot "consume$n" "$CONSUME_POINTS" $((SEED + n)) \
		bakery-consume --follow --visibility "$VISIBILITY" --retry-delay "$DELAYS" &
done
slot relay "relay.after_send alarm.after_send alarm.before_rearm alarm.before_gone alarm.gone_held" $((SEED + 4)) bakery-relay --watch &
# Kills only: no DLQ handler, so a dead letter stays in the DLQ and counts.
[ "$MODE" = kills ] || slot dlq "dlq.after_store" $((SEED + 5)) bakery-dlq drain --follow &
chaos &
chaos_pid=$!
server_pid=
if [ "$QUEUE_KIND" = nats ]; then
	server_chaos &
	server_pid=$!
fi
clients=()
for ((k = 0; k < CLIENTS; k++)); do
	client "$k" &
	clients+=($!)
done
for p in "${clients[@]}"; do wait "$p"; done
placed_at=$(date +%s)

# Drain: no more chaos or crash points; faults cleared; the workers finish
# what is queued; dead letters are redriven until none are left. With
# --kills the workers alone finish, in real time: no tool, no redrive, no
# clock moved.
touch "$W/drain"
wait "$chaos_pid" $server_pid
drained=yes
if [ "$MODE" = kills ]; then
	drained=no
	for _ in $(seq 120); do
		sleep 1
		[ "$(owed)" = 0 ] && { drained=yes; break; }
	done
	# Not drained: what is owed, kept with the folder, for the reader.
	if [ "$drained" = no ]; then
		KEEP=1
		bakery-status --json >"$W/status.undrained" 2>&1
		echo "soak: not drained in 120 s; kept $W; owed: $(jq -c '{attention, queue,
			busy: [.sandboxes[].busy[]]}' "$W/status.undrained" 2>/dev/null)" >&2
	fi
	touch "$W/stop"
	for f in "$W"/slot.*.pid; do ours "$(cat "$f")" && kill -TERM "$(cat "$f")" 2>/dev/null; done
	wait
fi
[ "$MODE" = kills ] || for s in $(sandboxes); do
	bakery-fault -s "$s" clear refuses:kitchen >/dev/null
	bakery-fault -s "$s" clear queue-refuses >/dev/null
done
[ "$MODE" = kills ] || for _ in $(seq 60); do
	for s in $(sandboxes); do bakery-redrive -s "$s" --all >/dev/null 2>>"$W/err.drain"; done
	for s in $(sandboxes); do bakery-relay -s "$s" --all >/dev/null 2>>"$W/err.drain"; done
	sleep 2
	if [ "$QUEUE_KIND" = nats ]; then
		[ "$(owed_in_streams)" = 0 ]
	else
		[ "$(queued)" = 0 ]
	fi && [ -z "$(for s in $(sandboxes); do bakery-dlq -s "$s" list; done)" ] && break
done
touch "$W/stop"
for f in "$W"/slot.*.pid; do ours "$(cat "$f")" && kill -TERM "$(cat "$f")" 2>/dev/null; done
wait
# Whatever a killed worker left: the ordinary tools, the clock past leases
# (on NATS a lease is the server's AckWait: waited out in real time).
later=$(( $(date +%s) + 3600 ))
lease_wait() { [ "$QUEUE_KIND" = sqlite ] || sleep $((VISIBILITY + 1)); }
[ "$MODE" = kills ] || for _ in 1 2; do
	for s in $(sandboxes); do
		bakery-relay -s "$s" --all >/dev/null
		BAKERY_NOW=$later bakery-relay --due >/dev/null
	done
	lease_wait
	BAKERY_NOW=$later bakery-consume >>"$W/out.final"
	BAKERY_NOW=$later bakery-dlq drain >>"$W/out.dlq"
	for s in $(sandboxes); do bakery-redrive -s "$s" --all >/dev/null; done
	lease_wait
	BAKERY_NOW=$later bakery-consume >>"$W/out.final"
done 2>>"$W/err.drain"

args=()
for f in "$W"/out.consume* "$W/out.final"; do args+=(--deliveries "$f"); done
result=$("$CHECKER" -v --drained --placed "$W/placed" --paid "$W/paid" "${args[@]}" "$BAKERY_HOME" 2>"$W/check.err")
rc=$?
# On NATS the checker sees no queue: what the streams still owe is stuck.
left=0 back=0
if [ "$QUEUE_KIND" = nats ]; then
	left=$(owed_in_streams 2>>"$W/check.err")
	back=$(queued 2>>"$W/check.err") || back=unknown
	[ "$left" = 0 ] && back=$((back - left)) ||
		{ rc=1; echo "soak: the streams still owe $left messages" >>"$W/check.err"; }
fi
# On NATS, the store by sequence while the server still runs (both
# streams, their consumers' floors): a loss is explained, not only counted.
if [ "$QUEUE_KIND" = nats ]; then
	for st in BAKERY_EVENTS BAKERY_EVENTS_DLQ; do
		"$TOP/tests/nats-tool.py" "127.0.0.1:$NATS_PORT" scan "$st"
	done >"$W/scan.jsonl" 2>>"$W/check.err"
fi
# Receipts: every paid order mailed; one Message-ID (its OrderPaid's id) an
# order; a mail sent again only when a consumer died between the mailer's
# answer and bakery's record of it (docs/design.md, "Subscribers outside
# bakery"), so never more repeats than consumers died.
mailed=$(cat "$W"/mail/mail.* 2>/dev/null | sed -n 's/^Subject: Your receipt for order //p' | sort -u)
unmailed=$(awk '{ print $2 }' "$W/paid" | sort -u | comm -23 - <(printf '%s\n' "$mailed" | sed '/^$/d') | wc -l)
mails=$(find "$W/mail" -name 'mail.*' | wc -l)
message_ids=$(cat "$W"/mail/mail.* 2>/dev/null | grep -c '^Message-ID: ' || true)
distinct_ids=$(cat "$W"/mail/mail.* 2>/dev/null | sed -n 's/^Message-ID: //p' | sort -u | wc -l)
per_order=$(cat "$W"/mail/mail.* 2>/dev/null | awk '/^Subject: /{ o = $NF } /^Message-ID: /{ print o, $2 }' | sort -u | awk '{ print $1 }' | uniq -d | wc -l)
consumer_deaths=$(awk '$1 ~ /^consume/ && $2 == 137' "$W/exits" | wc -l)
repeats=$((mails - distinct_ids))
[ "$unmailed" = 0 ] && [ "$message_ids" = "$mails" ] && [ "$per_order" = 0 ] &&
	[ "$repeats" -le "$consumer_deaths" ] ||
	{ rc=1; echo "soak: receipts: $unmailed paid orders unmailed, $per_order with two events, $repeats repeats for $consumer_deaths consumer deaths" >>"$W/check.err"; }
end=$(date +%s)
kills=$(awk '$2 == 137' "$W/exits" | wc -l)
points=$(awk '$2 == 137 { print $3 }' "$W/exits" | sort -u | wc -l)
busy=$(cat "$W"/err.* 2>/dev/null | grep -ci 'database is locked\|busy' || true)
echo "soak: seed $SEED, $CLIENTS clients, $SANDBOXES sandboxes, placing $((placed_at - start)) s, total $((end - start)) s"
echo "soak: kills by point: $(awk '$2 == 137 { print $3 }' "$W/exits" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')"
[ "$QUEUE_KIND" = sqlite ] ||
	echo "soak: nats-server SIGKILLed and restarted $(wc -l <"$W/server-kills") times; owed in the streams: $left; back after a server kill, acked before: $back"
echo "soak: placed $(wc -l <"$W/placed"), paid $(wc -l <"$W/paid"), client failures $(wc -l <"$W/client-failures"), busy errors $busy"
echo "soak: checker: $result"
echo "soak: receipts (exec:receipt-mailer): $(wc -l <"$W/paid") paid orders, $mails mails, $unmailed unmailed, $repeats sent again ($consumer_deaths consumers died)"
[ "$rc" = 0 ] || head -20 "$W/check.err"
lost=$(echo "$result" | jq .lost)
twice=$(echo "$result" | jq .applied_twice)
[ "$QUEUE_KIND" = nats ] && { [ "$rc" != 0 ] || [ "$lost" != 0 ] || [ "$twice" != 0 ]; } &&
	explain_nats
dup=$(echo "$result" | jq .duplicated)
# The retries, from the consumers' lines (a killed one's last line may be
# cut short): how many, why, and at which delivery each retried message
# was acked in the end; the dead letters made.
retries=$(cat "$W"/out.consume* "$W/out.final" | jq -Rsc '
	[split("\n")[] | fromjson? | select(type == "object")] as $l
	| [$l[] | select(.outcome == "retried")] as $r
	| ([$r[].id] | unique) as $ids
	| {retries: ($r | length),
	   by_status: ($r | group_by(.status) | map({key: (.[0].status | tostring), value: length}) | from_entries),
	   messages: ($ids | length),
	   acked_at: ([$l[] | select(.outcome == "acked" and (.id | IN($ids[])))]
		| group_by(.delivery) | map({key: (.[0].delivery | tostring), value: length}) | from_entries),
	   dead_lettered: ([$l[] | select(.outcome == "dead-lettered")] | length)}')
# Dead letters: the ids dead-lettered, in the DLQ or stored, each once.
dead=$({
	cat "$W"/out.consume* "$W/out.final" | jq -Rr 'fromjson? | select(.outcome? == "dead-lettered") | .id'
	bakery-queue peek --dlq --limit 1000000 | jq -r .id
	for s in $(sandboxes); do bakery-dlq -s "$s" list | jq -r .id; done
} 2>>"$W/err.drain" | sort -u | wc -l)
echo "soak: retries (--retry-delay $DELAYS, --visibility $VISIBILITY): $retries"
tail="$lost lost, $twice applied twice, $dup duplicate deliveries absorbed"
[ "$MODE" = kills ] && tail="$tail, $dead dead letters, drained by itself: $drained"
if [ "$QUEUE_KIND" = sqlite ]; then
	echo "soak: $ORDERS orders, $kills kills across $points points: $tail"
else
	echo "soak ($QUEUE_KIND): $ORDERS orders, $kills kills across $points points, $(wc -l <"$W/server-kills") server kills: $tail"
fi
# On NATS a soak too short for the server to be killed proves less: fails.
[ "$QUEUE_KIND" = sqlite ] || [ -s "$W/server-kills" ] ||
	{ echo "soak: the nats-server was never killed: more orders" >&2; exit 1; }
[ "$rc" = 0 ] && [ "$(wc -l <"$W/paid")" -gt 0 ] &&
	{ [ "$MODE" = chaos ] || { [ "$dead" = 0 ] && [ "$drained" = yes ]; }; }
