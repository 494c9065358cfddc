#!/bin/bash
# powercut.sh — power loss at every sync of every step of an order's path.
# For each step (place, pay, batch, stripe, webhook, relay, alarm, consume,
# consume1, ack, dlq, redrive, wipe, resume) it builds the step's starting home once, runs the
# step on a copy counting its syncs (BAKERY_POWERCUT_LOG), then for each
# k = 1..N runs it again on a fresh copy with the power cut at its k-th sync
# (BAKERY_POWERCUT_AT=k, lib/store/testvfs.c: every unsynced write of every SQLite
# file undone, files created since their folder's sync removed, SIGKILL),
# and once more cut at the step's exit (BAKERY_POWERCUT_AT=exit). Each cut
# home is recovered with the timers' own commands (bakery-wipe --resume,
# bakery-relay --due, bakery-consume --drain, bakery-dlq drain, with the
# clock moved an hour on, three rounds; and the operator's fault clear and
# bakery-redrive --all for the dead letters the dlq steps make on purpose),
# then tests/checker --drained and PRAGMA integrity_check on every SQLite
# file of the home must find nothing lost, applied twice or corrupt.
#
#   tests/powercut.sh      last line:
#       power-cut matrix: P points, K cuts: L lost, T applied twice, C corrupt files
#   (P: the sync points found, each step's syncs and its exit; K: the cuts
#   run; L and T as the checker counts them.) Before it, a line per step
#   and "stuck after the timers: S events" (the checker's stuck: events
#   neither applied nor dead-lettered that the timers never sent; the
#   matrix fails on them too). The environment chooses the rest:
#   BAKERY_SYNC=normal       every process at synchronous=NORMAL
#   BAKERY_POWERCUT_MODE=torn  the last unsynced sector of each file torn
#   POWERCUT_ONLY=REGEX      the steps whose names match (default: all)
#   POWERCUT_EVERY=N         every N-th sync point only (make check: 3)
#   BAKERY_POWERCUT_BOOT=same  the recovery in the cut run's boot (a loss the
#                            alarm index cannot see: proves the matrix can fail)
#   BAKERY_POWERCUT_SKIP=TEXT  syncs of paths containing TEXT do nothing (a
#                            disk that lies: proves the matrix can fail)
#   KEEP=1                   keeps the homes (in $TMPDIR/powercut.*, else
#                            /dev/shm/powercut.* if there is a /dev/shm)
set -u
TOP="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$TOP/bin:$PATH" BAKERY_MENU="$TOP/share/menu.tsv"
CHECKER="$TOP/build/tests/checker"
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_CRASH_AT BAKERY_LOG BAKERY_POWERCUT_AT \
	BAKERY_POWERCUT_LOG BAKERY_STRIPE_KEY BAKERY_STRIPE_API BAKERY_STRIPE_WEBHOOK_SECRET
DAY=2026-12-01
MATRIX_NAME=powercut RECOVER_WIPE=1
# shellcheck source=tests/matrix.bash
. "$TOP/tests/matrix.bash"

STEPS="place pay batch stripe webhook relay alarm consume consume1 ack dlq redrive wipe resume"
EVERY=${POWERCUT_EVERY:-1}
case $EVERY in
'' | *[!0-9]* | 0*) echo "powercut: POWERCUT_EVERY: want a number from 1, not '$EVERY'" >&2; exit 64 ;;
esac
case ${BAKERY_SYNC:-full} in
full | normal) ;;
*) echo "powercut: BAKERY_SYNC: want full or normal, not '$BAKERY_SYNC'" >&2; exit 64 ;;
esac
case ${BAKERY_POWERCUT_MODE:-undo} in
undo | torn) ;;
*) echo "powercut: BAKERY_POWERCUT_MODE: want torn or nothing, not '$BAKERY_POWERCUT_MODE'" >&2; exit 64 ;;
esac
WHSEC=whsec_powercut_5c21e8

# In RAM when there is some: the cut is the VFS's, and the disk's own
# fsyncs would only slow each of the hundreds of homes.
tmp=${TMPDIR:-/tmp}
[ -n "${TMPDIR:-}" ] || ! [ -d /dev/shm ] || ! [ -w /dev/shm ] || tmp=/dev/shm
WORK=$(mktemp -d "$tmp/powercut.XXXXXX")
STANDIN_PID=''
trap 'standin_stop; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# Runs the step's command with the cut's variables ($CUT: BAKERY_POWERCUT_AT
# or _LOG); its stdout in $HOME_DIR.out, its status in $rc.
run_step() {
	# A subshell that waits (exit: not exec'd), its stderr closed, so that
	# bash's "Killed" notice does not clutter the output.
	(env "${CUT[@]}" "$@" >"$HOME_DIR.out" 2>"$HOME_DIR.err"; exit $?) 2>/dev/null
	rc=$?
}

