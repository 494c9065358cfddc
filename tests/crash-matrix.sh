#!/bin/bash
# crash-matrix.sh — invariant 8, exhaustively: every named crash point in the
# code is hit with SIGKILL (BAKERY_CRASH_AT=NAME:N, for each N the scenario
# passes it), then the home is recovered with the ordinary tools only (relay,
# relay --due with the clock moved past leases and alarms, consume, dlq drain,
# redrive, wipe --resume) and tests/checker must find nothing lost, unexpected,
# applied twice or stuck.
#
#   tests/crash-matrix.sh          run it; last line:
#                                  crash matrix: P points, K kills: L lost, T applied twice,
#                                  R repeats at external subscribers
#   tests/crash-matrix.sh --list   the points that have a scenario
#   CRASH_QUEUE=nats tests/crash-matrix.sh
#                                  the same on the NATS driver, against a
#                                  nats-server it starts on a free loopback
#                                  port with a temporary store (tests/nats.bash)
#                                  and stops by its pid; the nats.* points
#                                  are killed here too. Last line:
#                                  crash matrix (nats): P points, K kills: ...
#
# On NATS a lease is the server's AckWait, which BAKERY_NOW does not move:
# every consumer runs with --visibility $NATS_VISIBILITY and --retry-delay 0
# (a wrapper first on PATH), and the recovery waits out the leases in real
# time.
#
# A point in the code without a scenario here fails the run (and
# tests/cli/51-crash-matrix.bats), so a new point cannot go untested.
#
# Every home also routes OrderPlaced and OrderPaid to an external
# subscriber, share/examples/dedupe-receiver (HOME/routes), which logs
# every call. A repeated call of one event is allowed at
# external.after_answer only (bakery killed between the answer and its
# record, docs/design.md): there the repeats are counted and reported;
# anywhere else one fails the run.
set -u
TOP="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$TOP/bin:$PATH" BAKERY_MENU="$TOP/share/menu.tsv"
CHECKER="$TOP/build/tests/checker"
unset BAKERY_SANDBOX BAKERY_QUEUE BAKERY_CRASH_AT BAKERY_LOG BAKERY_SYNC \
	BAKERY_STRIPE_KEY BAKERY_STRIPE_API BAKERY_STRIPE_WEBHOOK_SECRET
DAY=2026-12-01

# point -> the N-th passes to kill at (each must be reached by the scenario)
declare -A PASSES=(
	[order.after_commit]="1"
	[pay.after_stripe]="1 2"
	[relay.after_send]="1 2"
	[consume.before_open]="1 5"
	[consume.after_apply]="1 2 3 4 5 6 7 8 9"
	[consume.before_ack]="1 2 3"
	[dlq.after_store]="1 2"
	[redrive.after_send]="1 2"
	[alarm.after_send]="1 2"
	[alarm.before_rearm]="1 2"
	[alarm.before_gone]="1"
	[alarm.gone_held]="1"
	[make.before_rename]="1 2"
	[make.before_folder_sync]="1 2"
	[wipe.midway]="1 2 3"
	[external.after_answer]="1 2"
	[batch.after_commit]="1"
	[batch.after_send]="1"
	[batch.after_answer]="1"
)

# Points whose scenario needs a nats-server, or that are not on an order's
# path (the backup's): killed by the named test instead (it must name the
# point), not here.
declare -A ELSEWHERE=(
	[nats.after_dlq_publish]="tests/cli/55-nats.bats"
	[backup.first_pass]="tests/cli/59-backup.bats"
	[backup.held]="tests/cli/59-backup.bats"
	[backup.before_rename]="tests/cli/59-backup.bats"
	[replica.before_send]="tests/cli/64-replica.bats"
	[replica.after_send]="tests/cli/64-replica.bats"
	[standby.after_file]="tests/cli/67-standby.bats"
	[standby.before_ack]="tests/cli/67-standby.bats"
)
# Points of a new file's making under another name, which a rollback
# journal has none of (its new file is created at its name, empty, and
# given its schema in its first transaction: docs/design.md, "WAL"): not
# reached on such a build (make crash-other), and said so.
WAL_ONLY="make.before_rename make.before_folder_sync alarm.before_gone alarm.gone_held"
JOURNAL=$("$TOP/bin/bakery-order" -V | sed -n 's/.*journal_mode=\([a-z]*\).*/\1/p')
QUEUE_KIND=${CRASH_QUEUE:-sqlite}
case $QUEUE_KIND in
sqlite) ;;
nats)
	unset 'ELSEWHERE[nats.after_dlq_publish]'
	PASSES[nats.after_dlq_publish]="1"
	;;
