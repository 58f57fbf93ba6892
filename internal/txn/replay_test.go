package txn

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// workload generates random requests over a small set of paths, so that
// creates, deletes and multis collide often.
type workload struct {
	r        *rand.Rand
	sessions []int64
	next     int64
}

var workPaths = []string{"/a", "/a/b", "/a/c", "/a/b/d", "/b", "/b/x", "/c", "/zookeeper/quota/a"}

func newWorkload(seed uint64) *workload {
	return &workload{r: rand.New(rand.NewPCG(seed, 7)), sessions: []int64{sess1, sess2}, next: 0x100}
}

func (w *workload) path() string { return workPaths[w.r.IntN(len(workPaths))] }

func (w *workload) session() int64 { return w.sessions[w.r.IntN(len(w.sessions))] }

// request returns a random request. Sessions come and go.
func (w *workload) request(extended bool) Request {
	switch n := w.r.IntN(20); {
	case n == 0 && len(w.sessions) > 1:
		i := w.r.IntN(len(w.sessions))
		s := w.sessions[i]
		w.sessions = slices.Delete(w.sessions, i, i+1)
		return closeSession(s)
	case n == 1:
		w.next++
		w.sessions = append(w.sessions, w.next)
		return Request{SessionID: w.next, Op: jute.OpCreateSession, Record: &CreateSession{TimeoutMs: 4000}}
	case n == 2:
		return deleteContainer(w.path())
	case n < 5:
		var ops []Request
		for range 1 + w.r.IntN(3) {
			ops = append(ops, w.op(extended))
		}
		req := multi(ops...)
		req.SessionID = w.session()
		return req
	}
	req := w.op(extended)
	req.SessionID = w.session()
	return req
}

func (w *workload) op(extended bool) Request {
	p := w.path()
	version := int32(w.r.IntN(3)) - 1
	switch w.r.IntN(6) {
	case 0, 1:
		flags := []int32{0, 0, jute.FlagEphemeral, jute.FlagPersistentSequential, jute.FlagEphemeralSequential}[w.r.IntN(5)]
		return create(p, "d"+p, flags)
	case 2:
		if extended && w.r.IntN(2) == 0 {
			return createTTL(p, jute.FlagPersistentWithTTL, 1+w.r.Int64N(5))
		}
		return createOp(jute.OpCreateContainer, p, 0)
	case 3:
		return del(p, version)
	case 4:
		return setData(p, string(rune('a'+w.r.IntN(26))), version)
	}
	return check(p, version)
}

// TestPipelinedPrepMatchesSequential runs one random request stream twice:
// once applying each txn before prepping the next, once prepping batches
// ahead of apply. The overlay must make the txns identical.
func TestPipelinedPrepMatchesSequential(t *testing.T) {
	for seed := range uint64(20) {
		w := newWorkload(seed)
		var reqs []Request
		for range 300 {
			reqs = append(reqs, w.request(true))
		}
		seq := newHarness(t, PrepConfig{ExtendedTypes: true})
		for _, r := range reqs {
			seq.do(r)
		}
		pip := newHarness(t, PrepConfig{ExtendedTypes: true})
		r := rand.New(rand.NewPCG(seed, 9))
		for i := 0; i < len(reqs); {
			n := min(1+r.IntN(6), len(reqs)-i)
			var batch []*Txn
			for _, req := range reqs[i : i+n] {
				batch = append(batch, pip.prep(req))
			}
			for _, tx := range batch {
				pip.apply(tx)
			}
			i += n
		}
		for i := range seq.log {
			a, b := seq.log[i].t, pip.log[i].t
			if !bytes.Equal(a.Marshal(), b.Marshal()) {
				t.Fatalf("seed %d txn %d:\nsequential %v\n pipelined %v", seed, i, a, b)
			}
		}
		if seq.st.Tree.Digest() != pip.st.Tree.Digest() {
			t.Fatalf("seed %d: trees differ", seed)
		}
	}
}