# The steps: setup_S builds the starting home (no cut), step_S runs the
# step once and records what its client was told (placed, paid).
setup_place() { :; }
step_place() {
	local id
	run_step bakery-order place --customer cy --day "$DAY" --delivery "1 Lane" cardamom-bun=1
	id=$(jq -r '.id // empty' "$HOME_DIR.out" 2>/dev/null)
	[ -z "$id" ] || echo "default $id" >>"$HOME_DIR.placed"
}

setup_pay() { place default ada --delivery "1 Lane" >"$HOME_DIR.id"; }
step_pay() {
	local id
	id=$(cat "$HOME_DIR.id")
	run_step bakery-order pay "$id"
	[ "$(jq -r '.status // empty' "$HOME_DIR.out" 2>/dev/null)" != succeeded ] ||
		echo "default $id" >>"$HOME_DIR.paid"
}

# bakery-order --batch: one group of three places (three order files made
# durable together, one sync of their folder) and two pays (two billing
# files, their folder's own sync). Its named points are cut too: after the
# group's syncs, before its names (make.before_rename), and after the
# names, before their folder's sync (make.before_folder_sync).
setup_batch() {
	place default ada >"$HOME_DIR.ids"
	place default bo >>"$HOME_DIR.ids"
}
step_batch() {
	local id
	printf '{"cmd":"place","customer":"%s","day":"%s","items":["cardamom-bun=1"],"key":"pc-%s"}\n' \
		cy "$DAY" 1 dee "$DAY" 2 eve "$DAY" 3 >"$HOME_DIR.lines"
	jq -Rc '{cmd: "pay", order: .}' "$HOME_DIR.ids" >>"$HOME_DIR.lines"
	run_step bakery-order --batch <"$HOME_DIR.lines"
	for id in $(jq -r 'select(.exit == 0) | .result.id // empty' "$HOME_DIR.out" 2>/dev/null); do
		echo "default $id" >>"$HOME_DIR.placed"
	done
	for id in $(jq -r 'select(.exit == 0 and .result.status == "succeeded") | .result.order' "$HOME_DIR.out" 2>/dev/null); do
		echo "default $id" >>"$HOME_DIR.paid"
	done
}
# The named points a step is cut at too, beside its syncs.
named_points() {
	case $1 in batch | consume) echo "make.before_rename make.before_folder_sync" ;; esac
}

# Pay through Stripe's API: tests/stripe-standin.py, a fresh one for each
# run of the step, so that its charges are that run's alone. After the cut
# Stripe's webhooks bring what it charged (stripe_webhooks), and the
# stand-in must have charged the order once at most.
STRIPE_KEY=sk_test_powercut7e4a91c3d2b5
standin_stop() {
	[ -z "$STANDIN_PID" ] || { kill "$STANDIN_PID" 2>/dev/null; wait "$STANDIN_PID" 2>/dev/null; }
	STANDIN_PID=''
}
standin_start() {
	standin_stop
	rm -f "$WORK/port"
	STANDIN_KEY=$STRIPE_KEY STANDIN_WEBHOOK_SECRET=$WHSEC \
		python3 "$TOP/tests/stripe-standin.py" "$WORK/port" 3>&- &
	STANDIN_PID=$!
	for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
	STANDIN=http://127.0.0.1:$(cat "$WORK/port")
}
setup_stripe() {
	standin_start
	BAKERY_STRIPE_API=$STANDIN BAKERY_STRIPE_KEY=$STRIPE_KEY bakery-order gateway stripe >/dev/null
	place default ada >"$HOME_DIR.id"
}
step_stripe() {
	local id
	id=$(cat "$HOME_DIR.id")
	standin_start
	run_step env BAKERY_STRIPE_API="$STANDIN" BAKERY_STRIPE_KEY="$STRIPE_KEY" \
		BAKERY_STRIPE_BACKOFF_MS=20 bakery-order pay "$id"
	[ "$(jq -r '.status // empty' "$HOME_DIR.out" 2>/dev/null)" != succeeded ] ||
		echo "default $id" >>"$HOME_DIR.paid"
}
stripe_webhooks() { # LABEL: the stand-in's signed events, then its count
	local line n
	curl -sf "$STANDIN/_events" | while read -r line; do
		echo "$line" | jq -j .body | env -u BAKERY_NOW BAKERY_STRIPE_WEBHOOK_SECRET="$WHSEC" \
			bakery-webhook --signature "$(echo "$line" | jq -r .signature)" >/dev/null
	done
	n=$(curl -sf "$STANDIN/_count" | jq .charges)
	[ "${n:-2}" -le 1 ] || fail "$1: $n charges at Stripe for one order"
}

