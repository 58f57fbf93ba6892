package replica

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// loseReadIndex makes the network ask lost, under its lock, about every
// ReadIndex request a member sends; lost reports whether to lose it.
func (n *network) loseReadIndex(lost func(from uint64) bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lose = func(from, _ uint64, kind uint8, data []byte) bool {
		var m raftpb.Message
		if kind != KindRaft || m.Unmarshal(data) != nil || m.Type != raftpb.MsgReadIndex {
			return false
		}
		return lost(from)
	}
}

func syncRequest() txn.Request {
	return txn.Request{Op: jute.OpSync, Record: &jute.PathRequest{Path: "/"}}
}

// Ref: paper section 2.2 (sync); issue "The ensemble" (every request is
// answered or failed). Raft sends a follower's ReadIndex to the leader
// once; when the link loses it, the follower asks again, and the sync
// completes rather than wait for a leader change.
func TestSyncAsksAgainWhenItsReadIndexIsLost(t *testing.T) {
	n, ms := startEnsemble(t, 3)
	f := follower(t, ms)
	first := true
	n.loseReadIndex(func(from uint64) bool {
		lose := first && from == f.r.ID()
		first = first && !lose
		return lose
	})
	if err := f.r.Submit(context.Background(), syncRequest(), 1); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 1); ev.Kind != Synced {
		t.Fatalf("sync whose first ReadIndex was lost: %v; want Synced", ev.Kind)
	}
}

// A sync whose ReadIndex never reaches the leader fails at its deadline
// (Config.RequestTicks), as a write does: its client sees ConnectionLoss
// and tries again, elsewhere if need be.
func TestSyncFailsAtItsDeadline(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) { c.RequestTicks = 40 })
	f := follower(t, ms)
	n.loseReadIndex(func(from uint64) bool { return from == f.r.ID() })
	if err := f.r.Submit(context.Background(), syncRequest(), 1); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 1); ev.Kind != Dropped {
		t.Fatalf("sync that never reached the leader: %v; want Dropped", ev.Kind)
	}
}

// The leader keeps one pending ReadIndex per context and ignores another
// with the same one. Two followers whose sync counters agree (here they
// start at the same number) still get one answer per ReadIndex: the
// context names the member. Each sync must complete on its first
// ReadIndex, so the test counts them; a long election timeout keeps the
// followers from asking again on a slow machine.
func TestSyncsOfTwoFollowersDoNotCollide(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) {
		c.Rand = func(int) int { return 7 }
		c.ElectionTicks = 100
	})
	lead := leader(t, ms)
	var fs []*member
	for _, m := range ms {
		if m != lead {
			fs = append(fs, m)
		}
	}
	asked := map[uint64]int{}
	n.loseReadIndex(func(from uint64) bool {
		asked[from]++
		return false
	})
	n.mu.Lock()
	n.latency = 20 * time.Millisecond // both followers' requests pending at the leader at once
	n.mu.Unlock()
	for round := uint64(1); round <= 5; round++ {
		for _, f := range fs {
			if err := f.r.Submit(context.Background(), syncRequest(), round); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range fs {
			if ev := f.await(t, round); ev.Kind != Synced {
				t.Fatalf("round %d: sync on %d: %v; want Synced", round, f.r.ID(), ev.Kind)
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, f := range fs {
		if asked[f.r.ID()] != 5 {
			t.Errorf("follower %d sent %d ReadIndex requests for 5 syncs; want one each", f.r.ID(), asked[f.r.ID()])
		}
	}
}

// readCtx is the context of this server's ReadIndex number n.
func readCtx(id, n uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, id), n)
}

// An answer to ReadIndex number n serves the syncs that began before n
// was asked, whichever asked it (a late answer to an earlier ask, or a
// later sync's), and none that began after: their index must be the
// leader's commit from a time after they began (linearizability).
func TestReadStateServesSyncsThatBeganBefore(t *testing.T) {
	r := &Replica{cfg: Config{ID: 2}}
	r.syncs = []syncWait{{tag: 1, first: 10}, {tag: 2, first: 12}, {tag: 3, first: 15}}
	indexes := func() []uint64 {
		var out []uint64
		for _, s := range r.syncs {
			out = append(out, s.index)
		}
		return out
	}
	steps := []struct {
		id, n, index uint64
		want         []uint64
	}{
		{3, 20, 500, []uint64{0, 0, 0}},     // another member's context
		{2, 12, 100, []uint64{100, 100, 0}}, // sync 3 began after 12 was asked
		{2, 11, 90, []uint64{100, 100, 0}},  // late: an answer already stands
		{2, 16, 120, []uint64{100, 100, 120}},
	}
	for i, st := range steps {
		r.readState(raft.ReadState{Index: st.index, RequestCtx: readCtx(st.id, st.n)})
		if got := indexes(); !slices.Equal(got, st.want) {
			t.Fatalf("step %d (member %d, number %d): indexes %v, want %v", i, st.id, st.n, got, st.want)
		}
	}
}
