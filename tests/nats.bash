# Starts and stops real nats-servers for the tests: loopback only, a free
# port each, a temporary store, stopped by pid. Source it, then:
#   nats_start DIR            one JetStream node; sets NATS_PORT, NATS_PID
#   nats_restart DIR          starts it again (after a kill): the same port
#                             and store; sets NATS_PID
#   nats_cluster_start DIR    three nodes, cluster "bakery"; sets
#                             NATS_PORTS[0..2], NATS_PIDS[0..2], NATS_URL
#   nats_node_start DIR I     (re)starts node I of the cluster
#   nats_stop PID             SIGTERM, then waits for it to go

#
# The server: bin/nats-server, the nats-server >= 2.10 that make deps
# fetches (NATS_SERVER unset or "cached"); Debian 12's own 2.9 with
# NATS_SERVER=system; or NATS_SERVER=/path/to/nats-server. NATS_SERVER_BIN
# is the one chosen; a missing one fails the test that starts it, with a
# word on how to get it. NATS_SYNC=always (or a duration) starts every
# server with jetstream { sync_interval: NATS_SYNC } (2.10 and later): an
# fsync per write with always.
case ${NATS_SERVER:-cached} in
cached) NATS_SERVER_BIN="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/nats-server" ;;
system) NATS_SERVER_BIN=/usr/sbin/nats-server ;;
/*) NATS_SERVER_BIN=$NATS_SERVER ;;
*) NATS_SERVER_BIN="NATS_SERVER '$NATS_SERVER' is cached, system or an absolute path" ;;
esac

# Whether the chosen server is there; says how to get it when not.
nats_server_ready() {
	[ -x "$NATS_SERVER_BIN" ] && return 0
	echo "nats-server: $NATS_SERVER_BIN: missing (make deps fetches it; NATS_SERVER=system takes the system's)" >&2
	return 69
}

# A TCP port nothing listens on now, below the kernel's ephemeral range
# (ip_local_port_range): a port bind(0) gives is one an outgoing
# connection of a busy test may take before the server binds it, which
# once failed a cluster's start ("address already in use").
nats_free_port() {
	python3 -c '
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(max(1024, lo - 12000), lo)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port")'
}

# Waits until something accepts connections on port $1 (up to ~10 s).
nats_wait_port() {
	local i
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nats-server on port $1 did not come up" >&2
	return 1
}

# shellcheck disable=SC2034 # NATS_PID, NATS_URL: for the caller
nats_start() {
	local dir=$1
	mkdir -p "$dir/store"
	NATS_PORT=$(nats_free_port)
	nats_restart "$dir"
	NATS_URL="nats://127.0.0.1:$NATS_PORT"
}

# shellcheck disable=SC2034 # NATS_PID: for the caller
nats_restart() {
	local dir=$1
	local conf=()
	nats_server_ready || return
	if [ -n "${NATS_SYNC:-}" ]; then
		echo "jetstream { sync_interval: $NATS_SYNC }" >"$dir/sync.conf"
		conf=(-c "$dir/sync.conf")
	fi
	"$NATS_SERVER_BIN" "${conf[@]}" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$dir/store" \
		-l "$dir/server.log" &
	NATS_PID=$!
	nats_wait_port "$NATS_PORT"
}

nats_stop() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	return 0
}

# shellcheck disable=SC2034 # NATS_PIDS: for the caller
nats_node_start() {
	local dir=$1 i=$2 routes="" j
	for j in 0 1 2; do
		[ "$j" = "$i" ] && continue
		routes="${routes:+$routes,}nats://127.0.0.1:${NATS_CPORTS[$j]}"
	done
	mkdir -p "$dir/n$i"
	cat >"$dir/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${NATS_PORTS[$i]}
jetstream { store_dir: "$dir/n$i"${NATS_SYNC:+, sync_interval: $NATS_SYNC} }
cluster {
  name: bakery
  listen: 127.0.0.1:${NATS_CPORTS[$i]}
  routes: [ $(echo "$routes" | sed 's/,/, /g') ]
}
CONF
	nats_server_ready || return
	# Its log is the file: stdout not held, so that a $(...) of the
	# caller's does not wait for the server's end.
	"$NATS_SERVER_BIN" -c "$dir/n$i.conf" -l "$dir/n$i.log" >/dev/null &
	NATS_PIDS[$i]=$!
	nats_wait_port "${NATS_PORTS[$i]}"
}

# shellcheck disable=SC2034 # NATS_URL: for the caller
nats_cluster_start() {
	local dir=$1 i
	NATS_PORTS=() NATS_CPORTS=() NATS_PIDS=()
	for i in 0 1 2; do
		NATS_PORTS[$i]=$(nats_free_port)
		NATS_CPORTS[$i]=$(nats_free_port)
	done
	for i in 0 1 2; do
		nats_node_start "$dir" "$i"
	done
	NATS_URL="nats://127.0.0.1:${NATS_PORTS[0]},127.0.0.1:${NATS_PORTS[1]},127.0.0.1:${NATS_PORTS[2]}"
}

# nats_cluster_init DIR: nats_cluster_start, BAKERY_QUEUE exported at it,
# and bakery-queue init --replicas 3 once JetStream answers and knows three
# peers (the cluster has elected its meta leader and every route is up:
# until then the answer is 10005, no suitable peers for placement). Up to
# 60 s, for a cluster that starts beside make check's other files; when it
# never does, each node's last log lines say why.
nats_cluster_init() {
	local i
	nats_cluster_start "$1"
	export BAKERY_QUEUE=$NATS_URL
	for _ in $(seq 120); do
		bakery-queue init --replicas 3 >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	bakery-queue init --replicas 3 >/dev/null && return 0
	for i in 0 1 2; do
		echo "--- node n$i (pid ${NATS_PIDS[$i]}$(kill -0 "${NATS_PIDS[$i]}" 2>/dev/null || echo ', exited')):" >&2
		tail -5 "$1/n$i.log" >&2
	done
	return 1
}