# Stripe's signed payment_intent.succeeded, posted to bakery-webhook run
# as a CGI program (the variables a web server sets), signed when it runs.
setup_webhook() {
	local id
	id=$(place default ada)
	echo "$id" >"$HOME_DIR.id"
	jq -nc --arg o "$id" --argjson amount "$(bakery-order show "$id" | jq .total_cents)" \
		'{id: "evt_powercut", object: "event", type: "payment_intent.succeeded",
		  created: now | floor, data: {object: {id: "pi_powercut",
		  object: "payment_intent", amount: $amount, currency: "eur",
		  status: "succeeded", metadata: {order_id: $o, sandbox: "default"}}}}' |
		tr -d '\n' >"$HOME_DIR.event"
}
step_webhook() {
	local t mac
	t=$(date +%s)
	mac=$({ printf '%s.' "$t"; cat "$HOME_DIR.event"; } | openssl dgst -sha256 -hmac "$WHSEC" -r)
	run_step env -u BAKERY_NOW BAKERY_STRIPE_WEBHOOK_SECRET="$WHSEC" \
		GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
		CONTENT_LENGTH="$(wc -c <"$HOME_DIR.event")" HTTP_STRIPE_SIGNATURE="t=$t,v1=${mac%% *}" \
		bakery-webhook <"$HOME_DIR.event"
	! grep -q '"recorded"' "$HOME_DIR.out" || echo "default $(cat "$HOME_DIR.id")" >>"$HOME_DIR.paid"
}

outbox_waiting() { # two orders whose send the queue refused
	bakery-fault set queue-refuses
	place default ada >/dev/null 2>&1
	place default bo >/dev/null 2>&1
	bakery-fault clear queue-refuses
}
setup_relay() { outbox_waiting; }
step_relay() { run_step bakery-relay -s default --all; }
setup_alarm() { outbox_waiting; }
step_alarm() { run_step env BAKERY_NOW=$((T0 + 30)) bakery-relay --due; }

setup_consume() {
	local id
	id=$(place default ada --delivery "1 Lane")
	pay default "$id"
}
step_consume() {
	run_step bakery-consume --drain
	cat "$HOME_DIR.out" >>"$HOME_DIR.deliveries"
}
# The same a message at a time: each ack is a commit of its own, and the
# next one syncs it.
setup_consume1() { setup_consume; }
step_consume1() {
	run_step bakery-consume --drain --batch 1
	cat "$HOME_DIR.out" >>"$HOME_DIR.deliveries"
}
# Everything applied, not acked (a consumer killed before its ack): the
# next consumer, after the lease, is mostly acks.
setup_ack() {
	setup_consume
	(BAKERY_CRASH_AT=consume.before_ack:1 bakery-consume >>"$HOME_DIR.deliveries"
		exit 0) 2>/dev/null
}
step_ack() {
	run_step env BAKERY_NOW=$((T0 + 600)) bakery-consume --drain
	cat "$HOME_DIR.out" >>"$HOME_DIR.deliveries"
}

setup_dlq() { dead_letters; }
step_dlq() { run_step bakery-dlq drain; }
setup_redrive() {
	dead_letters
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
}
step_redrive() { run_step bakery-redrive --all; }

setup_wipe() {
	local s id
	for s in default s1 s2; do
		id=$(place "$s" ada)
		pay "$s" "$id"
	done
}
step_wipe() { run_step bakery-wipe --all; }
setup_resume() {
	setup_wipe
	(BAKERY_CRASH_AT=wipe.midway:1 bakery-wipe --all >/dev/null; exit 0) 2>/dev/null
}
step_resume() { run_step bakery-wipe --all --resume; }

# A copy of a case: the home and its files (HOME_DIR.*).
copy_case() { # FROM TO
	local f
	cp -a "$1" "$2"
	for f in "$1".*; do cp "$f" "$2${f#"$1"}"; done
}

