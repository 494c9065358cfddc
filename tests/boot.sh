#!/bin/bash
# boot.sh — bakery as it is deployed: its Debian package installed with apt
# in a fresh Debian 12 root, booted with a real systemd, the units running
# as the one user bakery on one home while orders are placed and paid and
# the consumer is restarted and killed; then the checker must find every
# paid order's effects applied once.
#
#   tests/boot.sh DEB       make boot: builds DEB (make deb) and the checker
#                           first. Last line:
#                           boot: N orders, N unit restarts: N lost, N applied twice
#                           exit 0 only when nothing is lost, applied twice
#                           or stuck
#   BOOT_ORDERS=N           orders placed and paid (50), one every
#   BOOT_PACE=S             S seconds (0.3), so that the restarts and kills
#                           fall while the consumer works
#
# 1. The root: mmdebstrap --variant=minbase of bookworm (with -updates and
#    -security) from deb.debian.org, with systemd, dbus and the packages
#    the .deb depends on and recommends, and lighttpd, kept as .cache/boot/root-KEY.tar,
#    KEY a hash of what goes in (the mmdebstrap command line): made once,
#    unpacked into build/boot/root on every run.
# 2. systemd-nspawn --boot boots it. This machine's PID 1 is not systemd:
#    there is no machined to register with (--register=no) and no unit to
#    move into (--keep-unit), so machinectl and systemd-run -M do not
#    work; every command reaches the container through nsenter into the
#    namespaces of its systemd, the nspawn process's child.
# 3. Inside: apt install ./bakery_….deb (apt resolves Depends; the postinst
#    must enable nothing), the README's first example in a scratch home,
#    then `bakery-order gateway test` on /var/lib/bakery as bakery, and
#    systemctl enable --now bakery-consume, bakery-dlq and the relay and
#    wipe timers (the wipe only after the check when 10:00 UTC, when it
#    removes every order, would fall inside the run).
# 4. From outside, as bakery (runuser, as bakery(7) says to run commands by
#    hand): N orders placed and paid (every tenth through Stripe's webhook,
#    bakery-webhook.service: lighttpd as bakery, a signed event posted
#    on the container's own loopback), while every 2.5 s bakery-consume is
#    restarted (systemctl restart) or its main process killed (systemctl
#    kill -s KILL; Restart=always brings it back after 2 s). The restarts
#    counted are the consumer's main processes ended and replaced: the
#    distinct MainPIDs seen, less one. (Faster, the restarts would pass
#    systemd's start limit, 5 in 10 s, and leave the consumer failed: the
#    journal is read for that, and any other error of a bakery unit, below.)
# 5. A real wait: the relay timer fires every 30 s and re-sends an outbox a
#    killed consumer left. The clock is not moved: a container shares the
#    host's clock (CLOCK_REALTIME has no namespace), so setting it would
#    set the machine's, and BAKERY_NOW does not reach the units. The script
#    waits for a relay tick after the last kill (30 s at most), then until
#    bakery-status shows no outbox row and no message in either queue.
# 6. The checker (build/tests/checker, copied in) as bakery on the home,
#    --drained, with the orders placed and paid; every file of the home
#    owned by bakery; and bakery-doctor, run as bakery, passing the home.
# 6b. The console (bakery-console under the same lighttpd): an account made
#    as bakery(7) says, then signed in with curl and a cookie jar, the
#    seed's path walked (faults, order, pay, two dead letters, the
#    redrives, the card once); the checker again on the whole home.
# 7. apt remove stops the units; apt purge keeps the home, and removes it
#    with BAKERY_PURGE_HOME=yes.
#
# The container is powered off, or killed by its pid, at the end and on
# any failure (trap). build/boot/ keeps the log and, after a failure, the root.
set -u
TOP="$(cd "$(dirname "$0")/.." && pwd)"
DEB=${1:?usage: tests/boot.sh DEB}
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")
ORDERS=${BOOT_ORDERS:-50}
CHAOS_EVERY=${CHAOS_EVERY:-2.5}
PACE=${BOOT_PACE:-0.3}
W=$TOP/build/boot
ROOT=$W/root
CACHE=$TOP/.cache/boot
CHECKER=$TOP/build/tests/checker
PATH=/usr/sbin:/usr/bin:/sbin:/bin

