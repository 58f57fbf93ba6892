#!/usr/bin/env bash
# start-apache.sh — run Apache ZooKeeper 3.8 (Debian package) as the oracle
# that the interop scripts are checked against.
#
#   start-apache.sh [start]      start a standalone server on a free loopback
#                                port in a fresh temp dir; print its address
#                                (host:port) on stdout once it answers ruok.
#   start-apache.sh stop ADDR    stop the server started for ADDR and remove
#                                its temp dir.
#   start-apache.sh cmd          print the command line that runs Apache's
#                                server given a zoo.cfg as its last argument
#                                (for .ci/run's ZOO_SERVER_CMD). The zoo.cfg
#                                may have server.N lines (an ensemble): its
#                                dataDir must then hold a myid file.
#
# State lives in ${TMPDIR:-/tmp}/zoo-apache.<port>/ (zoo.cfg, data/, log, pid).
# The config matches the one .ci/run writes for Zoo, so the scripts see the
# same server settings in both cases.
set -euo pipefail

jars=/usr/share/java
classpath="$jars/zookeeper.jar:$jars/zookeeper-jute.jar:$jars/slf4j-simple.jar"
java_cmd=(java -Xmx256m -cp "$classpath" org.apache.zookeeper.server.quorum.QuorumPeerMain)

die() { echo "start-apache.sh: $*" >&2; exit 1; }

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ruok ADDR: true if the server at ADDR answers "imok".
ruok() {
	/usr/bin/python3 - "$1" <<'EOF'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
try:
    with socket.create_connection((host, int(port)), timeout=1) as s:
        s.sendall(b"ruok")
        s.settimeout(1)
        sys.exit(0 if s.recv(16) == b"imok" else 1)
except OSError:
    sys.exit(1)
EOF
}

start() {
	[ -r "$jars/zookeeper.jar" ] || die "Apache ZooKeeper not installed (apt-get install zookeeper)"
	local port dir addr pid
	port=$(free_port)
	dir="${TMPDIR:-/tmp}/zoo-apache.$port"
	rm -rf "$dir"
	mkdir -p "$dir/data"
	addr="127.0.0.1:$port"
	cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
extendedTypesEnabled=true
EOF
	# setsid: the server must outlive this script and not share its
	# process group (a caller's Ctrl-C should not be needed to stop it).
	setsid "${java_cmd[@]}" "$dir/zoo.cfg" >"$dir/log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$dir/pid"
	local deadline=$((SECONDS + 30))
	until ruok "$addr"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$dir/log" >&2
			die "server exited during start-up (log above)"
		fi
		if ((SECONDS >= deadline)); then
			kill "$pid" 2>/dev/null || true
			cat "$dir/log" >&2
			die "server did not answer ruok within 30s (log above)"
		fi
		sleep 0.2
	done
	echo "$addr"
}

stop() {
	local addr=${1:?usage: start-apache.sh stop HOST:PORT}
	local port=${addr##*:}
	local dir="${TMPDIR:-/tmp}/zoo-apache.$port"
	[ -f "$dir/pid" ] || die "no server started for $addr (no $dir/pid)"
	local pid
	pid=$(cat "$dir/pid")
	if kill "$pid" 2>/dev/null; then
		local deadline=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}

case "${1:-start}" in
start) start ;;
stop) stop "${2:-}" ;;
cmd) printf '%q ' "${java_cmd[@]}"; echo ;;
*) die "usage: start-apache.sh [start] | stop HOST:PORT | cmd" ;;
esac
