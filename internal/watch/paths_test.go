package watch

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// TestPathTableAgainstMap adds and releases paths at random, enough of
// them to grow the index several times, and checks every path against a
// map.
func TestPathTableAgainstMap(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		var pt pathTable
		want := map[string]pathID{}
		for step := range 20_000 {
			p := "/n/" + strconv.Itoa(rng.IntN(3_000))
			if id, ok := want[p]; ok && rng.IntN(2) == 0 {
				pt.release(id)
				delete(want, p)
			} else {
				id := pt.add(p)
				if ok && id != want[p] {
					t.Fatalf("seed %d step %d: add(%s) = %d, had %d", seed, step, p, id, want[p])
				}
				want[p] = id
			}
			if step%1000 == 0 || step == 19_999 {
				checkTable(t, &pt, want)
			}
		}
		nt, moved := pt.rebuild()
		for p, id := range want {
			want[p] = moved[id]
		}
		checkTable(t, nt, want)
	}
}

func checkTable(t *testing.T, pt *pathTable, want map[string]pathID) {
	t.Helper()
	if pt.live != len(want) {
		t.Fatalf("live %d, want %d", pt.live, len(want))
	}
	for p, id := range want {
		if got := pt.find(p); got != id {
			t.Fatalf("find(%s) = %d, want %d", p, got, id)
		}
		if got := pt.path(id); got != p {
			t.Fatalf("path(%d) = %s, want %s", id, got, p)
		}
	}
	for i := range 100 {
		if p := "/absent/" + strconv.Itoa(i); pt.find(p) != 0 {
			t.Fatalf("find(%s) found a path never added", p)
		}
	}
	n := 0
	for _, s := range pt.index {
		if s != 0 {
			n++
		}
	}
	if n != len(want) {
		t.Fatalf("index holds %d ids, want %d", n, len(want))
	}
}

// Backward-shift deletion must keep every entry reachable from its home
// position without crossing an empty slot, also for probe runs that wrap
// around the end of the index. Homes are chosen here (random paths seldom
// make such runs in a test-sized table), and entries are released in
// random orders.
func TestPathTableReleaseWraps(t *testing.T) {
	homes := []uint64{62, 63, 63, 62, 0, 1, 63, 0, 61, 2, 62, 1}
	for seed := uint64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		var pt pathTable
		pt.init() // minIndex slots: positions 0..63
		var ids []pathID
		for _, h := range homes {
			id := pt.alloc()
			r := pt.rec(id)
			*r = pathRec{hash: h | uint64(rng.Uint32())<<32, use: true}
			pt.place(makeSlot(r.hash, id))
			ids = append(ids, id)
		}
		checkProbeRuns(t, &pt)
		for _, i := range rng.Perm(len(ids)) {
			pt.release(ids[i])
			checkProbeRuns(t, &pt)
		}
		if pt.live != 0 {
			t.Fatalf("seed %d: %d live after releasing all", seed, pt.live)
		}
	}
}

// checkProbeRuns fails unless every entry of the index is reachable from
// its home by linear probing, and appears once.
func checkProbeRuns(t *testing.T, pt *pathTable) {
	t.Helper()
	mask := uint64(len(pt.index) - 1)
	seen := map[pathID]bool{}
	for p, s := range pt.index {
		if s == 0 {
			continue
		}
		if seen[s.id()] {
			t.Fatalf("id %d twice in the index", s.id())
		}
		seen[s.id()] = true
		for q := s.home(mask); q != uint64(p); q = (q + 1) & mask {
			if pt.index[q] == 0 {
				t.Fatalf("id %d at %d, home %d: empty slot %d between", s.id(), p, s.home(mask), q)
			}
		}
	}
	if len(seen) != pt.live {
		t.Fatalf("%d ids in the index, %d live", len(seen), pt.live)
	}
}

// A path longer than a name chunk gets a chunk of its own.
func TestPathTableLongPath(t *testing.T) {
	var pt pathTable
	long := "/" + string(make([]byte, 3*nameChunk))
	short := pt.add("/a")
	id := pt.add(long)
	if pt.path(id) != long || pt.path(short) != "/a" || pt.find(long) != id {
		t.Fatal("long path not kept")
	}
}

// A registry that held many watches and lost most of them gives their
// memory back, and keeps the rest working.
func TestRegistryCompacts(t *testing.T) {
	var r Registry
	const n = 20_000
	for i := range n {
		r.Add(Watcher(i%7), "/p/"+strconv.Itoa(i), ModeData)
	}
	held := len(r.paths.recs)
	for i := range n - 100 {
		if ds := r.Trigger("/p/"+strconv.Itoa(i), jute.EventNodeDataChanged, 1); len(ds) != 1 {
			t.Fatalf("trigger %d: %v", i, ds)
		}
	}
	checkIndexes(t, &r)
	// 100 paths are left: one chunk of records, an index within a
	// constant factor of them (it shrinks by quarters).
	if got, idx := len(r.paths.recs), len(r.paths.index); got != 1 || idx > 1024 {
		t.Fatalf("%d record chunks and an index of %d after 99%% of the watches fired; %d chunks before", got, idx, held)
	}
	if got, want := r.Summary(DataTable), (Summary{Watchers: 7, Paths: 100, Watches: 100}); got != want {
		t.Fatalf("Summary = %+v, want %+v", got, want)
	}
	for i := n - 100; i < n; i++ {
		ds := r.Trigger("/p/"+strconv.Itoa(i), jute.EventNodeDeleted, 2)
		if len(ds) != 1 || ds[0].Watcher != Watcher(i%7) {
			t.Fatalf("trigger %d after compaction: %v", i, ds)
		}
	}
	if r.Len() != 0 || len(r.watchers) != 0 || r.paths.live != 0 {
		t.Fatalf("registry not empty: Len %d, %d watchers, %d paths", r.Len(), len(r.watchers), r.paths.live)
	}
}
