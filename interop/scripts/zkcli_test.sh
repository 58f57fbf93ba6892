#!/usr/bin/env bash
# zkcli_test.sh HOST:PORT — drive Apache's zkCli.sh (ZooKeeper 3.8, Debian
# package "zookeeper") against a running server and compare what it prints
# with what it prints against Apache ZooKeeper 3.8 itself (the expected text
# below was recorded from Apache and then read line by line).
#
# The address may also come from $ZK_ADDR. It may list an ensemble's servers,
# host:port,host:port,...: zkCli gets the whole list (and connects to any of
# them), except the reconnect stage's proxy, which forwards to the first.
# $ZKCLI overrides the zkCli path.
#
# Stages (each reported as PASS/FAIL; the last line is "zkcli_test: passed N,
# failed M", a different form from run.sh's total, which is what CI counts):
#   batch       one JVM reads a command script on stdin: create/get/set/delete,
#               ls, ls -s, ls -R, stat, get -s, set -s, version checks, create
#               -e/-s/-e -s/-c/-t, sequence names, getEphemerals,
#               getAllChildrenNumber, sync, deleteall, digest ACLs with addauth,
#               getAcl/setAcl, and the error messages for each failure.
#   session2    a second session: the first session's ephemerals are gone, ACLs
#               are enforced for a client without (or with the wrong) auth,
#               getAcl needs READ or ADMIN.
#   exit-status one-shot mode (`zkCli.sh -server A cmd args`) exits 0 on
#               success and 1 on a failed command.
#   watches     a long-lived zkCli sets data, child, exists and persistent
#               recursive watches; a second invocation changes the nodes; the
#               first prints the WATCHER:: events in order.
#   reconnect   a zkCli behind tcp_proxy.py loses its connection; changes made
#               meanwhile fire its watches when it reconnects (SetWatches).
#   cleanup     with READ but not ADMIN, getAcl masks digest hashes as "user:x";
#               the auth scheme; deleteall of the test root.
#
# Apache behaviours the expected text pins down that are easy to get wrong:
# - a sequence suffix is the parent's count of child creations; deletes do not
#   advance it, though the reported cversion counts creates and deletes;
# - containers and TTL nodes report ephemeralOwner 0x0;
# - getAcl needs READ or ADMIN, and without ADMIN digest ids read "user:x";
# - an ACL check fails before a version check (Insufficient permission, not
#   "version No is not valid");
# - addauth with a wrong password succeeds (its id just matches nothing), and
#   the "auth" scheme expands to each of the session's digest ids once;
# - on reconnect, changes missed while away fire the one-shot watches (data,
#   then exists, then child), but not persistent ones.
#
# Output is normalised before comparison: times become <time>, zxids become
# Z1, Z2, ... by numeric rank (so equality and order are checked, not the
# absolute values, which differ between servers), session ids become S1, S2,
# ..., and the unique test root becomes /ROOT. Connection banners, SLF4J noise
# and the SyncConnected/Closed connection events are dropped. A batch's last
# line is "exit=N": in stdin mode zkCli exits with the status of the last
# command before quit (1 if it failed).
#
# ZKCLI_RECORD=1 prints each batch's normalised output, to re-record the
# expected text against Apache (interop/scripts/start-apache.sh).
set -euo pipefail
export TZ=UTC # zkCli prints times in the local zone

ADDR=${1:-${ZK_ADDR:-}}
[ -n "$ADDR" ] || { echo "usage: zkcli_test.sh HOST:PORT[,HOST:PORT...] (or set ZK_ADDR)" >&2; exit 2; }
FIRST=${ADDR%%,*}
ZKCLI=${ZKCLI:-/usr/share/zookeeper/bin/zkCli.sh}
[ -x "$ZKCLI" ] || { echo "zkcli_test: $ZKCLI not found (apt-get install zookeeper)" >&2; exit 2; }
PY=/usr/bin/python3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JVM_TIMEOUT=60 # seconds for any one zkCli invocation

