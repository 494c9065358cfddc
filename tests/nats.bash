# Starts and stops real nats-servers for the tests: loopback only, a free
# port each, a temporary store, stopped by pid. Source it, then:
#   nats_start DIR            one JetStream node; sets NATS_PORT, NATS_PID
#   nats_restart DIR          starts it again (after a kill): the same port
#                             and store; sets NATS_PID
#   nats_cluster_start DIR    three nodes, cluster "bakery"; sets
#                             NATS_PORTS[0..2], NATS_PIDS[0..2], NATS_URL
#   nats_node_start DIR I     (re)starts node I of the cluster
#   nats_cluster_init DIR [HOME]  the cluster started and formed, the
#                             queue's streams made (BAKERY_QUEUE exported)
#   nats_cluster_stop         stops every node of the cluster
#   nats_stream_leader STREAM prints the stream's leader (n0, n1 or n2)
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

# nats_cluster_init DIR [HOME]: nats_cluster_start, BAKERY_QUEUE exported
# at it, and bakery-queue init --replicas 3 (in HOME, else BAKERY_HOME)
# once JetStream answers and knows three peers (the cluster has elected
# its meta leader and every route is up: until then the answer is 10005,
# no suitable peers for placement). A cluster that has not formed 30 s
# after its start (seen beside make check's other files: a node that never
# hears of the meta leader, 10005 or 10008 for as long as it runs) is
# stopped, each node's last log lines said, and started afresh: three
# tries.
nats_cluster_init() {
	local dir=$1 try i home=()
	[ -z "${2:-}" ] || home=(-H "$2")
	for try in 1 2 3; do
		rm -rf "$dir"
		nats_cluster_start "$dir" || { nats_cluster_stop; continue; }
		export BAKERY_QUEUE=$NATS_URL
		for _ in $(seq 60); do
			bakery-queue "${home[@]}" init --replicas 3 >/dev/null 2>&1 &&
				return 0
			sleep 0.5
		done
		echo "nats: the cluster did not form in 30 s (try $try of 3)" >&2
		for i in 0 1 2; do
			echo "--- node n$i (pid ${NATS_PIDS[$i]}$(kill -0 "${NATS_PIDS[$i]}" 2>/dev/null || echo ', exited')):" >&2
			tail -5 "$dir/n$i.log" >&2
		done
		nats_cluster_stop
	done
	return 1
}

# nats_cluster_stop: every node of the cluster, stopped.
nats_cluster_stop() {
	local p
	for p in "${NATS_PIDS[@]:-}"; do [ -z "$p" ] || nats_stop "$p"; done
	NATS_PIDS=()
}

# nats_stream_leader STREAM: the name of the stream's leader (n0, n1 or
# n2) as node 0 says it, waiting up to 10 s while it has none.
nats_stream_leader() {
	local leader
	for _ in $(seq 50); do
		leader=$("$(dirname "${BASH_SOURCE[0]}")/nats-tool.py" \
			"127.0.0.1:${NATS_PORTS[0]}" leader "$1" 2>/dev/null) || leader=
		[[ "$leader" == n[012] ]] && { echo "$leader"; return 0; }
		sleep 0.2
	done
	echo "nats: stream $1 has no leader" >&2
	return 1
}
