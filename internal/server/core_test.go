package server

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// fakeEndpoint records what the Core sends it, decoded: "event <path>",
// "reply <xid> <code>", or "connect"; and "finish", "close".
type fakeEndpoint struct {
	id     uint64
	sid    int64
	got    []string
	closed bool
}

func (e *fakeEndpoint) ID() uint64         { return e.id }
func (e *fakeEndpoint) SessionID() int64   { return e.sid }
func (e *fakeEndpoint) AuthIDs() []jute.Id { return nil }
func (e *fakeEndpoint) Send(frame []byte)  { e.got = append(e.got, decodeFrame(frame)) }
func (e *fakeEndpoint) Finish(frame []byte) {
	if frame != nil {
		e.Send(frame)
	}
	e.got = append(e.got, "finish")
}
func (e *fakeEndpoint) Close()                                     { e.closed = true; e.got = append(e.got, "close") }
func (e *fakeEndpoint) Replied(int32, int64, time.Time, time.Time) {}

func decodeFrame(frame []byte) string {
	r := jute.NewReader(frame[4:])
	var h jute.ReplyHeader
	h.Decode(r)
	if h.Xid == jute.XidNotification {
		var ev jute.WatcherEvent
		ev.Decode(r)
		return "event " + ev.Path
	}
	return fmt.Sprintf("reply %d %d", h.Xid, int32(h.Err))
}

// fakeReplica takes proposals in order and reads from one state.
type fakeReplica struct {
	st       *txn.State
	zxid     int64
	proposed []uint64 // tags
	refuse   error
}

func (r *fakeReplica) Propose(_ txn.Request, tag uint64) error {
	if r.refuse != nil {
		return r.refuse
	}
	r.proposed = append(r.proposed, tag)
	return nil
}
func (r *fakeReplica) Read(f func(*txn.State, int64)) { f(r.st, r.zxid) }
func (r *fakeReplica) LastZxid() int64                { return r.zxid }

