package txn

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/zk"
)

// TestSequences runs the scripts in testdata/sequences: requests through
// prep and apply as the replica runs them (each txn takes the next zxid),
// with what every one did printed: its txn, its outcome, the stat it
// returns, the watch events it fires. The scripts pin ZooKeeper's
// semantics (versions, cversion and pzxid, sequence numbers, ephemerals,
// multi's all-or-nothing, containers and TTLs) in a form a reader can
// check against Apache. Regenerate the expected output with -rewrite. The
// commands (s=1 or s=2 names the harness's sessions; s=1 by default):
//
//	create path=/a [data=x] [mode=persistent|ephemeral|sequential|
//	       ephemeral-sequential|container|ttl|ttl-sequential] [ttl=ms] [acl=open|read] [s=1]
//	set path=/a [data=x] [version=-1] [s=1]
//	delete path=/a [version=-1] [s=1]
//	setacl path=/a acl=open|read [version=-1]
//	check path=/a version=N
//	multi [s=1]                       the ops, one per line, in the input
//	close [s=1]                       closeSession
//	deletecontainer path=/c           the cleanup the leader proposes
//	advance ms=N                      move the clock requests are stamped with
//	tree                              every node, depth first: stat and data
func TestSequences(t *testing.T) {
	datadriven.Walk(t, "testdata/sequences", func(t *testing.T, file string) {
		h := newHarness(t, PrepConfig{ExtendedTypes: true})
		datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
			h.t = t
			switch d.Cmd {
			case "tree":
				return printTree(h)
			case "advance":
				h.now += int64(intArg(t, d, "ms", 0))
				return ""
			case "multi":
				var ops []Request
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					cmd, args, _ := strings.Cut(strings.TrimSpace(line), " ")
					ops = append(ops, seqRequest(t, cmd, parseArgs(t, args)))
				}
				req := multi(ops...)
				req.SessionID = sessionArg(t, argMap(d))
				return doAndPrint(h, req)
			}
			args := argMap(d)
			req := seqRequest(t, d.Cmd, args)
			if req.Op != jute.OpDeleteContainer {
				req.SessionID = sessionArg(t, args)
			}
			return doAndPrint(h, req)
		})
	})
}

// argMap gives a command's key=value arguments.
func argMap(d *datadriven.TestData) map[string]string {
	m := map[string]string{}
	for _, a := range d.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	return m
}

// parseArgs reads the key=value words of one line of a multi.
func parseArgs(t *testing.T, s string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(s) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("argument %q is not key=value", w)
		}
		m[k] = v
	}
	return m
}

func intArg(t *testing.T, d *datadriven.TestData, key string, def int) int {
	v, ok := argMap(d)[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, v, err)
	}
	return n
}

func sessionArg(t *testing.T, args map[string]string) int64 {
	switch args["s"] {
	case "", "1":
		return sess1
	case "2":
		return sess2
	}
	t.Fatalf("s=%q: the harness has sessions 1 and 2", args["s"])
	return 0
}

func versionArg(t *testing.T, args map[string]string) int32 {
	v, ok := args["version"]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("version=%q: %v", v, err)
	}
	return int32(n)
}

// createModes maps a mode name to its op and flags.
var createModes = map[string]struct {
	op    jute.Op
	flags int32
}{
	"persistent":           {jute.OpCreate, jute.FlagPersistent},
	"ephemeral":            {jute.OpCreate, jute.FlagEphemeral},
	"sequential":           {jute.OpCreate, jute.FlagPersistentSequential},
	"ephemeral-sequential": {jute.OpCreate, jute.FlagEphemeralSequential},
	"container":            {jute.OpCreateContainer, jute.FlagContainer},
	"ttl":                  {jute.OpCreateTTL, jute.FlagPersistentWithTTL},
	"ttl-sequential":       {jute.OpCreateTTL, jute.FlagPersistentSequentialWithTTL},
}

