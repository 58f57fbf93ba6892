#!/usr/bin/env bash
# sessions-wave.sh — what a wave of idle sessions leaves behind.
#
#   perf/sessions-wave.sh DIR BIN
#
# A fresh `BIN server` (Prometheus metrics on) with a 10k-znode tree: RSS
# and the runtime's memory before; two waves of 10,000 idle sessions
# (zkload sessions, timeout 10 s), each with its peak RSS and goroutines;
# RSS and memory 10 s and 40 s after the first closed, and 10 s after the
# second. ZKLOAD names zkload (default: zkload on PATH). Needs ulimit -n
# above 10,100.
set -euo pipefail
DIR=$1 BIN=$2
Z=${ZKLOAD:-zkload}
ulimit -n 20000
freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rm -rf "$DIR" && mkdir -p "$DIR/data"
port=$(freeport) mport=$(freeport)
printf 'tickTime=2000\ndataDir=%s\nclientPort=%s\nadmin.enableServer=false\nmaxClientCnxns=0\nmetricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider\nmetricsProvider.httpPort=%s\n' \
  "$DIR/data" "$port" "$mport" >"$DIR/zoo.cfg"
"$BIN" server "$DIR/zoo.cfg" >"$DIR/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
mem() {
  curl -s "127.0.0.1:$mport/metrics" |
    grep -E '^go_(memstats_(heap_alloc|heap_inuse|stack_inuse|other_sys)_bytes|goroutines) ' |
    awk '{printf "%s=%s ", $1, ($1 ~ /bytes/) ? sprintf("%.1fMB", $2/1048576) : $2}'
}
wave() {
  "$Z" sessions -servers "127.0.0.1:$port" -idle 10000 -session-timeout 10s -idle-window 5s -duration 3s \
    -tree-count 10000 >"$DIR/wave.out" 2>&1 &
  local zp=$! peak=0 gmax=0 r g
  while kill -0 "$zp" 2>/dev/null; do
    r=$(rss) g=$(curl -s "127.0.0.1:$mport/metrics" | awk '/^go_goroutines / {print int($2)}')
    ((r > peak)) && peak=$r
    ((g > gmax)) && gmax=$g
    sleep 0.5
  done
  echo "  peak: rss_kb=$peak goroutines=$gmax $(grep -o 'valid=[a-z]*' "$DIR/wave.out" | head -1)"
}
"$Z" fill -servers "127.0.0.1:$port" -count 10000 -size 100 -fanout 1000 >/dev/null
sleep 5
before=$(rss)
echo "before: rss_kb=$before $(mem)"
echo "wave 1:"; wave
sleep 10; echo "10 s after: rss_kb=$(rss)"
sleep 30; a=$(rss); echo "40 s after: rss_kb=$a (+$(((a - before) * 100 / before))%) $(mem)"
echo "wave 2:"; wave
sleep 10; a=$(rss); echo "10 s after: rss_kb=$a (+$(((a - before) * 100 / before))%) $(mem)"
