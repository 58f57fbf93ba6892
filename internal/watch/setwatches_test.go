package watch

import (
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

type fakeTree map[string]jute.Stat

func (f fakeTree) Stat(path string) (jute.Stat, bool) {
	st, ok := f[path]
	return st, ok
}

// Ref: programmer's guide, "ZooKeeper Watches": "When a client reconnects,
// any previously registered watches will be reregistered and triggered if
// needed." The rules are Apache's DataTree.setWatches; the case below was
// run against Apache 3.8 with relativeZxid 112, and it answered the events
// in this order and registered exactly /sw/nothere (exist) and /sw/old
// (data and child).
func TestSetWatches(t *testing.T) {
	tree := fakeTree{
		"/sw/old/k":     {Mzxid: 115, Pzxid: 112},
		"/sw/old":       {Mzxid: 111, Pzxid: 112},
		"/sw/new":       {Czxid: 113, Mzxid: 113, Pzxid: 113},
		"/sw/newparent": {Mzxid: 116, Pzxid: 117},
	}
	req := &jute.SetWatches2{
		RelativeZxid: 112,
		DataWatches:  []string{"/sw/missing", "/sw/old/k", "/sw/old", "/sw/new"},
		ExistWatches: []string{"/sw/new", "/sw/nothere"},
		ChildWatches: []string{"/sw/gone", "/sw/newparent", "/sw/old"},
	}
	var r Registry
	got := r.SetWatches(9, req, 120, tree)
	ev := func(typ int32, path string) Delivery {
		return Delivery{Watcher: 9, Event: Event{Type: typ, Path: path, Zxid: 120}}
	}
	want := []Delivery{
		ev(jute.EventNodeDeleted, "/sw/missing"),
		ev(jute.EventNodeDataChanged, "/sw/old/k"),
		ev(jute.EventNodeDataChanged, "/sw/new"), // mzxid > relative, though it was created since
		ev(jute.EventNodeCreated, "/sw/new"),
		ev(jute.EventNodeDeleted, "/sw/gone"),
		ev(jute.EventNodeChildrenChanged, "/sw/newparent"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SetWatches events:\n got %v\nwant %v", got, want)
	}
	wantRegs := []WatcherPaths{{Watcher: 9, Paths: []string{"/sw/nothere", "/sw/old"}}}
	if regs := r.ByWatcher(AllTables); !reflect.DeepEqual(regs, wantRegs) {
		t.Fatalf("registered %v, want %v", regs, wantRegs)
	}
	// What Apache 3.8 sent next: set /sw/old, create /sw/nothere,
	// create /sw/old/z.
	run(t, &r, `
		fire changed /sw/old => 9
		fire created /sw/nothere => 9
		fire children /sw/old => 9
		fire created /sw/missing =>
		len => 0
	`)
}

func TestSetWatchesEdges(t *testing.T) {
	tree := fakeTree{"/a": {Mzxid: 5, Pzxid: 5}}
	tests := []struct {
		name string
		req  jute.SetWatches2
		want []int32 // event types
		len  int
	}{
		{"equal zxids register", jute.SetWatches2{RelativeZxid: 5, DataWatches: []string{"/a"}, ChildWatches: []string{"/a"}}, nil, 2},
		{"older client gets changes", jute.SetWatches2{RelativeZxid: 4, DataWatches: []string{"/a"}, ChildWatches: []string{"/a"}}, []int32{jute.EventNodeDataChanged, jute.EventNodeChildrenChanged}, 0},
		{"missing node in data and child lists: two deletes", jute.SetWatches2{DataWatches: []string{"/x"}, ChildWatches: []string{"/x"}}, []int32{jute.EventNodeDeleted, jute.EventNodeDeleted}, 0},
		{"exist watch on missing node registers", jute.SetWatches2{ExistWatches: []string{"/x"}}, nil, 1},
		{"persistent always registers", jute.SetWatches2{RelativeZxid: 0, PersistentWatches: []string{"/a", "/x"}, PersistentRecursiveWatches: []string{"/"}}, nil, 6},
		{"empty", jute.SetWatches2{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Registry
			var got []int32
			for _, d := range r.SetWatches(1, &tt.req, 9, tree) {
				got = append(got, d.Event.Type)
			}
			if !reflect.DeepEqual(got, tt.want) || r.Len() != tt.len {
				t.Fatalf("events %v, Len %d; want %v, %d", got, r.Len(), tt.want, tt.len)
			}
		})
	}
}

// Apache 3.8 setWatches2 with persistent /sw/p and recursive /sw/r, then
// create /sw/p, /sw/r, /sw/r/x, /sw/p/x: Created p, Created r, Created r/x,
// ChildrenChanged p.
func TestSetWatches2Persistent(t *testing.T) {
	var r Registry
	req := &jute.SetWatches2{RelativeZxid: 1 << 40, PersistentWatches: []string{"/sw/p"}, PersistentRecursiveWatches: []string{"/sw/r"}}
	if ds := r.SetWatches(3, req, 1, fakeTree{}); len(ds) != 0 {
		t.Fatalf("persistent watches fired at once: %v", ds)
	}
	run(t, &r, `
		fire created /sw/p => 3
		fire children /sw => 
		fire created /sw/r => 3
		fire created /sw/r/x => 3
		fire children /sw/r =>
		fire created /sw/p/x =>
		fire children /sw/p => 3
	`)
	if s := r.Summary(DataTable); s != (Summary{Watchers: 1, Paths: 2, Watches: 2}) {
		t.Fatalf("wchs: %+v (Apache 3.8 said 1 connection, 2 paths, 2 watches)", s)
	}
	if r.Len() != 4 {
		t.Fatalf("Len = %d, Apache 3.8's zk_watch_count said 4", r.Len())
	}
}
