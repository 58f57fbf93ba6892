package tree

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// walked is one node as a walk reported it.
type walked struct {
	path string
	data string
	nil_ bool
	acl  string
	stat StatPersisted
	kids int32
}

func record(path string, n Node) walked {
	return walked{path: path, data: string(n.Data), nil_: n.Data == nil, acl: fmt.Sprint(n.ACL), stat: n.Stat, kids: n.NumChildren}
}

func liveWalk(tr *Tree) []walked {
	var out []walked
	tr.Walk(func(p string, n Node) bool {
		out = append(out, record(p, n))
		return true
	})
	return out
}

func frozenWalk(t *testing.T, f *Frozen) []walked {
	t.Helper()
	var out []walked
	if err := f.Walk(func(p []byte, n Node) error {
		out = append(out, record(string(p), n))
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffWalks(t *testing.T, got, want []walked) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("node %d: frozen view has %+v, the tree at the freeze had %+v", i, got[i], want[i])
		}
	}
	t.Fatalf("frozen view has %d nodes, the tree at the freeze had %d", len(got), len(want))
}

// A frozen view reads the tree as it was at the freeze, whatever the
// writer does afterwards: data, ACL and stat changes, creates and deletes
// under saved and unsaved parents, a subtree deleted on replay, and a
// second view frozen in the middle. This is what lets a snapshot be
// written exactly as of its label while apply goes on.
func TestFrozenViewIgnoresLaterChanges(t *testing.T) {
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		tr, m := New(), newModel()
		if seed%2 == 1 {
			smallChunks(tr, 256) // records compacted between the views
		}
		zxid := int64(0)
		step := func() {
			zxid++
			applyBoth(t, tr, m, randomOp(r, m), zxid)
		}
		for range 300 {
			step()
		}
		want1 := liveWalk(tr)
		f1 := tr.Freeze()
		for range 150 {
			step()
		}
		want2 := liveWalk(tr)
		f2 := tr.Freeze()
		for range 150 {
			step()
		}
		// A replayed delete that takes a whole subtree (see DeleteNode).
		for _, p := range []string{"/a", "/b", "/c"} {
			if tr.Exists(p) {
				zxid++
				if err := tr.DeleteNode(p, zxid); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		diffWalks(t, frozenWalk(t, f1), want1)
		diffWalks(t, frozenWalk(t, f2), want2)
		checkInvariants(t, tr)
		f1.Close()
		f2.Close()
		if err := f1.Walk(func([]byte, Node) error { return nil }, nil); !errors.Is(err, ErrFrozenClosed) {
			t.Fatalf("Walk after Close: %v; want ErrFrozenClosed", err)
		}
	}
}

// Create+delete churn reuses the freed slots, with or without a frozen
// view open, so it does not grow the tree's memory (issue 17).
func TestChurnReusesSlots(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/d", nil, 0, 1)
	for i := range 3000 {
		mustCreate(t, tr, fmt.Sprintf("/d/%d", i), []byte("x"), 0, int64(i+2))
	}
	chunks, hashes := len(tr.nodes.chunks), len(tr.index.slots)
	zxid := int64(10000)
	for round := range 20 {
		f := tr.Freeze()
		for i := range 3000 {
			zxid++
			p := fmt.Sprintf("/d/%d", i)
			if err := tr.DeleteNode(p, zxid); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, tr, p, []byte{byte(round)}, 0, zxid)
		}
		f.Close()
	}
	if len(tr.nodes.chunks) != chunks || len(tr.index.slots) != hashes {
		t.Errorf("after churn: %d chunks, %d index slots; before %d, %d", len(tr.nodes.chunks), len(tr.index.slots), chunks, hashes)
	}
	checkInvariants(t, tr)
}