func aclArg(t *testing.T, args map[string]string) []jute.ACL {
	switch args["acl"] {
	case "", "open":
		return open
	case "read":
		return readOnly
	}
	t.Fatalf("acl=%q: open or read", args["acl"])
	return nil
}

// seqRequest builds the request a command (or a multi's line) names.
func seqRequest(t *testing.T, cmd string, args map[string]string) Request {
	p := args["path"]
	switch cmd {
	case "create":
		mode := args["mode"]
		if mode == "" {
			mode = "persistent"
		}
		m, ok := createModes[mode]
		if !ok {
			t.Fatalf("mode=%q", mode)
		}
		if m.op == jute.OpCreateTTL {
			ttl, err := strconv.ParseInt(args["ttl"], 10, 64)
			if err != nil {
				t.Fatalf("ttl=%q: %v", args["ttl"], err)
			}
			return Request{Op: m.op, Record: &jute.CreateTTLRequest{Path: p, Data: bytesOf(args["data"]), ACL: aclArg(t, args), Flags: m.flags, TTL: ttl}}
		}
		return Request{Op: m.op, Record: &jute.CreateRequest{Path: p, Data: bytesOf(args["data"]), ACL: aclArg(t, args), Flags: m.flags}}
	case "set":
		return setData(p, args["data"], versionArg(t, args))
	case "delete":
		return del(p, versionArg(t, args))
	case "setacl":
		return setACL(p, aclArg(t, args), versionArg(t, args))
	case "check":
		return check(p, versionArg(t, args))
	case "close":
		return Request{Op: jute.OpCloseSession}
	case "deletecontainer":
		return deleteContainer(p)
	}
	t.Fatalf("unknown command %q", cmd)
	return Request{}
}

// doAndPrint runs req through prep and apply and says what it did.
func doAndPrint(h *harness, req Request) string {
	tx, r := h.do(req)
	var b strings.Builder
	fmt.Fprintf(&b, "zxid %d: %s -> %s\n", h.zxid, tx.Type, r.Err)
	if r.Path != "" {
		fmt.Fprintf(&b, "  path %s\n", r.Path)
	}
	if r.Stat != (jute.Stat{}) && r.Err == jute.OK {
		fmt.Fprintf(&b, "  stat %s\n", statString(r.Stat))
	}
	for i, m := range r.Multi {
		fmt.Fprintf(&b, "  op %d: %s %s\n", i, m.Op, m.Err)
	}
	for _, tr := range r.Triggers {
		fmt.Fprintf(&b, "  event %s %s\n", zk.EventType(tr.Type), tr.Path)
	}
	return b.String()
}

// statString shows the fields a script checks; zxids as numbers, the
// owner as the harness's session number.
func statString(s jute.Stat) string {
	owner := "-"
	switch s.EphemeralOwner {
	case sess1:
		owner = "s1"
	case sess2:
		owner = "s2"
	case 0:
	default:
		owner = fmt.Sprintf("%#x", s.EphemeralOwner)
	}
	return fmt.Sprintf("czxid=%d mzxid=%d pzxid=%d version=%d cversion=%d aversion=%d children=%d len=%d owner=%s",
		s.Czxid, s.Mzxid, s.Pzxid, s.Version, s.Cversion, s.Aversion, s.NumChildren, s.DataLength, owner)
}

// printTree lists every node below / but /zookeeper, depth first, in name
// order.
func printTree(h *harness) string {
	var b strings.Builder
	var walk func(p string)
	walk = func(p string) {
		data, st, err := h.st.Tree.Get(p)
		if err != nil {
			h.t.Fatalf("get %s: %v", p, err)
		}
		fmt.Fprintf(&b, "%s %q %s\n", p, data, statString(st))
		kids, _, err := h.st.Tree.Children(p)
		if err != nil {
			h.t.Fatalf("children %s: %v", p, err)
		}
		slices.Sort(kids)
		for _, k := range kids {
			if c := path.Join(p, k); c != "/zookeeper" {
				walk(c)
			}
		}
	}
	walk("/")
	return b.String()
}
