package replica

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// TestInteractions runs the scripts in testdata/interactions: a group of
// cores stepped by hand, as raft's interaction tests do, with every event
// the members report printed in the order it happens. Regenerate the
// expected output with -rewrite. The commands (see ddEnv.handle):
//
//	start n=3                       members 1..n, each on its own MemFS
//	campaign id=1                   member 1 starts an election
//	stabilize                       deliver every queued message until none is left
//	tick [id=1] [n=1]               tick one member, or all
//	session id=2 tag=1 sid=7        member 2 proposes createSession 7
//	propose id=2 tag=2 sid=7 op=create path=/a [data=x] [version=-1] [n=1]
//	                                op: create, set, delete, sync; n copies
//	                                (tags tag, tag+1, ...) in one turn
//	pending                         the queued messages, raft ones decoded
//	drop from=2 to=1 kind=forward   lose the queued messages of a kind on a link
//	cut from=2 to=1 / heal          one-way partition / undo every cut
//	crash id=2 / restart id=2       lose what was not synced / start again
//	status                          each member's leader, term and applied zxid
func TestInteractions(t *testing.T) {
	datadriven.Walk(t, "testdata/interactions", func(t *testing.T, path string) {
		env := &ddEnv{t: t, cut: map[[2]uint64]bool{}, members: map[uint64]*ddMember{}}
		datadriven.RunTest(t, path, env.handle)
	})
}

type ddEnv struct {
	t       *testing.T
	members map[uint64]*ddMember
	ids     []uint64
	queue   []ddMsg
	cut     map[[2]uint64]bool
	out     strings.Builder
}

type ddMember struct {
	id    uint64
	fs    *vfs.MemFS
	state *txn.State
	r     *Replica
}

type ddMsg struct {
	from, to uint64
	kind     uint8
	data     []byte
}

type ddTransport struct {
	env  *ddEnv
	from uint64
}

func (tr ddTransport) Send(to uint64, kind uint8, data []byte) bool {
	if tr.env.cut[[2]uint64{tr.from, to}] {
		return false
	}
	tr.env.queue = append(tr.env.queue, ddMsg{tr.from, to, kind, bytes.Clone(data)})
	return true
}

func (tr ddTransport) SendStream(_ context.Context, to uint64, header []byte, body io.Reader) error {
	m := tr.env.members[to]
	if tr.env.cut[[2]uint64{tr.from, to}] || m.r == nil {
		return fmt.Errorf("link down")
	}
	return m.r.StepSnapshot(tr.from, header, body)
}

var kindNames = map[uint8]string{KindRaft: "raft", KindForward: "forward", KindActivity: "activity", KindNack: "nack"}

func (e *ddEnv) printf(format string, args ...any) { fmt.Fprintf(&e.out, format, args...) }

func (e *ddEnv) start(m *ddMember) {
	m.state = txn.NewState(tree.New())
	r, err := NewCore(Config{
		ID:            m.id,
		Logger:        slog.New(slog.DiscardHandler),
		ElectionTicks: 10,
		RequestTicks:  30,
		Now:           func() int64 { return 1_700_000_000_000 },
		State:         m.state,
		Prep:          txn.NewPrepper(m.state, txn.PrepConfig{}),
		OnApply:       func(ev Event) { e.event(m.id, ev) },
		FS:            m.fs,
		Dir:           "log",
		SnapDir:       "snap",
		SnapCount:     1000,
		SegmentSize:   64 << 10,
		Rand:          func(n int) int { return n - 1 },
		Voters:        e.ids,
		Transport:     ddTransport{e, m.id},
	})
	if err == nil {
		err = r.Start()
	}
	if err != nil {
		e.t.Fatalf("start %d: %v", m.id, err)
	}
	m.r = r
}

func (e *ddEnv) event(id uint64, ev Event) {
	switch ev.Kind {
	case Applied:
		e.printf("m%d applied %d tag=%d: %s -> %s\n", id, ev.Zxid, ev.Tag, ev.Txn.Type, ev.Result.Err.String())
	case Synced:
		e.printf("m%d synced tag=%d at %d\n", id, ev.Tag, ev.Zxid)
	case Dropped:
		e.printf("m%d dropped tag=%d\n", id, ev.Tag)
	case Restored:
		e.printf("m%d restored a snapshot at %d\n", id, ev.Zxid)
	}
}

func (e *ddEnv) member(d *datadriven.TestData) *ddMember {
	var id uint64
	d.ScanArgs(e.t, "id", &id)
	m := e.members[id]
	if m == nil || m.r == nil {
		e.t.Fatalf("%s: no running member %d", d.Pos, id)
	}
	return m
}

func (e *ddEnv) process(m *ddMember) {
	if err := m.r.Process(); err != nil {
		e.printf("m%d failed: %v\n", m.id, err)
	}
}

