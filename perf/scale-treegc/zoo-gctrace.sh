#!/bin/bash
# --cand-cmd for scale.sh: Zoo with GODEBUG=gctrace=1, its collector's lines
# time-stamped into $GCLOG as well as the server log. exec keeps the PID the
# server's, as scale.sh needs.
GCLOG=${GCLOG:-/tmp/treegc/gctrace.log}
exec env GODEBUG=gctrace=1 "${ZOO_BIN:-zoo}" server "$1" 2> >(awk -W interactive '{ print strftime("%H:%M:%S"), $0; fflush() }' | tee -a "$GCLOG" >&2)