// TestApplyTwiceIsIdempotent applies every txn of a random run twice in a
// row, and a suffix of the log again at the end, and expects the state of
// applying each once (DESIGN decision 3).
func TestApplyTwiceIsIdempotent(t *testing.T) {
	for seed := range uint64(20) {
		h := runWorkload(t, seed, 300)
		want := stateDigest(h.st)

		twice := NewState(tree.New())
		for _, l := range h.log {
			Apply(twice, l.t, l.zxid)
			Apply(twice, l.t, l.zxid)
		}
		if got := stateDigest(twice); got != want {
			t.Fatalf("seed %d: applying each txn twice: %s, want %s", seed, got, want)
		}

		for _, k := range []int{0, len(h.log) / 3, len(h.log) - 5} {
			again := NewState(tree.New())
			for _, l := range h.log {
				Apply(again, l.t, l.zxid)
			}
			for _, l := range h.log[k:] {
				Apply(again, l.t, l.zxid)
			}
			if got := stateDigest(again); got != want {
				t.Fatalf("seed %d: replaying from %d: %s, want %s", seed, k, got, want)
			}
			if err := again.Tree.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReplayOverFuzzySnapshot takes a snapshot the way DESIGN decision 9
// does, walking the tree while txns keep applying, restores it, replays
// the log from the snapshot's label, and expects the state of the original
// run.
func TestReplayOverFuzzySnapshot(t *testing.T) {
	for seed := range uint64(30) {
		h := runWorkload(t, seed, 300)
		want := stateDigest(h.st)
		r := rand.New(rand.NewPCG(seed, 11))
		label := r.IntN(len(h.log) - 20)

		live := NewState(tree.New())
		for _, l := range h.log[:label] {
			Apply(live, l.t, l.zxid)
		}
		snapSessions := maps.Clone(live.Sessions)
		snap := fuzzyWalk(live, h.log[label:], r)

		restored := NewState(tree.New())
		restored.Sessions = snapSessions
		for _, n := range snap {
			// A node whose parent was deleted before the walk reached
			// it cannot be restored; its delete is in the replayed log.
			_ = restored.Tree.Restore(n.path, n.Data, n.ACL, n.Stat)
		}
		if err := restored.Tree.Restored(); err != nil {
			t.Fatal(err)
		}
		for _, l := range h.log[label:] {
			Apply(restored, l.t, l.zxid)
		}
		if got := stateDigest(restored); got != want {
			t.Fatalf("seed %d, label %d: %s, want %s", seed, label, got, want)
		}
	}
}

type snapNode struct {
	path string
	tree.Node
}

// fuzzyWalk copies live's nodes depth first, parents before children,
// applying some of pending between nodes, and applies the rest at the end.
func fuzzyWalk(live *State, pending []logged, r *rand.Rand) []snapNode {
	var out []snapNode
	stack := []string{tree.Root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		info, ok := live.Tree.Lookup(p)
		if !ok {
			continue
		}
		out = append(out, snapNode{p, tree.Node{Data: info.Data, ACL: info.ACL, Stat: info.Stat}})
		children, _, _ := live.Tree.Children(p)
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, tree.Join(p, children[i]))
		}
		for len(pending) > 0 && r.IntN(3) == 0 {
			Apply(live, pending[0].t, pending[0].zxid)
			pending = pending[1:]
		}
	}
	return out
}

func runWorkload(t *testing.T, seed uint64, n int) *harness {
	w := newWorkload(seed)
	h := newHarness(t, PrepConfig{ExtendedTypes: true})
	for range n {
		h.do(w.request(true))
	}
	return h
}

// stateDigest summarizes a state for comparison.
func stateDigest(s *State) string {
	return fmt.Sprintf("%016x sessions %x", s.Tree.Digest(), slices.Sorted(maps.Keys(s.Sessions)))
}
