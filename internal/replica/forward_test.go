package replica

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// follower returns a member of ms that does not lead.
func follower(t *testing.T, ms []*member) *member {
	t.Helper()
	lead := leader(t, ms)
	for _, m := range ms {
		if m != lead {
			return m
		}
	}
	t.Fatal("no follower")
	return nil
}

// loseForwards makes the network lose the next n forwards from id.
func (n *network) loseForwards(id uint64, count int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lose = func(from, _ uint64, kind uint8, _ []byte) bool {
		if from == id && kind == KindForward && count > 0 {
			count--
			return true
		}
		return false
	}
}

// Ref: issue 13, defect 1; DESIGN decision 12 (the gap rule). A forward the
// link loses is reported: once a later forward of the same origin applies,
// every earlier one still waiting has failed (forwards of one origin
// commit in order), so its request is Dropped, before the later one is
// answered: the session's FIFO order holds.
func TestLostForwardFailsWhenALaterOneApplies(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) { c.RequestTicks = 1 << 30 }) // no deadline here
	f := follower(t, ms)
	ctx := context.Background()
	n.loseForwards(f.r.ID(), 1)
	if err := f.r.Submit(ctx, create("/lost"), 1); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Submit(ctx, create("/kept"), 2); err != nil {
		t.Fatal(err)
	}
	var order []string
	timeout := time.After(10 * time.Second)
	for len(order) < 2 {
		select {
		case ev := <-f.events:
			if ev.Tag == 1 || ev.Tag == 2 {
				order = append(order, fmt.Sprintf("%d:%v", ev.Tag, ev.Kind))
			}
		case <-timeout:
			t.Fatalf("events %v; the rest unanswered after 10s", order)
		}
	}
	if want := fmt.Sprintf("1:%v 2:%v", Dropped, Applied); fmt.Sprint(order[0], " ", order[1]) != want {
		t.Fatalf("events %v; want %s", order, want)
	}
}

// A forward lost with nothing after it fails at its deadline
// (Config.RequestTicks), and a sync behind it is not held up for ever.
func TestLostForwardFailsAtItsDeadline(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) { c.RequestTicks = 40 })
	f := follower(t, ms)
	ctx := context.Background()
	n.loseForwards(f.r.ID(), 1)
	if err := f.r.Submit(ctx, create("/lost"), 1); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Submit(ctx, txn.Request{Op: jute.OpSync, Record: &jute.PathRequest{Path: "/"}}, 2); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 1); ev.Kind != Dropped {
		t.Fatalf("the lost write: %v; want Dropped", ev.Kind)
	}
	if ev := f.await(t, 2); ev.Kind != Synced {
		t.Fatalf("the sync behind it: %v; want Synced", ev.Kind)
	}
	// The follower's writes go on.
	if err := f.r.Submit(ctx, create("/after"), 3); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 3); ev.Kind != Applied || ev.Result.Err != jute.OK {
		t.Fatalf("a write after: %v %+v", ev.Kind, ev.Result)
	}
}

// A leader that refuses a forward (its queue of requests to prep is full)
// tells the origin, which fails the request at once, and counts it: every
// request submitted gets its event, none waits for ever.
func TestRefusedForwardIsNacked(t *testing.T) {
	_, ms := startEnsemble(t, 3, func(c *Config) {
		c.MaxPending = 1
		c.RequestTicks = 1 << 30 // no deadline: only the nack can fail them
	})
	f := follower(t, ms)
	ctx := context.Background()
	const count = 300
	for i := range count {
		req := txn.Request{SessionID: session, Op: jute.OpCreate, Record: &jute.CreateRequest{
			Path: fmt.Sprintf("/n%d", i), ACL: open}}
		if err := f.r.Submit(ctx, req, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	// A refused request fails at once, maybe before earlier ones apply:
	// collect the events in whatever order they come.
	kinds := map[uint64]EventKind{}
	timeout := time.After(10 * time.Second)
	for len(kinds) < count {
		select {
		case ev := <-f.events:
			if ev.Tag >= 1 && ev.Tag <= count {
				if _, dup := kinds[ev.Tag]; dup {
					t.Fatalf("request %d answered twice", ev.Tag)
				}
				kinds[ev.Tag] = ev.Kind
			}
		case <-timeout:
			t.Fatalf("%d of %d requests unanswered after 10s", count-len(kinds), count)
		}
	}
	dropped := 0
	for tag, k := range kinds {
		switch k {
		case Dropped:
			dropped++
		case Applied:
		default:
			t.Fatalf("request %d: %v", tag, k)
		}
	}
	var refused int64
	for _, m := range ms {
		refused += m.r.RefusedForwards()
	}
	t.Logf("%d of %d forwards refused", refused, count)
	if refused == 0 {
		t.Fatal("no forward was refused: the test exercised no refusal")
	}
	if int64(dropped) < refused {
		t.Errorf("%d forwards refused but only %d requests dropped", refused, dropped)
	}
}

// A forward's bytes are what members of an older build expect: the record
// as a length-prefixed buffer of its encoding, -1 for none. A rolling
// upgrade runs both builds side by side.
func TestEncodeForwardLayout(t *testing.T) {
	auth := []jute.Id{{Scheme: "digest", ID: "u:x"}, {Scheme: "ip", ID: "127.0.0.1"}}
	for _, req := range []txn.Request{
		{SessionID: 5, Cxid: 9, Op: jute.OpSetData, Auth: auth,
			Record: &jute.SetDataRequest{Path: "/a", Data: make([]byte, 1024), Version: 3}},
		{SessionID: 5, Cxid: 10, Op: jute.OpCreate,
			Record: &jute.CreateRequest{Path: "/b", Data: []byte("x"), ACL: []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}}},
		{Op: jute.OpCreateSession, Record: &txn.CreateSession{TimeoutMs: 3000}},
		{Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/c", Version: -1}},
		{SessionID: 7, Op: jute.OpCloseSession},
	} {
		var w jute.Writer
		w.Long(42)
		w.Long(req.SessionID)
		w.Int(req.Cxid)
		w.Int(int32(req.Op))
		w.Int(int32(len(req.Auth)))
		for _, id := range req.Auth {
			w.String(id.Scheme)
			w.String(id.ID)
		}
		if req.Record == nil {
			w.Buffer(nil)
		} else {
			w.Buffer(jute.Marshal(req.Record))
		}
		got := encodeForward(42, &req)
		if string(got) != string(w.B) {
			t.Errorf("%v: forward is %x, want %x", req.Op, got, w.B)
		}
		seq, back, err := decodeForward(got)
		if err != nil || seq != 42 || back.Op != req.Op || (back.Record == nil) != (req.Record == nil) {
			t.Errorf("%v: decoded seq %d, op %v, record %v, err %v", req.Op, seq, back.Op, back.Record, err)
		}
	}
}