work=$(mktemp -d)
root="/zkcli-$$-$RANDOM$RANDOM"
passed=0
failed=0
watcher_pid=
proxy_pid=
cleanup() {
	if [ -n "$watcher_pid" ]; then kill "$watcher_pid" 2>/dev/null || true; fi
	if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null || true; fi
	exec 3>&- 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# zkCli waits for a server forever, so check they all answer first.
if ! answer=$($PY - "$ADDR" 2>&1 <<'EOF'
import socket, sys
for addr in sys.argv[1].split(","):
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"ruok")
        s.settimeout(5)
        answer = s.recv(16).decode("ascii", "replace")
    if answer != "imok":
        sys.exit("%s answered %r" % (addr, answer))
print("imok")
EOF
) || [ "$answer" != imok ]; then
	echo "FAIL preflight (0s): ruok to $ADDR: ${answer##*$'\n'}"
	echo "zkcli_test: passed 0, failed 1"
	exit 1
fi

pass() { passed=$((passed + 1)); echo "PASS $1 ($2s)"; }
fail() { failed=$((failed + 1)); echo "FAIL $1 ($2s): $3"; }

# The normaliser described in the header. Reads raw zkCli output on stdin.
cat >"$work/norm.py" <<'EOF'
import re, sys

root = sys.argv[1]
drop = re.compile(r"^(SLF4J:|Connecting to |Welcome to ZooKeeper!|JLine support is |"
                  r"WATCHER::$|WatchedEvent state:(SyncConnected|Closed) type:None path:null$|Picked up )")
