package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

var open = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// start runs a one-voter replica whose events go to the returned channel.
func start(t *testing.T) (*Replica, <-chan Event) {
	t.Helper()
	events := make(chan Event, 1024)
	state := txn.NewState(tree.New())
	r, err := New(Config{
		Tick:    10 * time.Millisecond,
		State:   state,
		Prep:    txn.NewPrepper(state, txn.PrepConfig{}),
		OnApply: func(ev Event) { events <- ev },
		Now:     func() int64 { return 1000 },
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		r.Run()
		close(done)
	}()
	t.Cleanup(func() {
		r.Stop()
		<-done
	})
	// Requests need a live session; its event is untagged.
	if err := r.Submit(context.Background(), txn.Request{SessionID: session, Op: jute.OpCreateSession,
		Record: &txn.CreateSession{TimeoutMs: 30000, Password: make([]byte, 16)}}, 0); err != nil {
		t.Fatal(err)
	}
	return r, events
}

const session = 0x100

func create(path string) txn.Request {
	return txn.Request{SessionID: session, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: path, ACL: open}}
}

// next returns the next event with a tag, skipping untagged ones.
func next(t *testing.T, events <-chan Event) Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Tag != 0 {
				return ev
			}
		case <-deadline:
			t.Fatal("no event within 10s")
		}
	}
}

// Ref: DESIGN decision 4: a txn's zxid is its raft index, and txns apply
// in the order they were submitted (FIFO through prep and the log).
func TestSubmittedWritesApplyInOrder(t *testing.T) {
	r, events := start(t)
	const n = 200
	for i := 1; i <= n; i++ {
		if err := r.Submit(context.Background(), create(fmt.Sprintf("/n%d", i)), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	for i := 1; i <= n; i++ {
		ev := next(t, events)
		if ev.Kind != Applied || ev.Tag != uint64(i) {
			t.Fatalf("event %d: kind %v tag %d; want Applied tag %d", i, ev.Kind, ev.Tag, i)
		}
		if ev.Result.Err != jute.OK || ev.Result.Path != fmt.Sprintf("/n%d", i) {
			t.Fatalf("event %d: result %+v", i, ev.Result)
		}
		if ev.Zxid <= last {
			t.Fatalf("event %d: zxid %d after %d", i, ev.Zxid, last)
		}
		last = ev.Zxid
	}
	if got := r.LastZxid(); got != last {
		t.Errorf("LastZxid %d; want %d", got, last)
	}
	r.Read(func(s *txn.State, zxid int64) {
		st, ok := s.Tree.Stat(fmt.Sprintf("/n%d", n))
		if !ok || st.Czxid != last || zxid != last {
			t.Errorf("last node stat %+v ok=%v at zxid %d; want czxid %d", st, ok, zxid, last)
		}
	})
}

// Ref: paper section 2.2, sync: its reply comes after every write that
// was committed before it.
func TestSyncAnswersAfterEarlierWrites(t *testing.T) {
	r, events := start(t)
	ctx := context.Background()
	if err := r.Submit(ctx, create("/a"), 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Submit(ctx, txn.Request{SessionID: session, Op: jute.OpSync, Record: &jute.PathRequest{Path: "/"}}, 2); err != nil {
		t.Fatal(err)
	}
	w := next(t, events)
	s := next(t, events)
	if w.Kind != Applied || w.Tag != 1 || s.Kind != Synced || s.Tag != 2 {
		t.Fatalf("events %v/%d then %v/%d; want Applied/1 then Synced/2", w.Kind, w.Tag, s.Kind, s.Tag)
	}
	if s.Zxid < w.Zxid {
		t.Errorf("sync answered at zxid %d, before the write's %d", s.Zxid, w.Zxid)
	}
}

// A failing request is still a txn (an ErrorTxn): it is applied in order
// and its error is the result.
func TestFailedRequestIsApplied(t *testing.T) {
	r, events := start(t)
	if err := r.Submit(context.Background(), create("/missing/child"), 7); err != nil {
		t.Fatal(err)
	}
	ev := next(t, events)
	if ev.Kind != Applied || ev.Result.Err != jute.NoNode {
		t.Fatalf("event %v, result %+v; want Applied with NoNode", ev.Kind, ev.Result)
	}
}

func TestSubmitAfterStop(t *testing.T) {
	r, _ := start(t)
	r.Stop()
	if err := r.Submit(context.Background(), create("/late"), 1); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit after Stop: %v; want ErrStopped", err)
	}
	r.Stop() // idempotent
}

func TestLeaderServesPromptly(t *testing.T) {
	r, _ := start(t)
	deadline := time.Now().Add(5 * time.Second)
	for !r.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("a one-voter replica did not lead within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// entryData's one allocation is the entry itself: the txn is encoded into
// the replica's scratch, and the entry decodes back to the txn.
func TestEntryDataAllocatesTheEntryOnly(t *testing.T) {
	r := &Replica{}
	tx := &txn.Txn{SessionID: 1, Cxid: 2, Time: 3, Type: jute.OpSetData,
		Body: &txn.SetDataTxn{Path: "/a", Data: bytes.Repeat([]byte("d"), 1024), Version: 4}}
	var data []byte
	allocs := testing.AllocsPerRun(100, func() { data = r.entryData(5, 6, tx) })
	if allocs != 1 {
		t.Errorf("entryData allocated %v times, want 1", allocs)
	}
	origin, tag, body, err := OpenEnvelope(data)
	if err != nil || origin != 5 || tag != 6 {
		t.Fatalf("OpenEnvelope = %d, %d, %v", origin, tag, err)
	}
	if !bytes.Equal(body, tx.Marshal()) {
		t.Fatalf("entry body %x, want the txn's encoding", body)
	}
}

func TestEnvelope(t *testing.T) {
	b := append(appendEnvelope(nil, 3, 42), "txn!"...)
	origin, tag, body, err := OpenEnvelope(b)
	if err != nil || origin != 3 || tag != 42 || string(body) != "txn!" {
		t.Fatalf("OpenEnvelope = %d, %d, %q, %v", origin, tag, body, err)
	}
	if _, _, _, err := OpenEnvelope(b[:envelopeHeader-1]); !errors.Is(err, ErrShortEnvelope) {
		t.Fatalf("short envelope: %v", err)
	}
}