func (e *ddEnv) handle(t *testing.T, d *datadriven.TestData) string {
	e.t = t
	e.out.Reset()
	switch d.Cmd {
	case "start":
		var n int
		d.ScanArgs(t, "n", &n)
		for i := 1; i <= n; i++ {
			e.ids = append(e.ids, uint64(i))
		}
		for _, id := range e.ids {
			m := &ddMember{id: id, fs: vfs.NewMem()}
			e.members[id] = m
			e.start(m)
		}
	case "campaign":
		m := e.member(d)
		if err := m.r.Campaign(); err != nil {
			t.Fatal(err)
		}
		e.process(m)
	case "stabilize":
		for len(e.queue) > 0 {
			msg := e.queue[0]
			e.queue = e.queue[1:]
			m := e.members[msg.to]
			if m.r == nil || e.cut[[2]uint64{msg.from, msg.to}] {
				continue
			}
			m.r.Step(msg.from, msg.kind, msg.data)
			e.process(m)
		}
	case "tick":
		n := 1
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		ids := e.ids
		if d.HasArg("id") {
			ids = []uint64{e.member(d).id}
		}
		for range n {
			for _, id := range ids {
				if m := e.members[id]; m.r != nil {
					m.r.Tick()
					e.process(m)
				}
			}
		}
	case "session", "propose":
		m := e.member(d)
		var tag uint64
		var sid int64
		d.ScanArgs(t, "tag", &tag)
		d.ScanArgs(t, "sid", &sid)
		req := txn.Request{SessionID: sid}
		if d.Cmd == "session" {
			req.Op, req.Record = jute.OpCreateSession, &txn.CreateSession{TimeoutMs: 10000, Password: make([]byte, 16)}
		} else {
			req = e.request(t, d, req)
		}
		n := 1 // copies (tags tag, tag+1, ...) submitted before the turn
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &n)
		}
		for k := range uint64(n) {
			if err := m.r.Propose(req, tag+k); err != nil {
				e.printf("propose: %v\n", err)
			}
		}
		e.process(m)
	case "pending":
		for _, msg := range e.queue {
			e.printf("m%d->m%d %s", msg.from, msg.to, kindNames[msg.kind])
			var rm raftpb.Message
			if msg.kind == KindRaft && rm.Unmarshal(msg.data) == nil {
				e.printf(" %s entries=%d", rm.Type, len(rm.Entries))
			}
			e.printf("\n")
		}
	case "drop":
		var from, to uint64
		var kind string
		d.ScanArgs(t, "from", &from)
		d.ScanArgs(t, "to", &to)
		d.ScanArgs(t, "kind", &kind)
		n := len(e.queue)
		e.queue = slices.DeleteFunc(e.queue, func(m ddMsg) bool {
			return m.from == from && m.to == to && kindNames[m.kind] == kind
		})
		e.printf("dropped %d\n", n-len(e.queue))
	case "cut":
		var from, to uint64
		d.ScanArgs(t, "from", &from)
		d.ScanArgs(t, "to", &to)
		e.cut[[2]uint64{from, to}] = true
	case "heal":
		clear(e.cut)
	case "crash":
		m := e.member(d)
		m.r = nil
		m.fs = m.fs.CrashClone()
		e.queue = slices.DeleteFunc(e.queue, func(msg ddMsg) bool { return msg.to == m.id })
	case "restart":
		var id uint64
		d.ScanArgs(t, "id", &id)
		e.start(e.members[id])
	case "status":
		for _, id := range e.ids {
			m := e.members[id]
			if m.r == nil {
				e.printf("m%d down\n", id)
				continue
			}
			e.printf("m%d leader=%d term=%d applied=%d nodes=%d sessions=%d\n", id, m.r.Leader(), m.r.Term(),
				m.r.LastZxid(), m.state.Tree.NodeCount(), len(m.state.Sessions))
		}
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	if e.out.Len() == 0 {
		return "ok\n"
	}
	return e.out.String()
}

// request builds a propose command's request.
func (e *ddEnv) request(t *testing.T, d *datadriven.TestData, req txn.Request) txn.Request {
	var op, path, data string
	version := -1
	d.ScanArgs(t, "op", &op)
	if d.HasArg("path") {
		d.ScanArgs(t, "path", &path)
	}
	if d.HasArg("data") {
		d.ScanArgs(t, "data", &data)
	}
	if d.HasArg("version") {
		d.ScanArgs(t, "version", &version)
	}
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	switch op {
	case "create":
		req.Op, req.Record = jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte(data), ACL: acl}
	case "set":
		req.Op, req.Record = jute.OpSetData, &jute.SetDataRequest{Path: path, Data: []byte(data), Version: int32(version)}
	case "delete":
		req.Op, req.Record = jute.OpDelete, &jute.PathVersion{Path: path, Version: int32(version)}
	case "sync":
		req.Op, req.Record = jute.OpSync, &jute.PathRequest{Path: path}
	default:
		t.Fatalf("%s: unknown op %q", d.Pos, op)
	}
	return req
}