time_re = re.compile(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d [A-Z]+ (\d{4})\b")
zxid_re = re.compile(r"^([cmp]Zxid) = 0x([0-9a-f]+)$")
owner_re = re.compile(r"^ephemeralOwner = 0x([0-9a-f]+)$")

lines = [l.rstrip("\n") for l in sys.stdin]
lines = [l for l in lines if l.strip() and not drop.match(l)]
zxids = sorted({int(m.group(2), 16) for l in lines for m in [zxid_re.match(l)] if m})
owners = sorted({int(m.group(1), 16) for l in lines for m in [owner_re.match(l)] if m} - {0})
out = []
for l in lines:
    l = l.replace(root, "/ROOT")
    l = time_re.sub(lambda m: m.group(0) if m.group(1) == "1970" else "<time>", l)
    m = zxid_re.match(l)
    if m:
        l = "%s = Z%d" % (m.group(1), zxids.index(int(m.group(2), 16)) + 1)
    m = owner_re.match(l)
    if m and int(m.group(1), 16) != 0:
        l = "ephemeralOwner = S%d" % (owners.index(int(m.group(1), 16)) + 1)
    out.append(l)
print("\n".join(out))
EOF

# zkcli ARGS...: run zkCli against ADDR, bounded in time; stdin passes through.
zkcli() {
	timeout "$JVM_TIMEOUT" "$ZKCLI" -server "$ADDR" "$@"
}

# batch NAME EXPECTED: feed the command script on stdin (with /ROOT replaced
# by the test root) to one zkCli and compare its normalised output with
# EXPECTED.
batch() {
	local name=$1 expected=$2 start=$SECONDS rc=0
	sed "s#/ROOT#$root#g" >"$work/$name.cmds"
	zkcli <"$work/$name.cmds" >"$work/$name.raw" 2>&1 || rc=$?
	{
		$PY "$work/norm.py" "$root" <"$work/$name.raw"
		echo "exit=$rc"
	} >"$work/$name.out"
	printf '%s\n' "$expected" >"$work/$name.want"
	if [ -n "${ZKCLI_RECORD:-}" ]; then
		echo "=== $name"; cat "$work/$name.out"
	fi
	if [ "$rc" -ge 2 ]; then
		fail "$name" $((SECONDS - start)) "zkCli exited $rc (124: timed out); raw output:"
		cat "$work/$name.raw"
	elif ! diff -u --label "$name: expected (Apache 3.8)" --label "$name: got" \
		"$work/$name.want" "$work/$name.out" >"$work/$name.diff"; then
		fail "$name" $((SECONDS - start)) "output differs from Apache's:"
		cat "$work/$name.diff"
	else
		pass "$name" $((SECONDS - start))
	fi
}

# ---------------------------------------------------------------------------
# Stage 1: one session, most commands.
batch batch "$(cat <<'EOF'
Created /ROOT
Created /ROOT/a
Node already exists: /ROOT/a
data-a
cZxid = Z2
ctime = <time>
mZxid = Z2
mtime = <time>
pZxid = Z2
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 6
numChildren = 0
version No is not valid : /ROOT/a
cZxid = Z2
ctime = <time>
mZxid = Z3
mtime = <time>
pZxid = Z2
cversion = 0
dataVersion = 2
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 6
numChildren = 0
data-c
Node does not exist: /ROOT/none
Node does not exist: /ROOT/none
Node does not exist: /ROOT/none
Node does not exist: /ROOT/none
Node does not exist: /ROOT/none/child
Created /ROOT/empty
null
cZxid = Z1
ctime = <time>
mZxid = Z1
mtime = <time>
pZxid = Z4
cversion = 2
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 0
numChildren = 2
Created /ROOT/zeta
Created /ROOT/Beta
Created /ROOT/m10
Created /ROOT/m9
[Beta, a, empty, m10, m9, zeta]
Node not empty: /ROOT
Node does not exist: /ROOT/none
version No is not valid : /ROOT/zeta
[Beta, a, empty, m10, m9]
Created /ROOT/seq
Created /ROOT/seq/q-0000000000
Created /ROOT/seq/q-0000000001
Created /ROOT/seq/p-0000000002
Created /ROOT/seq/q-0000000003
[p-0000000002, q-0000000000, q-0000000003]
cZxid = Z5
ctime = <time>
mZxid = Z5
mtime = <time>
pZxid = Z6
cversion = 5
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 0
numChildren = 3
Created /ROOT/eph
Created /ROOT/es-0000000008
Ephemerals cannot have children: /ROOT/eph/child
e
cZxid = Z7
ctime = <time>
mZxid = Z7
mtime = <time>
pZxid = Z7
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = S1
dataLength = 1
numChildren = 0
[/ROOT/eph]
Created /ROOT/cont
Created /ROOT/cont/child
cZxid = Z8
ctime = <time>
mZxid = Z8
mtime = <time>
pZxid = Z9
cversion = 1
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 0
numChildren = 1
Created /ROOT/ttl
cZxid = Z10
ctime = <time>
mZxid = Z10
mtime = <time>
pZxid = Z10
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 3
numChildren = 0
Created /ROOT/r
Created /ROOT/r/x
Created /ROOT/r/x/y
/ROOT/r
/ROOT/r/x
/ROOT/r/x/y
2
0
Sync is OK
[]
'world,'anyone
: cdrwa
Created /ROOT/acl
Created /ROOT/acl/auth
'digest,'alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=
: cdrwa
Created /ROOT/acl/dig
Insufficient permission : /ROOT/acl/dig
Insufficient permission : /ROOT/acl/dig
Insufficient permission : /ROOT/acl/dig
'world,'anyone
: r
cZxid = Z11
ctime = <time>
mZxid = Z11
mtime = <time>
pZxid = Z11
cversion = 0
dataVersion = 0
aclVersion = 1
ephemeralOwner = 0x0
dataLength = 1
numChildren = 0
Insufficient permission : /ROOT/acl/auth
Insufficient permission : /ROOT/acl/auth
Insufficient permission : /ROOT/acl/auth
a
KeeperErrorCode = InvalidACL for /ROOT/acl/bad
Acl is not valid : /ROOT/acl/bad
Created /ROOT/acl/ip
'ip,'127.0.0.1
: cdrwa
ip-ok
exit=0
EOF
)" <<'EOF'
create /ROOT
create /ROOT/a data-a
create /ROOT/a again
get -s /ROOT/a
set /ROOT/a data-b
set -v 7 /ROOT/a x
set -s /ROOT/a data-c
get /ROOT/a
get /ROOT/none
set /ROOT/none x
stat /ROOT/none
ls /ROOT/none
create /ROOT/none/child
create /ROOT/empty
get /ROOT/empty
stat /ROOT
create /ROOT/zeta
create /ROOT/Beta
create /ROOT/m10
create /ROOT/m9
ls /ROOT
delete /ROOT
delete /ROOT/none
delete -v 3 /ROOT/zeta
delete -v 0 /ROOT/zeta
ls /ROOT
create /ROOT/seq
create -s /ROOT/seq/q- one
create -s /ROOT/seq/q- two
create -s /ROOT/seq/p- three
delete /ROOT/seq/q-0000000001
create -s /ROOT/seq/q- four
ls -s /ROOT/seq
create -e /ROOT/eph e
create -e -s /ROOT/es- es
create /ROOT/eph/child
get -s /ROOT/eph
getEphemerals /ROOT/eph
create -c /ROOT/cont
create /ROOT/cont/child
stat /ROOT/cont
create -t 600000 /ROOT/ttl ttl
stat /ROOT/ttl
create /ROOT/r
create /ROOT/r/x
create /ROOT/r/x/y
ls -R /ROOT/r
getAllChildrenNumber /ROOT/r
deleteall /ROOT/r/x
getAllChildrenNumber /ROOT/r
sync /ROOT
ls /ROOT/r
getAcl /ROOT/a
create /ROOT/acl
addauth digest alice:secret
create /ROOT/acl/auth a auth::cdrwa
getAcl /ROOT/acl/auth
create /ROOT/acl/dig d digest:bob:ikIaKsbtGweaHnb/jKn7OHqbunM=:r
getAcl /ROOT/acl/dig
get /ROOT/acl/dig
set /ROOT/acl/dig x
setAcl /ROOT/acl/auth world:anyone:r
getAcl -s /ROOT/acl/auth
set /ROOT/acl/auth x
setAcl /ROOT/acl/auth world:anyone:cdrwa
setAcl -v 0 /ROOT/acl/auth world:anyone:cdrwa
get /ROOT/acl/auth
create /ROOT/acl/bad x bogus:foo:cdrwa
create /ROOT/acl/ip ip-ok ip:127.0.0.1:cdrwa
getAcl /ROOT/acl/ip
get /ROOT/acl/ip
quit
EOF

