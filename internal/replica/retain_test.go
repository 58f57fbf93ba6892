package replica

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/vfs"
)

// Ref: issue 17 (a loaded follower catches up without losing a client
// connection): a follower that falls more than TrailingEntries behind
// while it is briefly cut off, or too slow to keep up, still gets the
// entries it lacks by append, not a snapshot: the leader keeps them in
// its log for it (read back from the WAL: memory holds the newest
// TrailingEntries only). Once it has them, the leader drops them.
func TestRetainLaggingFollowerCatchesUpByAppend(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) {
		c.TrailingEntries = 20
		c.SnapCount = 40
		c.LaggardTicks = math.MaxInt32 // a pause of any length
	})
	lead, f := isolateFollower(t, n, ms)
	writeN(t, lead, "/a", 300, 1)
	// The leader has snapshotted well past the follower and TrailingEntries,
	// yet keeps what the follower needs.
	waitFor(t, "a leader snapshot past the follower's trailing entries", func() bool {
		return lead.r.snapIndex() > matchOf(t, lead, f.r.ID())+100
	})
	need := matchOf(t, lead, f.r.ID()) + 1
	if first := lead.r.firstIndex(); first > need {
		t.Fatalf("the leader's log starts at %d; the follower needs %d", first, need)
	}
	n.isolate(f.r.ID(), false)
	converge(t, ms)
	n.mu.Lock()
	streams := n.streams
	n.mu.Unlock()
	if streams != 0 {
		t.Fatalf("%d snapshot streams sent; the follower should have caught up by append", streams)
	}
	if restoredSeen(f) {
		t.Fatal("the follower installed a snapshot")
	}
	// Caught up, the follower needs nothing old: the kept entries go at
	// the next try, an election timeout later at most.
	waitFor(t, "the leader dropping the entries kept", func() bool {
		return lead.r.firstIndex() > need
	})
}

// Ref: issue 17: what the leader keeps for a lagging follower is bounded
// in bytes (RetainBytes); one lagging further gets a snapshot, as before,
// and the leader's log holds no more than the bound beyond
// TrailingEntries.
func TestRetainBoundedInBytes(t *testing.T) {
	const bound = 4 << 10
	n, ms := startEnsemble(t, 3, func(c *Config) {
		c.TrailingEntries = 20
		c.SnapCount = 40
		c.LaggardTicks = math.MaxInt32
		c.RetainBytes = bound
	})
	lead, f := isolateFollower(t, n, ms)
	writeN(t, lead, "/b", 300, 1)
	need := matchOf(t, lead, f.r.ID()) + 1
	// A snapshot's marker is written on the snapshot goroutine and the
	// loop compacts behind it a turn later, so a reading between the two
	// sees the newest snapshot's trailing entries not yet dropped: wait
	// for a reading within the bound, which unbounded retention never gives.
	var kept int64
	var first, want uint64
	waitFor(t, "the leader compacting past the follower, within the bound", func() bool {
		snapIdx := lead.r.snapIndex()
		first, want = lead.r.firstIndex(), snapIdx-20
		kept = 0
		if first <= want {
			kept = lead.r.entryBytes(first, want)
		}
		return first > need && kept <= bound
	})
	t.Logf("the leader keeps %d bytes in (%d, %d] beyond its trailing entries; the bound is %d", kept, first-1, want, bound)
	n.isolate(f.r.ID(), false)
	converge(t, ms)
	n.mu.Lock()
	streams := n.streams
	n.mu.Unlock()
	if streams == 0 {
		t.Fatal("the follower caught up without a snapshot although it lagged beyond the bound")
	}
	awaitKind(t, f, Restored)
}

// Ref: issue 17: a follower silent for longer than LaggardTicks is not
// waited for: the leader compacts, and it gets a snapshot when it returns.
func TestRetainNotForASilentFollower(t *testing.T) {
	n, ms := startEnsemble(t, 3, func(c *Config) {
		c.TrailingEntries = 20
		c.SnapCount = 40
		c.LaggardTicks = 20 // 100 ms
	})
	lead, f := isolateFollower(t, n, ms)
	writeN(t, lead, "/c", 300, 1)
	need := matchOf(t, lead, f.r.ID()) + 1
	waitFor(t, "the leader compacting past the silent follower", func() bool {
		return lead.r.firstIndex() > need
	})
	// The other follower too (it compacts after its own snapshot): on a
	// loaded machine it may lead by the time f returns.
	waitFor(t, "every other member compacting past the silent follower", func() bool {
		for _, m := range ms {
			if m != f && m.r.firstIndex() <= need {
				return false
			}
		}
		return true
	})
	n.isolate(f.r.ID(), false)
	converge(t, ms)
	awaitKind(t, f, Restored)
}

