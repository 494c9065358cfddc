# matrix.bash — shared by tests/crash-matrix.sh and tests/powercut.sh: the
# scenarios' helpers, the recovery with the ordinary tools, the checker.
# Sourced; the caller sets MATRIX_NAME, CHECKER, DAY, T0, HOME_DIR (the
# prefix of a case's files: HOME_DIR.placed, .paid, .deliveries, ...) and
# BAKERY_HOME, and starts the counters failures, lost and twice at 0
# (stuck too, if it wants them counted).
# RECOVER_RELAY_ALL=1: the recovery also sends each sandbox's outbox
# (bakery-relay --all) instead of leaving it to the alarms alone;
# RECOVER_WIPE=1: it first finishes a wipe (bakery-wipe --resume).

QUEUE_KIND=${QUEUE_KIND:-sqlite}
NATS_VISIBILITY=${NATS_VISIBILITY:-2}

fail() { echo "$MATRIX_NAME: $*" >&2; failures=$((failures + 1)); }

place() { # SANDBOX CUSTOMER [ARGS...]: places, records the id as placed
	local s=$1 c=$2 id
	shift 2
	id=$(bakery-order -s "$s" place --customer "$c" --day "$DAY" "$@" cardamom-bun=1 | jq -r .id) || return 1
	echo "$s $id" >>"$HOME_DIR.placed"
	echo "$id"
}
pay() { # SANDBOX ID: pays with the test gateway, records it as paid
	bakery-order -s "$1" pay "$2" >/dev/null && echo "$1 $2" >>"$HOME_DIR.paid"
}
sandboxes() { for d in "$BAKERY_HOME"/sandboxes/*/; do [ -d "$d" ] && basename "$d"; done; }

dead_letters() { # a paid order whose OrderPlaced and OrderPaid are refused
	local id
	bakery-fault set refuses:kitchen
	id=$(place default ada)
	pay default "$id"
	bakery-consume --retry-delay 0 >/dev/null # all four deliveries now
}

# On NATS, waits out the leases of killed consumers (the server's clock).
# shellcheck disable=SC2120 # tests/crash-matrix.sh passes one
lease_wait() {
	[ "$QUEUE_KIND" = nats ] || return 0
	sleep "${1:-$NATS_VISIBILITY}.2"
}

# The ordinary tools, with the clock moved past every lease and alarm,
# three rounds so that a redrive out of order (OrderPaid before
# OrderPlaced: the kitchen's 409) settles.
recover() {
	local round t s
	for round in 1 2 3; do
		t=$((T0 + 3600 * round))
		export BAKERY_NOW=$t
		lease_wait
		[ -z "${RECOVER_WIPE:-}" ] || bakery-wipe --all --resume >/dev/null
		for s in $(sandboxes); do
			bakery-fault -s "$s" clear refuses:kitchen >/dev/null
			bakery-fault -s "$s" clear queue-refuses >/dev/null
			[ -z "${RECOVER_RELAY_ALL:-}" ] || bakery-relay -s "$s" --all >/dev/null
		done
		bakery-relay --due >/dev/null
		bakery-consume --drain >>"$HOME_DIR.deliveries"
		bakery-dlq drain >/dev/null
		for s in $(sandboxes); do bakery-redrive -s "$s" --all >/dev/null; done
		bakery-consume --drain >>"$HOME_DIR.deliveries"
	done 2>>"$HOME_DIR.recover.err"
	export BAKERY_NOW=$T0
}

check() { # LABEL: the checker on the home, --drained; counts lost and twice
	local out rc
	out=$("$CHECKER" -v --drained --placed "$HOME_DIR.placed" --paid "$HOME_DIR.paid" \
		--deliveries "$HOME_DIR.deliveries" "$BAKERY_HOME" 2>"$HOME_DIR.check.err")
	rc=$?
	[ -n "$out" ] || out='{}'
	lost=$((lost + $(echo "$out" | jq '.lost // 0')))
	twice=$((twice + $(echo "$out" | jq '.applied_twice // 0')))
	stuck=$((${stuck:-0} + $(echo "$out" | jq '.stuck // 0')))
	echo "$1: $out"
	[ "$rc" -eq 0 ] || fail "$1: checker failed: $(cat "$HOME_DIR.check.err")"
}