# ---------------------------------------------------------------------------
# Stage 2: a new session. The first session quit, so its ephemerals are gone;
# it had auth, this one starts without.
batch session2 "$(cat <<'EOF'
[Beta, a, acl, cont, empty, m10, m9, r, seq, ttl]
a
Insufficient permission : /ROOT/acl/dig
Insufficient permission : /ROOT/acl/dig
KeeperErrorCode = InvalidACL for /ROOT/acl/noauth
Acl is not valid : /ROOT/acl/noauth
Insufficient permission : /ROOT/acl/dig
exit=1
EOF
)" <<'EOF'
ls /ROOT
get /ROOT/acl/auth
get /ROOT/acl/dig
getAcl /ROOT/acl/dig
create /ROOT/acl/noauth x auth::cdrwa
addauth digest bob:wrong
get /ROOT/acl/dig
quit
EOF

# ---------------------------------------------------------------------------
# Stage 3: one-shot mode exit status.
start=$SECONDS
rc_ok=0 rc_bad=0
zkcli create "$root/oneshot" hello >"$work/oneshot1.raw" 2>&1 || rc_ok=$?
zkcli get "$root/oneshot/none" >"$work/oneshot2.raw" 2>&1 || rc_bad=$?
got=$($PY "$work/norm.py" "$root" <"$work/oneshot1.raw"; $PY "$work/norm.py" "$root" <"$work/oneshot2.raw")
want=$'Created /ROOT/oneshot\nNode does not exist: /ROOT/oneshot/none'
if [ "$rc_ok" -eq 0 ] && [ "$rc_bad" -eq 1 ] && [ "$got" = "$want" ]; then
	pass exit-status $((SECONDS - start))