// isolateFollower cuts a follower off once the leader has heard from it
// (its progress has a Match), and returns the leader and that follower.
func isolateFollower(t *testing.T, n *network, ms []*member) (lead, f *member) {
	t.Helper()
	lead = leader(t, ms)
	f = followerOf(ms, lead)
	waitFor(t, "the leader hearing from a follower", func() bool {
		i := slices.IndexFunc(lead.r.Progress(), func(p PeerProgress) bool { return p.ID == f.r.ID() })
		return i >= 0 && lead.r.Progress()[i].Match > 0
	})
	n.isolate(f.r.ID(), true)
	return lead, f
}

// matchOf is the last entry the leader knows peer id has.
func matchOf(t *testing.T, lead *member, id uint64) uint64 {
	t.Helper()
	for _, p := range lead.r.Progress() {
		if p.ID == id {
			return p.Match
		}
	}
	t.Fatalf("the leader has no progress of %d", id)
	return 0
}

func followerOf(ms []*member, lead *member) *member {
	if ms[0] == lead {
		return ms[1]
	}
	return ms[0]
}

// writeN creates n nodes through m, tags from tag0, and waits for each.
func writeN(t *testing.T, m *member, prefix string, n int, tag0 uint64) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := m.r.Submit(ctx, create(fmt.Sprintf("%s%04d", prefix, i)), tag0+uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if ev := m.await(t, tag0+uint64(i)); ev.Kind != Applied || ev.Result.Err != jute.OK {
			t.Fatalf("write %d: %v %+v", i, ev.Kind, ev.Result)
		}
	}
}

// waitFor polls cond until it holds, for at most 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// restoredSeen reports whether a Restored event is among m's queued ones.
func restoredSeen(m *member) bool {
	for {
		select {
		case ev := <-m.events:
			if ev.Kind == Restored {
				return true
			}
		default:
			return false
		}
	}
}

// snapIndex is the index of the newest snapshot the storage records.
func (r *Replica) snapIndex() uint64 {
	sn, _ := r.disk.Snapshot()
	return sn.Metadata.Index
}

// entryBytes is the size of the entries [lo, hi] in the log.
func (r *Replica) entryBytes(lo, hi uint64) int64 {
	ents, err := r.disk.Entries(lo, hi+1, math.MaxUint64)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		n += int64(e.Size())
	}
	return n
}

// Ref: issue 14 (memory): memory holds whole only the newest
// TrailingEntries applied entries, not every entry since the last
// snapshot; raft still reads the others, from the WAL. After a restart
// the same holds once the log is replayed.
func TestLogHeldInMemoryIsBounded(t *testing.T) {
	const trailing = 20
	fs := vfs.NewMem()
	opt := func(c *Config) { c.TrailingEntries = trailing }
	d := startDurable(t, fs, 0, opt) // default snapCount: no snapshot here
	d.write(t, workload(100)...)
	checkHeld(t, d.r, trailing)
	d.stop()
	d = startDurable(t, fs, 0, opt)
	d.recovered(t)
	checkHeld(t, d.r, trailing)
}

// checkHeld waits until r holds no more than about trailing entries of
// a log over four times as long, then reads the whole log.
func checkHeld(t *testing.T, r *Replica, trailing int) {
	t.Helper()
	first, _ := r.disk.FirstIndex()
	last, _ := r.disk.LastIndex()
	if n := int(last + 1 - first); n < 4*trailing {
		t.Fatalf("a log of %d entries: too short to tell", n)
	}
	waitFor(t, "memory to hold only the trailing entries", func() bool {
		held := r.disk.Held()
		return held <= trailing+trailing/4
	})
	ents, err := r.disk.Entries(first, last+1, math.MaxUint64)
	if err != nil || len(ents) != int(last+1-first) {
		t.Fatalf("read %d entries of [%d, %d]: %v", len(ents), first, last, err)
	}
	for i, e := range ents {
		if e.Index != first+uint64(i) {
			t.Fatalf("entry %d read as %d", first+uint64(i), e.Index)
		}
	}
}