fail() {
	echo "boot: error: $*" >&2
	exit 1
}
log() { echo "boot: $*" >&2; }

[ "$(id -u)" = 0 ] || fail "needs root (mmdebstrap, systemd-nspawn, nsenter)"
[ -f "$DEB" ] || fail "no package '$DEB': run make deb"
[ -x "$CHECKER" ] || fail "no checker '$CHECKER': run make build/tests/checker"
for t in mmdebstrap systemd-nspawn nsenter jq dpkg-deb curl openssl; do
	command -v "$t" >/dev/null || fail "$t missing: run make deps"
done

# --- 1. the root, cached by what goes in -----------------------------------
# The package's Depends and Recommends, first alternatives, no versions.
deps=$(dpkg-deb -f "$DEB" Depends Recommends | sed 's/^[A-Za-z-]*: //' |
	tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | sed '/^$/d' | sort -u)
include=$(printf '%s\n' systemd systemd-sysv dbus lighttpd $deps | sort -u | paste -sd, -)
mirrors=("deb http://deb.debian.org/debian bookworm main"
	"deb http://deb.debian.org/debian bookworm-updates main"
	"deb http://deb.debian.org/debian-security bookworm-security main")
mmdebstrap_args=(--variant=minbase --include="$include" bookworm)
key=$(printf '%s\n' "${mmdebstrap_args[@]}" "${mirrors[@]}" | sha256sum | cut -c1-16)
tarball=$CACHE/root-$key.tar
mkdir -p "$CACHE" "$W"
start=$(date +%s)
if [ ! -f "$tarball" ]; then
	log "making the root ($include) into $tarball"
	# mmdebstrap writes a tarball for a name ending in .tar.
	rm -rf "$CACHE/partial-$key.tar"
	mmdebstrap --quiet "${mmdebstrap_args[@]}" "$CACHE/partial-$key.tar" "${mirrors[@]}" \
		>"$W/mmdebstrap.log" 2>&1 || { tail -20 "$W/mmdebstrap.log" >&2; fail "mmdebstrap failed"; }
	mv "$CACHE/partial-$key.tar" "$tarball"
	# Roots made for other inputs are not used again.
	find "$CACHE" -maxdepth 1 -name 'root-*.tar' ! -name "root-$key.tar" -delete
fi
rm -rf "$ROOT"
mkdir -p "$ROOT"
tar -C "$ROOT" -xf "$tarball" || fail "cannot unpack $tarball"
echo bakery-boot >"$ROOT/etc/hostname"
cp "$DEB" "$ROOT/var/tmp/"
install -m 755 "$CHECKER" "$ROOT/usr/local/bin/bakery-checker"

# --- 2. boot ----------------------------------------------------------------
NSPAWN=
CPID=
CHAOS=
stop_container() {
	if [ -n "$CHAOS" ]; then
		touch "$W/stop"
		kill "$CHAOS" 2>/dev/null
		wait "$CHAOS" 2>/dev/null
		CHAOS=
	fi
	[ -n "$NSPAWN" ] || return 0
	if kill -0 "$NSPAWN" 2>/dev/null; then
		[ -z "$CPID" ] || timeout 10 nsenter -t "$CPID" -a systemctl poweroff >/dev/null 2>&1
		for _ in $(seq 40); do
			kill -0 "$NSPAWN" 2>/dev/null || break
			sleep 0.5
		done
		# Killing the container's init ends every process in its PID namespace.
		if kill -0 "$NSPAWN" 2>/dev/null; then
			[ -z "$CPID" ] || kill -KILL "$CPID" 2>/dev/null
			sleep 1
			kill -KILL "$NSPAWN" 2>/dev/null
		fi
	fi
	wait "$NSPAWN" 2>/dev/null
	NSPAWN=
}
trap 'stop_container' EXIT
trap 'exit 130' INT TERM

systemd-nspawn --quiet --boot --register=no --keep-unit --console=pipe --private-network \
	--machine=bakery-boot -D "$ROOT" </dev/null >"$W/console.log" 2>&1 &