# PRAGMA integrity_check on every SQLite file of the home, and on every
# .db file whatever its first bytes (opened, SQLite first rolls back a hot
# journal; an empty file is ok, one SQLite cannot read is corrupt).
integrity() { # LABEL
	local f out
	while IFS= read -r -d '' f; do
		case $f in *-journal | *-wal | *-shm) continue ;; esac
		[ "${f%.db}" != "$f" ] || [ "$(head -c 15 "$f")" = "SQLite format 3" ] || continue
		out=$(sqlite3 "$f" 'PRAGMA integrity_check' 2>&1)
		[ "$out" = ok ] && continue
		corrupt=$((corrupt + 1))
		fail "$1: ${f#"$BAKERY_HOME"/}: $(echo "$out" | head -3 | tr '\n' ' ')"
	done < <(find "$BAKERY_HOME" -type f -print0)
}

# After a wipe only the sandboxes still there are expected to have orders.
keep_living() {
	local f
	for f in "$HOME_DIR.placed" "$HOME_DIR.paid"; do
		while read -r s id; do
			[ ! -d "$BAKERY_HOME/sandboxes/$s" ] || echo "$s $id"
		done <"$f" >"$f.kept"
		mv "$f.kept" "$f"
	done
}

failures=0 points=0 cuts=0 lost=0 twice=0 corrupt=0 stuck=0
T0=$(date +%s)
export BAKERY_NOW=$T0
# Each run before the cut is in one boot, and the recovery after it in
# another (BAKERY_BOOT_ID, lib/core/alarm.c).
export BAKERY_BOOT_ID=powercut-before
for step in $STEPS; do
	echo "$step" | grep -qx "${POWERCUT_ONLY:-.*}" || continue
	HOME_DIR="$WORK/$step.start"
	export BAKERY_HOME="$HOME_DIR/home"
	bakery-order gateway test >/dev/null
	: >"$HOME_DIR.placed"; : >"$HOME_DIR.paid"; : >"$HOME_DIR.deliveries"
	"setup_$step" 2>>"$HOME_DIR.setup.err" || fail "$step: setup failed: $(tail -2 "$HOME_DIR.setup.err")"

	# The step once, uncut: its syncs.
	HOME_DIR="$WORK/$step.count"
	copy_case "$WORK/$step.start" "$HOME_DIR"
	export BAKERY_HOME="$HOME_DIR/home"
	CUT=(BAKERY_POWERCUT_LOG="$HOME_DIR.log")
	"step_$step"
	[ "$rc" -eq 0 ] || fail "$step: exit $rc uncut: $(tail -2 "$HOME_DIR.err")"
	n=$(grep -c '^sync ' "$HOME_DIR.log" 2>/dev/null)
	named=$(named_points "$step")
	points=$((points + n + 1 + $(wc -w <<<"$named")))
	before="$lost $twice $corrupt $cuts $stuck"

	for k in $(seq 1 "$EVERY" "$n") exit $named; do
		HOME_DIR="$WORK/$step.$k"
		copy_case "$WORK/$step.start" "$HOME_DIR"
		export BAKERY_HOME="$HOME_DIR/home"
		CUT=(BAKERY_POWERCUT_AT="$k")
		"step_$step"
		if [ "$rc" -ne 137 ]; then
			fail "$step:$k: expected the cut (SIGKILL), got exit $rc: $(tail -2 "$HOME_DIR.err")"
			continue
		fi
		cuts=$((cuts + 1))
		# The power came back: a new boot (the alarm index's unsynced
		# commits may be gone, and the next alarm run restores them).
		[ "${BAKERY_POWERCUT_BOOT:-}" = same ] || export BAKERY_BOOT_ID=powercut-after
		[ "$step" != stripe ] || stripe_webhooks "$step:$k"
		recover
		case $step in wipe | resume) keep_living ;; esac
		# First: its read-write open rolls back a journal left hot in a
		# file no tool wrote since (as SQLite does at any open), which
		# the checker, read-only, could not.
		integrity "$step:$k"
		check "$step:$k"
		[ -n "${KEEP:-}" ] || rm -rf "$HOME_DIR"
		export BAKERY_BOOT_ID=powercut-before
	done
	read -r l0 t0 c0 k0 s0 <<<"$before"
	echo "step $step: $n syncs, $((cuts - k0)) cuts: $((lost - l0)) lost, $((twice - t0)) applied twice, $((corrupt - c0)) corrupt files, $((stuck - s0)) stuck"
done

echo "stuck after the timers: $stuck events"
echo "power-cut matrix: $points points, $cuts cuts: $lost lost, $twice applied twice, $corrupt corrupt files"
[ "$failures" -eq 0 ] && [ "$lost" -eq 0 ] && [ "$twice" -eq 0 ] && [ "$corrupt" -eq 0 ]