else
	fail exit-status $((SECONDS - start)) "want exit 0 then 1 and output:
$want
got exit $rc_ok then $rc_bad and output:
$got"
fi

# ---------------------------------------------------------------------------
# Stage 4: watches. A long-lived zkCli reads commands from a FIFO, sets the
# watches, and prints a marker once they are all registered (requests are
# answered in order); a second zkCli then changes the nodes.
start=$SECONDS
watch_ok=true
watch_err="events differ from Apache's"
prep=$(
	sed "s#/ROOT#$root#g" <<'EOF' | zkcli 2>&1
create /ROOT/w
create /ROOT/w/d d0
create /ROOT/w/rec
create /ROOT/w/ready watches-registered
quit
EOF
) || { watch_ok=false; watch_err="setting up /ROOT/w failed: $prep"; }

# wait_for FILE PATTERN COUNT SECONDS: wait until FILE has COUNT lines
# matching PATTERN; false at the deadline.
wait_for() {
	local deadline=$((SECONDS + $4))
	while (($(grep -c -- "$2" "$1" 2>/dev/null || true) < $3)); do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# Expected events, in the order Apache delivers them. A create fires the new
# node's exists watch before its parent's child watch.
want_events="$(cat <<'EOF'
WatchedEvent state:SyncConnected type:NodeDataChanged path:/ROOT/w/d
WatchedEvent state:SyncConnected type:NodeCreated path:/ROOT/w/new
WatchedEvent state:SyncConnected type:NodeChildrenChanged path:/ROOT/w
WatchedEvent state:SyncConnected type:NodeCreated path:/ROOT/w/rec/a
WatchedEvent state:SyncConnected type:NodeCreated path:/ROOT/w/rec/a/b
WatchedEvent state:SyncConnected type:NodeDataChanged path:/ROOT/w/rec/a
WatchedEvent state:SyncConnected type:NodeDeleted path:/ROOT/w/rec/a/b
WatchedEvent state:SyncConnected type:NodeDeleted path:/ROOT/w/rec/a
WatchedEvent state:SyncConnected type:NodeDataChanged path:/ROOT/w/d
EOF
)"
n_events=$(printf '%s\n' "$want_events" | wc -l)

if $watch_ok; then
	mkfifo "$work/w.fifo"
	zkcli <"$work/w.fifo" >"$work/w.raw" 2>&1 &
	watcher_pid=$!
	exec 3>"$work/w.fifo"
	sed "s#/ROOT#$root#g" >&3 <<'EOF'
get -w /ROOT/w/d
ls -w /ROOT/w
stat -w /ROOT/w/new
addWatch -m PERSISTENT_RECURSIVE /ROOT/w/rec
get /ROOT/w/ready
EOF
	if ! wait_for "$work/w.raw" '^watches-registered$' 1 30; then
		watch_ok=false
		watch_err="watcher did not register its watches within 30s"
	fi
fi
if $watch_ok; then
	# The one-shot set also checks that a watch fires for a change made by
	# another session; the batch makes the rest of the changes.
	sed "s#/ROOT#$root#g" >"$work/trigger.cmds" <<'EOF'