NSPAWN=$!
# The container's init is the nspawn child in a PID namespace of its own:
# nspawn first forks an outer child in this PID namespace, which forks the
# init and exits, so the first child seen may be that one and soon gone.
host_pidns=$(readlink /proc/$$/ns/pid)
for _ in $(seq 300); do
	for p in $(cat "/proc/$NSPAWN/task/$NSPAWN/children" 2>/dev/null); do
		ns=$(readlink "/proc/$p/ns/pid" 2>/dev/null) || continue
		[ "$ns" = "$host_pidns" ] || CPID=$p
	done
	[ -n "$CPID" ] && break
	kill -0 "$NSPAWN" 2>/dev/null || break
	sleep 0.1
done
[ -n "$CPID" ] || { tail -20 "$W/console.log" >&2; fail "systemd-nspawn started no container"; }

# ct CMD...: CMD in the container as root, with a clean environment.
ct() {
	nsenter -t "$CPID" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}
# as_bakery CMD...: CMD as the units' user on the units' home.
as_bakery() {
	ct runuser -u bakery -- env BAKERY_HOME=/var/lib/bakery "$@"
}

state=
# Up to 3 minutes: a first boot beside make check's other stages is slow.
for _ in $(seq 360); do
	state=$(ct systemctl is-system-running 2>/dev/null)
	case $state in running | degraded) break ;; esac
	sleep 0.5
done
case $state in
running) ;;
degraded) log "the container booted degraded: $(ct systemctl --failed --no-legend --plain | tr '\n' ' ')" ;;
*)
	tail -20 "$W/console.log" >&2
	ct systemctl is-system-running >&2
	fail "the container's systemd (pid $CPID) did not reach running: '$state'"
	;;
esac
log "booted ($(ct systemctl --version | head -1)) in $(($(date +%s) - start)) s"

# --- 3. install, the README's example, the units ----------------------------
deb_name=$(basename "$DEB")
ct apt-get install -y "/var/tmp/$deb_name" >"$W/apt.log" 2>&1 ||
	{ tail -20 "$W/apt.log" >&2; fail "apt install ./$deb_name failed"; }
grep -q 'no unit is enabled' "$W/apt.log" || fail "the postinst did not say how to enable the units"
for u in bakery-consume.service bakery-dlq.service bakery-relay.timer bakery-wipe.timer; do
	s=$(ct systemctl is-enabled "$u" 2>/dev/null)
	[ "$s" = disabled ] || fail "$u is '$s' after installing: the package must enable nothing"
done
[ "$(ct stat -c '%U:%G %a' /var/lib/bakery)" = "bakery:bakery 750" ] ||
	fail "/var/lib/bakery is $(ct stat -c '%U:%G %a' /var/lib/bakery), not bakery:bakery 750"

# The README's first example, verbatim, in a scratch home of bakery's.
awk '/^```sh$/ { inside = 1; next } inside && /^```$/ { exit } inside' "$TOP/README.md" >"$ROOT/var/tmp/readme.sh"
[ -s "$ROOT/var/tmp/readme.sh" ] || fail "no example found in README.md"
ct runuser -u bakery -- bash -e /var/tmp/readme.sh >"$W/readme.log" 2>&1 ||
	{ tail -20 "$W/readme.log" >&2; fail "the README's first example failed"; }
grep -q '"confirmed"' "$W/readme.log" || fail "the README's example shows no confirmed kitchen card"

as_bakery bakery-order gateway test >/dev/null || fail "bakery-order gateway test failed"
# A sanitizer build (make check SANITIZE=1: the package depends on libasan):
# LeakSanitizer stops the world with ptrace, which the units' system call
# filter (@system-service) refuses, and the program then hangs as it
# exits (a relay run stuck in "activating", the timer never firing
# again). Leaks are checked by the rest of the suite; under the units,
# AddressSanitizer and UBSan only.
case $deps in *libasan*)
	ct mkdir -p /etc/systemd/system/service.d
	printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' |
		ct tee /etc/systemd/system/service.d/asan.conf >/dev/null
	ct systemctl daemon-reload
	log "a sanitizer build: leak checks off in the units (LeakSanitizer needs ptrace)" ;;
esac
units=(bakery-consume.service bakery-dlq.service bakery-relay.timer)
wipe_units=(bakery-wipe.timer bakery-wipe-retry.timer)
to_ten=$((($(date -u -d 'today 10:00' +%s) - $(date +%s) + 86400) % 86400))
wipe_later=
if [ "$to_ten" -lt 900 ]; then
	wipe_later=1
	log "10:00 UTC in $to_ten s: the wipe timers are enabled after the check"