*) echo "crash-matrix: CRASH_QUEUE: want sqlite or nats, not '$QUEUE_KIND'" >&2; exit 64 ;;
esac

MATRIX_NAME=crash-matrix RECOVER_RELAY_ALL=1
# shellcheck source=tests/matrix.bash
. "$TOP/tests/matrix.bash"

code_points() {
	grep -rhoE 'bakery_crash_point\("[a-z_.]+"\)' "$TOP/lib" "$TOP/cmd" |
		sed -E 's/.*\("([^"]+)"\)/\1/' | sort -u
}

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${!PASSES[@]}" "${!ELSEWHERE[@]}" | sort
	exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/crash-matrix.XXXXXX")
STANDIN_PID='' NATS_PID=''
cleanup() {
	[ -z "$STANDIN_PID" ] || kill "$STANDIN_PID" 2>/dev/null
	[ -z "$NATS_PID" ] || nats_stop "$NATS_PID"
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$QUEUE_KIND" = nats ]; then
	# shellcheck disable=SC1091 # nats_start, nats_stop
	. "$TOP/tests/nats.bash"
	nats_start "$WORK/nats" || exit 69
	mkdir -p "$WORK/bin"
	printf '#!/bin/sh\nexec "%s/bin/bakery-consume" --visibility %s --retry-delay 0 "$@"\n' \
		"$TOP" "$NATS_VISIBILITY" >"$WORK/bin/bakery-consume"
	chmod +x "$WORK/bin/bakery-consume"
	export PATH="$WORK/bin:$PATH"
fi

# A fresh, empty queue for each home.
fresh_queue() {
	[ "$QUEUE_KIND" = nats ] || return 0
	"$TOP/tests/nats-tool.py" "${NATS_URL#nats://}" reset >/dev/null || return 1
	export BAKERY_QUEUE=$NATS_URL
}

# Runs "$@" expecting death by SIGKILL at $CRASH (exit 137); its stdout
# goes to $HOME_DIR.out. Not in a subshell: it counts the kill.
kill_at() {
	local rc
	# In a subshell whose stderr is closed so that bash's "Killed" notice
	# does not clutter the output.
	(env BAKERY_CRASH_AT="$CRASH" "$@" >"$HOME_DIR.out" 2>"$HOME_DIR.err") 2>/dev/null
	rc=$?
	if [ "$rc" -ne 137 ]; then
		fail "$CRASH: expected SIGKILL, got exit $rc from $*: $(tail -2 "$HOME_DIR.err")"
		return 1
	fi
	kills=$((kills + 1))
}

# Scenarios: each leaves the home mid-flight at its point.
s_order.after_commit() {
	local id
	kill_at bakery-order place --customer ada --day "$DAY" cardamom-bun=2 || return
	id=$(jq -r .id "$HOME_DIR.out")
	echo "default $id" >>"$HOME_DIR.placed"
	pay default "$id"
}

s_pay.after_stripe() {
	# Stripe's API is the stand-in. Pass 1: killed after a decline, before
	# recording it. Pass 2: the next pay sends that pending attempt again
	# (pass 1), then its own, the charge (pass 2), and is killed there.
	local id
	export BAKERY_STRIPE_API=$STANDIN BAKERY_STRIPE_KEY=$STRIPE_KEY
	export BAKERY_STRIPE_BACKOFF_MS=20 BAKERY_STRIPE_WEBHOOK_SECRET=$WHSEC
	bakery-order gateway stripe >/dev/null
	id=$(place default ada)
	local crash=$CRASH
	CRASH=pay.after_stripe:1 kill_at bakery-order pay --card 4000000000000002 "$id"
	CRASH=$crash
	[ "$n" = 1 ] || kill_at bakery-order pay "$id"
	bakery-order pay "$id" >/dev/null && echo "default $id" >>"$HOME_DIR.paid"
	# Stripe's signed webhooks pay the order (real time: signatures age).
	# The stand-in serves every run's charges: only this order's.
	curl -sf "$STANDIN/_events" | jq -c --arg o "$id" \
		'select(.body | fromjson | .data.object.metadata.order_id == $o)' |
	while read -r line; do
		echo "$line" | jq -j .body | env -u BAKERY_NOW bakery-webhook \
			--signature "$(echo "$line" | jq -r .signature)" >/dev/null
	done
	unset BAKERY_STRIPE_API BAKERY_STRIPE_KEY BAKERY_STRIPE_WEBHOOK_SECRET
	[ "$(curl -sf "$STANDIN/_count?order=$id" | jq .charges)" = 1 ] ||
		fail "$CRASH: not exactly one charge for $id"
}

s_relay.after_send() {
	bakery-fault set queue-refuses
	local a b
	a=$(place default ada 2>/dev/null)
	b=$(place default bo 2>/dev/null)
	bakery-fault clear queue-refuses
	kill_at bakery-relay "order/$a" "order/$b"
	pay default "$a"
	pay default "$b"
}

s_consume.after_apply() {
	local id
	id=$(place default ada --delivery "1 Lane")
	pay default "$id"
	kill_at bakery-consume --batch 1
}
s_consume.before_ack() { s_consume.after_apply; }
s_consume.before_open() { s_consume.after_apply; }

s_dlq.after_store() {
	dead_letters
	kill_at bakery-dlq drain
	lease_wait 30 # bakery-dlq's own lease, 30 s
}
s_redrive.after_send() {
	dead_letters
	bakery-dlq drain >/dev/null
	bakery-fault clear refuses:kitchen
	kill_at bakery-redrive --all
}

s_nats.after_dlq_publish() { # NATS only: dead-lettering, after the DLQ publish
	local id
	bakery-fault set refuses:kitchen
	id=$(place default ada)
	pay default "$id"
	kill_at bakery-consume
}

s_alarm.after_send() {
	bakery-fault set queue-refuses
	local a b
	a=$(place default ada 2>/dev/null)
	b=$(place default bo 2>/dev/null)
	bakery-fault clear queue-refuses
	BAKERY_NOW=$((T0 + 30)) kill_at bakery-relay --due
	pay default "$a"
	pay default "$b"
}
s_alarm.before_rearm() {
	bakery-fault set queue-refuses
	place default ada >/dev/null 2>&1
	place default bo >/dev/null 2>&1
	BAKERY_NOW=$((T0 + 30)) kill_at bakery-relay --due
}

# A new file's making killed between its alarm's entry and its rename.
# Pass 1: a place's order file; pass 2: a consumer's first group of new
# subscriber files, named together before the external subscriber's call
# (the external's own file is named after its answer: a kill there is
# external.after_answer's case, a repeat).
s_make.before_rename() {
	local id crash=$CRASH
	if [ "$n" = 1 ]; then
		kill_at bakery-order place --customer ada --day "$DAY" cardamom-bun=1 || return
	fi
	id=$(place default bo)
	pay default "$id"
	[ "$n" = 1 ] || CRASH=make.before_rename:1 kill_at bakery-consume --batch 1
	CRASH=$crash
}

# A group's new files named, their folder not synced yet. Pass 1: a
# --batch's places, then its pays (a group each); pass 2: a consumer's
# batch, at the second folder it names files in.
s_make.before_folder_sync() {
	local id
	if [ "$n" = 1 ]; then
		s_batch.after_commit
		return
	fi
	id=$(place default bo)
	pay default "$id"
	kill_at bakery-consume
}

# An alarm run killed in its look at an entry whose object has no file:
# a pay killed before its rename left billing/ID's entry and no file.
s_alarm.before_gone() {
	local id crash=$CRASH
	id=$(place default ada)
	CRASH=make.before_rename kill_at bakery-order pay "$id" || return
	CRASH=$crash
	BAKERY_NOW=$((T0 + 30)) kill_at bakery-relay --due
	pay default "$id"
}
s_alarm.gone_held() { s_alarm.before_gone; }

s_wipe.midway() {
	# Three sandboxes with paid orders in flight; the wipe dies in one.
	local s id
	for s in default s1 s2; do
		id=$(place "$s" ada)
		pay "$s" "$id"
	done
	kill_at bakery-wipe --all
	bakery-wipe --all --resume >/dev/null || fail "$CRASH: wipe --resume failed"
	[ -z "$(sandboxes)" ] || fail "$CRASH: sandboxes left after the wipe: $(sandboxes)"
	# The wiped orders are gone by design: only what follows is expected.
	: >"$HOME_DIR.placed"
	: >"$HOME_DIR.paid"
	bakery-consume >>"$HOME_DIR.deliveries"
	id=$(place default ada)
	pay default "$id"
}

s_external.after_answer() { # pass 1: OrderPlaced's answer, 2: OrderPaid's
	local id
	id=$(place default ada)
	pay default "$id"
	kill_at bakery-consume --batch 1
}

# bakery-order --batch killed at its point, run again as a script would
# (the keys make it safe); then its pays, killed and run again the same way.
s_batch.after_commit() {
	local id
	printf '{"cmd":"place","customer":"%s","day":"%s","items":["cardamom-bun=1"],"key":"b-%s"}\n' \
		ada "$DAY" 1 bo "$DAY" 2 >"$HOME_DIR.lines"
	kill_at bakery-order --batch <"$HOME_DIR.lines" || return
	bakery-order --batch <"$HOME_DIR.lines" >"$HOME_DIR.answers" ||
		fail "$CRASH: the batch run again failed"
	for id in $(jq -r .result.id "$HOME_DIR.answers"); do
		echo "default $id" >>"$HOME_DIR.placed"
	done
	jq -c '{cmd: "pay", order: .result.id}' "$HOME_DIR.answers" >"$HOME_DIR.pays"
	kill_at bakery-order --batch <"$HOME_DIR.pays" || return
	bakery-order --batch <"$HOME_DIR.pays" >"$HOME_DIR.answers" ||
		fail "$CRASH: the pays run again failed"
	for id in $(jq -r 'select(.exit == 0) | .result.order' "$HOME_DIR.answers"); do
		echo "default $id" >>"$HOME_DIR.paid"
	done
}
s_batch.after_send() { s_batch.after_commit; }
s_batch.after_answer() { s_batch.after_commit; }

# The external receiver's calls of one event past the first.
repeats() {
	local log="$HOME_DIR.receiver/calls.log"
	[ -f "$log" ] || { echo 0; return; }
	sort "$log" | uniq -c | awk '{ r += $1 - 1 } END { print r + 0 }'
}

# Every point in the code needs a scenario, and every scenario a point.
failures=0 kills=0 lost=0 twice=0 points=0 ext_repeats=0
for p in $(code_points); do
	if [ -n "${ELSEWHERE[$p]:-}" ]; then
		grep -qE "crash_at $p(:[0-9]+)? " "$TOP/${ELSEWHERE[$p]}" ||
			fail "$p: ${ELSEWHERE[$p]} has no test that kills there"
		continue
	fi
	[ -n "${PASSES[$p]:-}" ] || fail "$p: a crash point in the code without a scenario"
done
for p in "${!PASSES[@]}"; do
	code_points | grep -qx "$p" || fail "$p: a scenario for a point not in the code"
done

# The Stripe stand-in, for pay.after_stripe.
STRIPE_KEY=sk_test_bakery4f1c9a0e27d35b86 WHSEC=whsec_standin_3b9e
STANDIN_KEY=$STRIPE_KEY STANDIN_WEBHOOK_SECRET=$WHSEC \
	python3 "$TOP/tests/stripe-standin.py" "$WORK/port" 3>&- &
STANDIN_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
STANDIN=http://127.0.0.1:$(cat "$WORK/port")

# CRASH_MATRIX_ONLY=POINT runs one point's scenarios (for the tests).
for p in $(printf '%s\n' "${!PASSES[@]}" | sort | grep -x "${CRASH_MATRIX_ONLY:-.*}"); do
	if [ "$JOURNAL" != wal ] && [[ " $WAL_ONLY " == *" $p "* ]]; then
		echo "$p: not reached in a $JOURNAL journal (no file made under another name)"
		continue
	fi
	points=$((points + 1))
	for n in ${PASSES[$p]}; do
		CRASH="$p:$n"
		HOME_DIR="$WORK/$p.$n"
		export BAKERY_HOME="$HOME_DIR/home"
		T0=$(date +%s)
		export BAKERY_NOW=$T0
		bakery-order gateway test >/dev/null # no money moves
		export BAKERY_SUBSCRIBER_RECEIVER_DIR="$HOME_DIR.receiver"
		{
			cat "$TOP/share/routes"
			for t in OrderPlaced OrderPaid; do
				echo "$t exec:$TOP/share/examples/dedupe-receiver name=archive"
			done
		} >"$BAKERY_HOME/routes"
		: >"$HOME_DIR.placed"; : >"$HOME_DIR.paid"; : >"$HOME_DIR.deliveries"
		fresh_queue || fail "$CRASH: cannot reset the NATS streams"
		before=$kills
		"s_$p" 2>>"$HOME_DIR.scenario.err"
		[ "$kills" -gt "$before" ] || continue
		recover
		check "$CRASH"
		r=$(repeats)
		if [ "$p" = external.after_answer ]; then
			ext_repeats=$((ext_repeats + r))
		elif [ "$r" -ne 0 ]; then
			fail "$CRASH: $r repeated calls at the external receiver"
		fi
	done
done

name="crash matrix"
[ "$QUEUE_KIND" = sqlite ] || name="crash matrix ($QUEUE_KIND)"
echo "$name: $points points, $kills kills: $lost lost, $twice applied twice, $ext_repeats repeats at external subscribers"
[ "$failures" -eq 0 ] && [ "$lost" -eq 0 ] && [ "$twice" -eq 0 ]