create /ROOT/w/new
create /ROOT/w/other
create /ROOT/w/rec/a
create /ROOT/w/rec/a/b
set /ROOT/w/rec/a x
delete /ROOT/w/rec/a/b
delete /ROOT/w/rec/a
quit
EOF
	trig=$(zkcli set "$root/w/d" d1 2>&1 && zkcli <"$work/trigger.cmds" 2>&1) ||
		trig="$trig
zkCli failed: $?"
	# The data watch on /ROOT/w/d was one-shot: set it again from the
	# watcher itself, then fire it once more.
	echo "get -w $root/w/d" >&3
	if ! wait_for "$work/w.raw" '^d1$' 1 30 || ! zkcli set "$root/w/d" d2 >/dev/null 2>&1; then
		watch_ok=false
		watch_err="re-arming the data watch failed"
	fi
	if ! wait_for "$work/w.raw" '^WatchedEvent state:SyncConnected type:Node' "$n_events" 30; then
		watch_ok=false
		watch_err="timed out waiting for $n_events events"
	fi
fi
if [ -n "$watcher_pid" ]; then
	echo quit >&3 || true
	exec 3>&-
	wait "$watcher_pid" || true
	watcher_pid=
fi
got_events=$(grep '^WatchedEvent state:SyncConnected type:Node' "$work/w.raw" 2>/dev/null |
	sed "s#$root#/ROOT#g" || true)
if $watch_ok && [ "$got_events" = "$want_events" ]; then
	pass watches $((SECONDS - start))
else
	fail watches $((SECONDS - start)) "$watch_err:
$(diff -u --label "watches: expected (Apache 3.8)" --label "watches: got" \
		<(printf '%s\n' "$want_events") <(printf '%s\n' "$got_events"))
--- raw output of the watching zkCli
$(cat "$work/w.raw" 2>/dev/null)
--- raw output of the zkCli making the changes
${trig:-}"
fi

# ---------------------------------------------------------------------------
# Stage 5: watches survive a reconnect. The watching zkCli talks through
# tcp_proxy.py; while the proxy refuses connections, another session changes
# the watched nodes; on reconnect the Java client re-sets its watches with
# the last zxid it saw (SetWatches), and the server fires, at once, the
# events for the changes it missed. Persistent watches are re-set too, but
# changes missed while away do not fire them. The proxy forwards to the
# first server only, so the watcher reconnects to the server it left.
start=$SECONDS
rc_ok=true
rc_err="events differ from Apache's"
coproc PROXY { exec $PY "$here/tcp_proxy.py" "$FIRST"; }
proxy_pid=$PROXY_PID
proxy_in=${PROXY[1]}
proxy_out=${PROXY[0]}
proxy_addr=
read -r -t 10 proxy_addr <&"$proxy_out" || true
# proxy CMD: send a command and wait for its "ok".
proxy() {
	local reply=
	echo "$1" >&"$proxy_in" && read -r -t 10 reply <&"$proxy_out" && [ "$reply" = ok ]
}
prep=$(sed "s#/ROOT#$root#g" <<'EOF' | zkcli 2>&1
create /ROOT/rc
create /ROOT/rc/d d0
create /ROOT/rc/p p0
create /ROOT/rc/ready reconnect-watches-registered
quit
EOF
) || { rc_ok=false; rc_err="setting up /ROOT/rc failed: $prep"; }
if [ -z "$proxy_addr" ]; then
	rc_ok=false
	rc_err="tcp_proxy.py did not start"
fi
if $rc_ok; then
	mkfifo "$work/rc.fifo"
	timeout "$JVM_TIMEOUT" "$ZKCLI" -server "$proxy_addr" <"$work/rc.fifo" >"$work/rc.raw" 2>&1 &
	watcher_pid=$!
	exec 3>"$work/rc.fifo"
	sed "s#/ROOT#$root#g" >&3 <<'EOF'