else
	units+=("${wipe_units[@]}")
fi
ct systemctl enable --now "${units[@]}" >/dev/null 2>&1 || fail "systemctl enable --now ${units[*]} failed"
sleep 1
for u in bakery-consume bakery-dlq; do
	[ "$(ct systemctl is-active $u)" = active ] ||
		{ ct journalctl -u $u --no-pager | tail -20 >&2; fail "$u is not running"; }
done

# The webhook, as bakery on the same home: lighttpd from its unit, on the
# container's own loopback (--private-network), reached with the host's
# curl in the container's network namespace.
SECRET=whsec_boot_$$
printf '%s\n' "$SECRET" >"$ROOT/etc/bakery/webhook-secret"
ct chown bakery:bakery /etc/bakery/webhook-secret
ct chmod 600 /etc/bakery/webhook-secret
ct systemctl enable --now bakery-webhook >/dev/null 2>&1 || fail "bakery-webhook.service did not start"
for _ in $(seq 50); do
	nsenter -t "$CPID" -n curl -s -o /dev/null http://127.0.0.1:8080/ && break
	sleep 0.2
done
# webhook_pay ID: Stripe's payment_intent.succeeded for order ID, signed,
# posted to the webhook; fails unless it answers 200 "recorded".
webhook_pay() {
	local body t mac answer
	body=$(as_bakery bakery-order show "$1" | jq -c --arg o "$1" '{id: ("evt_" + $o),
		object: "event", type: "payment_intent.succeeded", created: now | floor,
		data: {object: {id: ("pi_" + $o), object: "payment_intent",
		amount: .total_cents, currency: "eur", status: "succeeded",
		metadata: {order_id: $o, sandbox: "default"}}}}') || return 1
	t=$(date +%s)
	mac=$(printf '%s.%s' "$t" "$body" | openssl dgst -sha256 -hmac "$SECRET" -r) || return 1
	answer=$(nsenter -t "$CPID" -n curl -s -X POST --data-binary "$body" \
		-H 'Content-Type: application/json' -H "Stripe-Signature: t=$t,v1=${mac%% *}" \
		http://127.0.0.1:8080/stripe/webhook)
	[ "$answer" = '{"status":200,"message":"recorded"}' ] || { echo "webhook: $answer" >&2; return 1; }
}

# --- 4. orders, while the consumer is restarted and killed -----------------
: >"$W/placed"
: >"$W/paid"
: >"$W/chaos"
: >"$W/mainpids"
rm -f "$W/stop"
chaos() {
	local i=0 pid
	while [ ! -e "$W/stop" ]; do
		sleep "$CHAOS_EVERY"
		# The consumer's main process, once systemd has started it again.
		for _ in $(seq 50); do
			pid=$(ct systemctl show -p MainPID --value bakery-consume)
			[ "${pid:-0}" != 0 ] && break
			sleep 0.1
		done
		echo "$pid" >>"$W/mainpids"
		if [ $((i % 2)) = 0 ]; then
			ct systemctl restart bakery-consume && echo restart >>"$W/chaos"
		else
			ct systemctl kill -s KILL bakery-consume && echo kill >>"$W/chaos"
		fi
		i=$((i + 1))
	done
}
chaos &
CHAOS=$!
day=$(date -u +%F)
for i in $(seq "$ORDERS"); do
	id=$(as_bakery bakery-order place --customer "c$((i % 7))" --day "$day" cardamom-bun=1 | jq -r .id) &&
		[ -n "$id" ] || { touch "$W/stop"; fail "order $i: place failed"; }
	echo "default $id" >>"$W/placed"
	sleep "$PACE"
	# Every tenth order is paid through Stripe's webhook, the others by
	# bakery-order pay.
	for _ in 1 2 3; do
		if [ $((i % 10)) = 0 ]; then
			webhook_pay "$id" 2>>"$W/pay.err"
		else
			as_bakery bakery-order pay "$id" >/dev/null 2>>"$W/pay.err"
		fi && { echo "default $id" >>"$W/paid"; break; }
		sleep 0.5
	done
done
# Two more restarts and kills at least after the last payment.
sleep "$(awk -v s="$CHAOS_EVERY" 'BEGIN { print s * 4 }')"
touch "$W/stop"
wait "$CHAOS"
CHAOS=
chaos_end=$(($(date +%s) * 1000000))
paid=$(wc -l <"$W/paid")
[ "$paid" = "$ORDERS" ] || fail "$paid of $ORDERS orders paid: $(tail -3 "$W/pay.err")"
ct systemctl show -p MainPID --value bakery-consume >>"$W/mainpids"
restarts=$(($(grep -v '^0*$' "$W/mainpids" | sort -u | wc -l) - 1))
log "$paid orders paid; bakery-consume restarted $(grep -c restart "$W/chaos") times and killed $(grep -c kill "$W/chaos") times: $restarts main processes replaced"
[ "$restarts" -gt 0 ] || fail "bakery-consume was never restarted"

# --- 5. a real relay tick, then drained -------------------------------------
drained='([.sandboxes[].outbox_rows] | add // 0) == 0 and
	([.queue[] | .ready + .leased + .delayed] | add // 0) == 0'
deadline=$(($(date +%s) + ${BOOT_DRAIN_TIMEOUT:-180}))
ticked=
while :; do
	last=$(ct systemctl show -p LastTriggerUSec --value bakery-relay.timer)
	last_us=$(($(date -d "$last" +%s 2>/dev/null || echo 0) * 1000000))
	[ "$last_us" -gt "$chaos_end" ] && ticked=1
	status=$(as_bakery bakery-status --json 2>/dev/null)
	[ -n "$ticked" ] && printf '%s\n' "$status" | jq -e "$drained" >/dev/null && break
	[ "$(date +%s)" -lt "$deadline" ] || {
		printf '%s\n' "$status" >&2
		ct systemctl status --no-pager bakery-relay.timer bakery-relay.service 2>&1 | tail -20 >&2
		ct journalctl -u bakery-relay --no-pager 2>&1 | tail -20 >&2
		fail "not drained in ${BOOT_DRAIN_TIMEOUT:-180} s (relay ticked after the kills: ${ticked:-no})"
	}
	sleep 2
done
relay=$(ct systemctl show -p Result --value bakery-relay.service)
[ "$relay" = success ] || { ct journalctl -u bakery-relay --no-pager | tail -20 >&2; fail "bakery-relay.service: $relay"; }
for u in bakery-consume bakery-dlq; do
	[ "$(ct systemctl is-active $u)" = active ] || fail "$u is not running after the orders"
done

# --- 6. the checker ----------------------------------------------------------
cp "$W/placed" "$W/paid" "$ROOT/var/tmp/"
chmod 644 "$ROOT/var/tmp/placed" "$ROOT/var/tmp/paid"
out=$(as_bakery /usr/local/bin/bakery-checker -v --drained --placed /var/tmp/placed --paid /var/tmp/paid \
	/var/lib/bakery 2>"$W/check.err")
rc=$?
[ -n "$out" ] || fail "the checker printed nothing: $(head -5 "$W/check.err")"
log "checker: $out"
lost=$(printf '%s\n' "$out" | jq '.lost // 0')
twice=$(printf '%s\n' "$out" | jq '.applied_twice // 0')
others=$(ct find /var/lib/bakery ! -user bakery)
[ -z "$others" ] || { log "files of the home not owned by bakery: $others"; rc=1; }
# bakery-doctor, as an operator runs it, passes the home the package laid
# out and the units wrote (its warnings, such as an unsynchronised clock
# in a container, do not fail it).
as_bakery bakery-doctor >"$W/doctor.log" 2>&1 ||
	{ log "bakery-doctor failed: $(grep -v '^ok' "$W/doctor.log" | head -5)"; rc=1; }
# The kills' own lines aside, no bakery unit logged an error.
errors=$(ct journalctl -u 'bakery-*' -p err --no-pager -q |
	grep -v "Main process exited, code=killed, status=9/KILL\|Failed with result 'signal'" | head -5)
[ -z "$errors" ] || { log "errors in the journal: $errors"; rc=1; }
if [ -n "$wipe_later" ]; then
	ct systemctl enable --now "${wipe_units[@]}" >/dev/null 2>&1 || rc=1
fi
[ "$(ct systemctl is-enabled bakery-wipe.timer)" = enabled ] || { log "the wipe timer is not enabled"; rc=1; }

# --- 6b. the console, through the container's lighttpd ----------------------
# The seed's path, as a person with curl and a cookie jar would walk it, in
# the sandbox of an account made as bakery(7) says: sign in, tick the
# kitchen's fault, order, pay, wait for the kitchen's two dead letters,
# untick, redrive the OrderPaid (back with 409), the OrderPlaced, the
# OrderPaid, and find the card on the board once, confirmed. The consumer
# gets short retry delays for this part (a drop-in; the default's 155 s
# a dead letter would be waited for twice); bakery-dlq.service drains.
CONSOLE=http://127.0.0.1:8080/console
JAR=$W/console.jar
# cc CURL-ARGS...: curl in the container's network, with the cookie jar,
# from the console's own origin.
cc() {
	nsenter -t "$CPID" -n curl -s -b "$JAR" -c "$JAR" -H 'Origin: http://127.0.0.1:8080' "$@"
}
# cpost PATH DATA: a form of the session; prints the status and Location.
cpost() {
	cc -o /dev/null -w '%{http_code} %header{location}' --data "csrf=$CSRF&$2" "$CONSOLE/$1"
}
# dead_errors: "TYPE ERROR" of each dead letter the console lists.
dead_errors() {
	cc "$CONSOLE/s/ada/dead" | sed -n 's/.*<td class="type">\([^<]*\)<.*<td class="error">\([^<]*\)<.*/\1 \2/p' | sort
}
# dead_id TYPE: the id of the dead letter of that type the console lists.
dead_id() {
	cc "$CONSOLE/s/ada/dead" | sed -n "s/.*<td class=\"type\">$1<.*<td class=\"id\">\([^<]*\)<.*/\1/p"
}
# until_true SECONDS WHAT CMD...: CMD until it succeeds, or fails naming WHAT.
until_true() {
	local end=$(($(date +%s) + $1)) what=$2
	shift 2
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || { log "console: timed out waiting for $what"; return 1; }
		sleep 1
	done
}
console_walk() {
	local pw=boot-console-$$ id paid_evt placed_evt cards
	ct mkdir -p /etc/systemd/system/bakery-consume.service.d
	printf '[Service]\nExecStart=\nExecStart=/usr/bin/bakery-consume --follow --retry-delay 1\n' |
		ct tee /etc/systemd/system/bakery-consume.service.d/boot-retry.conf >/dev/null
	ct systemctl daemon-reload && ct systemctl restart bakery-consume || return 1
	echo "$pw" | nsenter -t "$CPID" -a runuser -u bakery -- env BAKERY_HOME=/var/lib/bakery \
		bakery-console user add ada >/dev/null || { log "console: user add failed"; return 1; }
	rm -f "$JAR"
	[ "$(cc -o /dev/null -w '%{http_code}' --data-urlencode name=ada --data-urlencode "password=$pw" \
		"$CONSOLE/signin")" = 303 ] || { log "console: sign-in failed"; return 1; }
	CSRF=$(cc "$CONSOLE/s/ada/" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	[ -n "$CSRF" ] || { log "console: no CSRF token on the order page"; return 1; }
	[ "$(cpost s/ada/faults fault=refuses:kitchen)" = "303 /console/s/ada/faults?done=saved" ] ||
		{ log "console: ticking the kitchen's fault failed"; return 1; }
	id=$(cpost s/ada/orders "customer=ada&day=$day&qty.cardamom-bun=2&qty.country-loaf=1&delivery=" |
		sed -n 's|^303 /console/s/ada/orders/\(ord_[0-9a-f]*\)?done=placed$|\1|p')
	[ -n "$id" ] || { log "console: placing failed"; return 1; }
	[ "$(cpost "s/ada/orders/$id/pay" 'card=4242+4242+4242+4242')" = "303 /console/s/ada/orders/$id?done=paid" ] ||
		{ log "console: paying failed"; return 1; }
	until_true 60 "the order paid" eval 'cc "$CONSOLE/s/ada/orders/$id" | grep -q "<td id=\"status\">paid<"' || return 1
	until_true 120 "the kitchen's dead letters" eval \
		'[ "$(dead_errors)" = "$(printf "OrderPaid Kitchen answered 503\nOrderPlaced Kitchen answered 503")" ]' || return 1
	[ "$(cpost s/ada/faults '')" = "303 /console/s/ada/faults?done=saved" ] || { log "console: unticking failed"; return 1; }
	paid_evt=$(dead_id OrderPaid)
	placed_evt=$(dead_id OrderPlaced)
	[ "$(cpost s/ada/dead/redrive "one=$paid_evt")" = "303 /console/s/ada/dead?done=redriven" ] ||
		{ log "console: redriving the OrderPaid failed"; return 1; }
	until_true 120 "the OrderPaid back with 409" eval 'dead_errors | grep -q "^OrderPaid Kitchen answered 409"' || return 1
	[ "$(cpost s/ada/dead/redrive "one=$placed_evt")" = "303 /console/s/ada/dead?done=redriven" ] ||
		{ log "console: redriving the OrderPlaced failed"; return 1; }
	until_true 60 "the card placed" eval 'cc "$CONSOLE/s/ada/boards" | grep -q ">$id</a></td><td>[^<]*</td><td>[^<]*</td><td>placed<"' || return 1
	[ "$(cpost s/ada/dead/redrive "one=$paid_evt")" = "303 /console/s/ada/dead?done=redriven" ] ||
		{ log "console: redriving the OrderPaid again failed"; return 1; }
	until_true 60 "the card confirmed" eval 'cc "$CONSOLE/s/ada/boards" | grep -q ">$id</a></td><td>[^<]*</td><td>[^<]*</td><td>confirmed<"' || return 1
	cards=$(as_bakery bakery-show -s ada kitchen/board | jq --arg o "$id" '[.state.cards[] | select(.order == $o)] | map(.status) | join(",")' -r)
	[ "$cards" = confirmed ] || { log "console: the board holds '$cards' for $id"; return 1; }
	[ -z "$(dead_errors)" ] || { log "console: dead letters left: $(dead_errors)"; return 1; }
	[ "$(cpost signout '')" = "303 /console/signin" ] || { log "console: sign-out failed"; return 1; }
	log "console: signed in, order $id paid, 2 dead letters, 409, redriven, one confirmed card"
}
console_walk || rc=1
# The consumer as the package made it again: the purge below looks for
# what is left under /etc/systemd/system.
ct rm -rf /etc/systemd/system/bakery-consume.service.d
ct systemctl daemon-reload
out=$(as_bakery /usr/local/bin/bakery-checker -v --drained /var/lib/bakery 2>>"$W/check.err")
log "checker after the console: $out"
[ "$(printf '%s\n' "$out" | jq -c '[.lost, .applied_twice]')" = '[0,0]' ] || rc=1

# --- 7. remove and purge ------------------------------------------------------
# Removing stops the units and keeps the configuration; purging removes the
# configuration and the enable links and keeps the home, unless
# BAKERY_PURGE_HOME=yes (tried on a second install).
remove_check() {
	ct apt-get remove -y bakery >>"$W/apt.log" 2>&1 || { log "apt remove failed"; return 1; }
	[ "$(ct systemctl is-active bakery-consume)" = inactive ] || { log "bakery-consume runs after removal"; return 1; }
	ct test -f /etc/bakery/bakery.env || { log "removal took /etc/bakery/bakery.env"; return 1; }
	ct apt-get purge -y bakery >>"$W/apt.log" 2>&1 || { log "apt purge failed"; return 1; }
	! ct test -e /etc/bakery/bakery.env || { log "purge kept /etc/bakery/bakery.env"; return 1; }
	[ -z "$(ct find /etc/systemd/system -name 'bakery-*')" ] || { log "purge kept enable links"; return 1; }
	ct test -f /var/lib/bakery/queue.db || { log "purge took the home"; return 1; }
	ct apt-get install -y "/var/tmp/$deb_name" >>"$W/apt.log" 2>&1 || { log "reinstall failed"; return 1; }
	ct env BAKERY_PURGE_HOME=yes apt-get purge -y bakery >>"$W/apt.log" 2>&1 || { log "apt purge failed"; return 1; }
	! ct test -e /var/lib/bakery || { log "BAKERY_PURGE_HOME=yes kept the home"; return 1; }
}
remove_check || rc=1

stop_container
[ "$rc" = 0 ] && [ "$lost" = 0 ] && [ "$twice" = 0 ] && rm -rf "$ROOT"
log "total $(($(date +%s) - start)) s"
echo "boot: $ORDERS orders, $restarts unit restarts: $lost lost, $twice applied twice"
[ "$rc" = 0 ] && [ "$lost" = 0 ] && [ "$twice" = 0 ]
