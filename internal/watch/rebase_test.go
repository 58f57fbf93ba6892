package watch

import (
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: issue 17 (a follower that installs a snapshot keeps its clients):
// the watches set before the jump fire as setWatches with the last zxid
// before it would fire them, an exists watch on a missing node being told
// from a getData watch by the state before; untouched watches stay set,
// and so do persistent ones.
func TestRebase(t *testing.T) {
	const rel = 100
	prev := fakeTree{
		"/same":    {Mzxid: 50, Pzxid: 50},
		"/changed": {Mzxid: 60, Pzxid: 60},
		"/gone":    {Mzxid: 70, Pzxid: 70},
		"/kids":    {Mzxid: 80, Pzxid: 80},
	}
	now := fakeTree{
		"/same":    {Mzxid: 50, Pzxid: 50},
		"/changed": {Mzxid: 150, Pzxid: 60},
		"/kids":    {Mzxid: 80, Pzxid: 140},
		"/born":    {Czxid: 130, Mzxid: 130, Pzxid: 130},
	}
	var r Registry
	r.Add(1, "/same", ModeData)
	r.Add(1, "/same", ModeChild)
	r.Add(1, "/changed", ModeData)
	r.Add(1, "/born", ModeData)   // exists on a missing node
	r.Add(1, "/absent", ModeData) // exists on a node still missing
	r.Add(2, "/gone", ModeData)
	r.Add(2, "/gone", ModeChild)
	r.Add(2, "/kids", ModeChild)
	r.Add(3, "/changed", ModePersistent)
	got := r.Rebase(rel, 200, prev, now)
	ev := func(w Watcher, typ int32, path string) Delivery {
		return Delivery{Watcher: w, Event: Event{Type: typ, Path: path, Zxid: 200}}
	}
	want := []Delivery{
		ev(1, jute.EventNodeDataChanged, "/changed"),
		ev(1, jute.EventNodeCreated, "/born"),
		ev(2, jute.EventNodeDeleted, "/gone"),
		ev(2, jute.EventNodeDeleted, "/gone"), // data and child lists, as Apache's setWatches
		ev(2, jute.EventNodeChildrenChanged, "/kids"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Rebase events:\n got %v\nwant %v", got, want)
	}
	wantRegs := []WatcherPaths{
		{Watcher: 1, Paths: []string{"/absent", "/same"}},
		{Watcher: 3, Paths: []string{"/changed"}},
	}
	if regs := r.ByWatcher(AllTables); !reflect.DeepEqual(regs, wantRegs) {
		t.Fatalf("registered %v, want %v", regs, wantRegs)
	}
	// What stayed set still fires, in its table: /same's child watch too.
	if ds := r.Trigger("/same", jute.EventNodeChildrenChanged, 201); len(ds) != 1 || ds[0].Watcher != 1 {
		t.Fatalf("the child watch on /same after Rebase: %v", ds)
	}
	if ds := r.Trigger("/absent", jute.EventNodeCreated, 202); len(ds) != 1 || ds[0].Watcher != 1 {
		t.Fatalf("the exists watch on /absent after Rebase: %v", ds)
	}
	if ds := r.Trigger("/changed", jute.EventNodeDataChanged, 203); len(ds) != 1 || ds[0].Watcher != 3 {
		t.Fatalf("the persistent watch on /changed after Rebase: %v", ds)
	}
}