get -w /ROOT/rc/d
ls -w /ROOT/rc
stat -w /ROOT/rc/new
addWatch -m PERSISTENT /ROOT/rc/p
get /ROOT/rc/ready
EOF
	if ! wait_for "$work/rc.raw" '^reconnect-watches-registered$' 1 30; then
		rc_ok=false
		rc_err="watcher did not register its watches within 30s"
	elif ! proxy refuse || ! wait_for "$work/rc.raw" '^WatchedEvent state:Disconnected type:None' 1 30; then
		rc_ok=false
		rc_err="watcher did not see the disconnect"
	else
		sed "s#/ROOT#$root#g" >"$work/rc-trigger.cmds" <<'EOF'
set /ROOT/rc/d d1
create /ROOT/rc/new
set /ROOT/rc/p p1
quit
EOF
		trig=$(zkcli <"$work/rc-trigger.cmds" 2>&1) || true
		if ! proxy resume || ! wait_for "$work/rc.raw" '^WatchedEvent state:SyncConnected type:None' 2 30; then
			rc_ok=false
			rc_err="watcher did not reconnect"
		elif ! wait_for "$work/rc.raw" '^WatchedEvent state:SyncConnected type:Node' 3 30 ||
			! zkcli set "$root/rc/p" p2 >/dev/null 2>&1 ||
			! wait_for "$work/rc.raw" '^WatchedEvent state:SyncConnected type:Node' 4 30; then
			rc_ok=false
			rc_err="timed out waiting for the events"
		fi
	fi
fi
if [ -n "$watcher_pid" ]; then
	echo quit >&3 || true
	exec 3>&-
	wait "$watcher_pid" || true
	watcher_pid=
fi
exec {proxy_in}>&- # end of input stops the proxy
wait "$proxy_pid" 2>/dev/null || true
proxy_pid=
want_events="$(cat <<'EOF'
WatchedEvent state:Disconnected type:None path:null
WatchedEvent state:SyncConnected type:None path:null
WatchedEvent state:SyncConnected type:NodeDataChanged path:/ROOT/rc/d
WatchedEvent state:SyncConnected type:NodeCreated path:/ROOT/rc/new
WatchedEvent state:SyncConnected type:NodeChildrenChanged path:/ROOT/rc
WatchedEvent state:SyncConnected type:NodeDataChanged path:/ROOT/rc/p
EOF
)"
# The first SyncConnected is the initial connection; compare from the cut on.
got_events=$(grep '^WatchedEvent ' "$work/rc.raw" 2>/dev/null | sed "s#$root#/ROOT#g" |
	sed -n '/state:Disconnected/,$p' | grep -v 'state:Closed' || true)
if $rc_ok && [ "$got_events" = "$want_events" ]; then
	pass reconnect $((SECONDS - start))
else
	fail reconnect $((SECONDS - start)) "$rc_err:
$(diff -u --label "reconnect: expected (Apache 3.8)" --label "reconnect: got" \
		<(printf '%s\n' "$want_events") <(printf '%s\n' "$got_events"))
--- raw output of the watching zkCli (through the proxy)
$(cat "$work/rc.raw" 2>/dev/null)
--- raw output of the zkCli making the changes
${trig:-}"
fi

# ---------------------------------------------------------------------------
# Stage 6: deleteall of the whole test root (needs bob's and alice's auth to
# list the protected nodes' children).
batch cleanup "$(cat <<'EOF'
d
'digest,'bob:x
: r
Created /ROOT/acl/bob
'digest,'bob:ikIaKsbtGweaHnb/jKn7OHqbunM=
: cdrwa
Node does not exist: /ROOT
exit=1
EOF
)" <<'EOF'
addauth digest bob:pw
get /ROOT/acl/dig
getAcl /ROOT/acl/dig
create /ROOT/acl/bob x auth::cdrwa
getAcl /ROOT/acl/bob
addauth digest alice:secret
deleteall /ROOT
ls /ROOT
quit
EOF
echo "zkcli_test: passed $passed, failed $failed"
[ "$failed" -eq 0 ]
