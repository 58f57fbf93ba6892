#!/usr/bin/env bash
# failover.sh — leader failover time of Apache ZooKeeper and of a
# --server-cmd target, 3 servers each, with perf/failover (see its doc
# comment): kill -9 the leader, time to the first write through another
# server, repeated RUNS times, median. Uses ../shared/bench/ensemble.sh,
# so nothing else may use its ports (238xx-239xx) or /tmp/zkperf meanwhile.
#
#   perf/failover.sh [--runs 10] [--server-cmd 'CMD'] [--stop] [--out FILE]
#
# --stop freezes the leader (SIGSTOP) instead of killing it, so that no TCP
# reset tells the other servers (a hung or partitioned host).
# Default target command: /tmp/zoo-bench/zoo server. Output: every run and a
# RESULT line per target, also written to FILE if given.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNS=10
CMD="/tmp/zoo-bench/zoo server"
OUT=/dev/null
EXTRA=()
while (($#)); do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --server-cmd) CMD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --stop) EXTRA+=(-stop); shift ;;
    *) echo "failover.sh: unknown option $1" >&2; exit 1 ;;
  esac
done
BIN=$(mktemp -d)/failover
(cd "$HERE/.." && PATH=$PATH:/usr/local/go/bin go build -o "$BIN" ./perf/failover)
{
  echo "# apache"
  "$BIN" -runs "$RUNS" "${EXTRA[@]+"${EXTRA[@]}"}" 2>&1 || echo "failover (apache) exited with $?"
  echo "# $CMD"
  "$BIN" -runs "$RUNS" "${EXTRA[@]+"${EXTRA[@]}"}" -server-cmd "$CMD" 2>&1 || echo "failover ($CMD) exited with $?"
} | tee "$OUT"