// Once every view is closed the writer stops saving nodes: the saved
// copies do not outlive the snapshot.
func TestClosedViewsAreDropped(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/a", []byte("1"), 0, 1)
	f := tr.Freeze()
	if _, err := tr.SetData("/a", []byte("2"), 1, 2, 2); err != nil {
		t.Fatal(err)
	}
	if len(f.saved) != 1 {
		t.Fatalf("%d nodes saved for the open view; want 1 (/a)", len(f.saved))
	}
	f.Close()
	mustCreate(t, tr, "/b", nil, 0, 3)
	if tr.frozen != nil {
		t.Fatalf("%d views still kept after Close and a change", len(tr.frozen))
	}
	if len(f.saved) != 1 {
		t.Fatalf("%d nodes saved after Close; want no more", len(f.saved))
	}
}

// The walker runs on its own goroutine while the writer changes the tree
// (go test -race checks the hand-off), and still sees the tree as it was
// at the freeze.
func TestFrozenWalkConcurrentWithWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	tr, m := New(), newModel()
	smallChunks(tr, 256) // compaction must wait for the walker
	zxid := int64(0)
	for range 2000 {
		zxid++
		applyBoth(t, tr, m, randomOp(r, m), zxid)
	}
	for i := range 300 {
		zxid++
		mustCreate(t, tr, fmt.Sprintf("/flat%03d", i), []byte("x"), 0, zxid)
	}
	want := liveWalk(tr)
	f := tr.Freeze()
	type result struct {
		got []walked
		err error
	}
	done := make(chan result, 1)
	go func() {
		var got []walked
		err := f.Walk(func(p []byte, n Node) error {
			got = append(got, record(string(p), n))
			return nil
		}, nil)
		done <- result{got, err}
	}()
	for i := range 2000 {
		zxid++
		applyBoth(t, tr, m, randomOp(r, m), zxid)
		if i%3 == 0 {
			if err := tr.DeleteNode(fmt.Sprintf("/flat%03d", i/3%300), zxid); err != nil && !errors.Is(err, jute.NoNode) {
				t.Fatal(err)
			}
		}
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	diffWalks(t, res.got, want)
	f.Close()
}

// The generation counter wraps after four billion freezes; views open
// across the wrap still read the tree as it was when they were taken.
func TestFreezeGenerationWraps(t *testing.T) {
	tr := New()
	mustCreate(t, tr, "/a", []byte("1"), 0, 1)
	tr.gen = math.MaxUint32 - 1
	before := tr.Freeze() // the last generation before the wrap
	want := liveWalk(tr)
	if _, err := tr.SetData("/a", []byte("2"), 1, 2, 2); err != nil {
		t.Fatal(err)
	}
	after := tr.Freeze() // wraps
	wantAfter := liveWalk(tr)
	if tr.gen != 1 {
		t.Fatalf("generation %d after the wrap; want 1", tr.gen)
	}
	if _, err := tr.SetData("/a", []byte("3"), 2, 3, 3); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, "/b", nil, 0, 4)
	diffWalks(t, frozenWalk(t, before), want)
	diffWalks(t, frozenWalk(t, after), wantAfter)
}

// Children are walked in name order, byte by byte as strings.Compare
// orders them, however their names share, or end within, the 16 bytes
// the sort's keys hold: against a plain sort of random names drawn to
// collide there.
func TestSortKidsOrdersByName(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	stems := []string{"", "a", "node-", "lock-000000000", "member_000000000", "x-72057594037927936-", "\xff\xfe", "é"}
	for round := range 500 {
		n := 1 + r.IntN(300)
		names := make([]string, 0, n)
		seen := map[string]bool{}
		for len(names) < n {
			name := stems[r.IntN(len(stems))]
			for range r.IntN(20) {
				name += string(rune("0a\x01\x7f\xc3\xa9"[r.IntN(6)]))
			}
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			names = append(names, name)
		}
		refs := make([]childRef, n)
		for i, name := range names {
			refs[i] = newChildRef(name, nodeID(i))
		}
		var scratch []childRef
		if round%2 == 1 {
			scratch = make([]childRef, 1) // too small: replaced
		}
		sortKids(refs, &scratch, func(id nodeID) string { return names[id] })
		want := slices.Clone(names)
		slices.Sort(want)
		for i, ref := range refs {
			if names[ref.id] != want[i] {
				t.Fatalf("round %d: child %d is %q, want %q", round, i, names[ref.id], want[i])
			}
		}
	}
}