// newTestCore is a Core over one endpoint and a tree holding /a.
func newTestCore(t *testing.T) (*Core, *fakeReplica, *fakeEndpoint) {
	t.Helper()
	st := txn.NewState(tree.New())
	if _, err := st.Tree.CreateNode("/a", []byte("x"), openACLs, 0, 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	rep := &fakeReplica{st: st, zxid: 1}
	ep := &fakeEndpoint{id: 7, sid: 0x42}
	k := NewCore(CoreConfig{
		Replica: rep,
		Conn: func(id uint64) Endpoint {
			if id == ep.id && !ep.closed {
				return ep
			}
			return nil
		},
		Moved: func(int64, int32) bool { return true },
		Now:   func() time.Time { return time.UnixMilli(0) },
	})
	k.Open(ep)
	return k, rep, ep
}

var openACLs = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

func frameOf(xid int32, op jute.Op, rec jute.Record) []byte {
	return jute.AppendFrame(nil, &jute.RequestHeader{Xid: xid, Type: op}, rec)[4:]
}

// A write's watch events go before its reply, and the read sent behind
// the write is answered after it, from the state the write left (DESIGN
// decisions 6 and 7).
func TestCoreEventsReplyReads(t *testing.T) {
	k, rep, ep := newTestCore(t)
	k.watches.Add(watch.Watcher(ep.id), "/a", watch.ModeData)
	set := &jute.SetDataRequest{Path: "/a", Data: []byte("y"), Version: -1}
	if err := k.Handle(ep, frameOf(1, jute.OpSetData, set), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := k.Handle(ep, frameOf(2, jute.OpGetData, &jute.PathWatch{Path: "/a"}), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if len(ep.got) != 0 || len(rep.proposed) != 1 {
		t.Fatalf("before the apply: sent %v, proposed %v; want nothing sent, one proposal", ep.got, rep.proposed)
	}
	stat, err := rep.st.Tree.SetData("/a", []byte("y"), -1, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	rep.zxid = 2
	k.Apply(replica.Event{Kind: replica.Applied, Zxid: 2, Tag: rep.proposed[0], State: rep.st,
		Txn:    &txn.Txn{Type: jute.OpSetData},
		Result: &txn.Result{Stat: stat, Triggers: []txn.Trigger{{Path: "/a", Type: jute.EventNodeDataChanged}}}})
	want := []string{"event /a", "reply 1 0", "reply 2 0"}
	if !slices.Equal(ep.got, want) {
		t.Fatalf("sent %v, want %v", ep.got, want)
	}
	if w, r := k.reqs.size(); w != 0 || r != 0 {
		t.Fatalf("registry holds %d writes, %d reads after the apply; want none", w, r)
	}
}

// A dropped write fails with ConnectionLoss (its connection closes), and
// so do the reads behind it; an event of another tag answers nothing.
func TestCoreDropped(t *testing.T) {
	k, rep, ep := newTestCore(t)
	if err := k.Handle(ep, frameOf(1, jute.OpDelete, &jute.PathVersion{Path: "/a", Version: -1}), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := k.Handle(ep, frameOf(2, jute.OpGetData, &jute.PathWatch{Path: "/a"}), time.Time{}); err != nil {
		t.Fatal(err)
	}
	k.Apply(replica.Event{Kind: replica.Dropped, Tag: rep.proposed[0] + 100})
	if len(ep.got) != 0 {
		t.Fatalf("an event of another tag sent %v", ep.got)
	}
	k.Apply(replica.Event{Kind: replica.Dropped, Tag: rep.proposed[0]})
	if !ep.closed || slices.ContainsFunc(ep.got, func(s string) bool { return s != "close" }) {
		t.Fatalf("after the drop: closed %v, sent %v; want closed, no reply", ep.closed, ep.got)
	}
	k.Closed(ep) // as a closing connection does
	if w, r := k.reqs.size(); w != 0 || r != 0 {
		t.Fatalf("registry holds %d writes, %d reads; want none", w, r)
	}
}

// A write the replica refuses fails at once; nothing stays registered.
func TestCoreProposeFails(t *testing.T) {
	k, rep, ep := newTestCore(t)
	rep.refuse = errors.New("stopped")
	err := k.Handle(ep, frameOf(1, jute.OpDelete, &jute.PathVersion{Path: "/a", Version: -1}), time.Time{})
	if err == nil || !ep.closed {
		t.Fatalf("Handle = %v, closed %v; want the error and the connection closed", err, ep.closed)
	}
	if w, _ := k.reqs.size(); w != 0 {
		t.Fatalf("registry holds %d writes; want none", w)
	}
}

// The Core answers reads itself (read.go) for any Endpoint: the ACL check
// uses the endpoint's ids, and a watch is set only by a read that
// succeeds, or by exists on a missing node, as in Apache.
func TestCoreReads(t *testing.T) {
	k, rep, ep := newTestCore(t)
	secret := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "digest", ID: "bob:x"}}}
	if _, err := rep.st.Tree.CreateNode("/secret", []byte("s"), secret, 0, 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	w := watch.Watcher(ep.id)
	for i, tc := range []struct {
		op        jute.Op
		path      string
		wantReply string
		watched   bool // a data watch on path afterwards
	}{
		{jute.OpGetData, "/missing", "reply 1 -101", false}, // NoNode
		{jute.OpGetData, "/secret", "reply 2 -102", false},  // NoAuth
		{jute.OpExists, "/missing", "reply 3 -101", true},   // the exist watch
		{jute.OpGetData, "/a", "reply 4 0", true},
	} {
		xid := int32(i + 1)
		if err := k.Handle(ep, frameOf(xid, tc.op, &jute.PathWatch{Path: tc.path, Watch: true}), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got := ep.got[len(ep.got)-1]; got != tc.wantReply {
			t.Errorf("%v %s: %s, want %s", tc.op, tc.path, got, tc.wantReply)
		}
		if got := k.watches.Check(w, tc.path, jute.WatcherData); got != tc.watched {
			t.Errorf("%v %s: data watch set %v, want %v", tc.op, tc.path, got, tc.watched)
		}
	}
}
