package sim

import (
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// TestWatchModelFires pins the client's watch model (the reference the
// simulator checks the server's events against) to the rules of
// internal/watch's package comment, which are Apache 3.8's.
// Ref: programmer's guide, "ZooKeeper Watches"; "Persistent, Recursive
// Watches".
func TestWatchModelFires(t *testing.T) {
	const (
		created  = jute.EventNodeCreated
		deleted  = jute.EventNodeDeleted
		changed  = jute.EventNodeDataChanged
		children = jute.EventNodeChildrenChanged
	)
	type step struct {
		typ  int32
		path string
		want bool // the client is owed an event
	}
	for _, tc := range []struct {
		name    string
		who     identity
		watches map[wkey]armedWatch
		steps   []step
		left    []wkey // the watches held afterwards
	}{
		{"a data watch fires once", idSuper, map[wkey]armedWatch{{"/a", wData}: {set: 1}},
			[]step{{changed, "/a", true}, {changed, "/a", false}}, nil},
		{"a child watch ignores setData, fires on a child, once", idSuper, map[wkey]armedWatch{{"/d", wChild}: {set: 1}},
			[]step{{changed, "/d", false}, {children, "/d", true}, {children, "/d", false}}, nil},
		{"NodeDeleted fires data and child watches with one event", idSuper,
			map[wkey]armedWatch{{"/d", wData}: {set: 1}, {"/d", wChild}: {set: 1}},
			[]step{{deleted, "/d", true}, {created, "/d", false}}, nil},
		{"a persistent watch stays, sees children but not grandchildren", idSuper,
			map[wkey]armedWatch{{"/d", wPersistent}: {set: 1}, {"/d", wPersistentChild}: {set: 1}},
			[]step{{changed, "/d", true}, {children, "/d", true}, {created, "/d/c0", false}, {deleted, "/d", true}},
			[]wkey{{"/d", wPersistent}, {"/d", wPersistentChild}}},
		{"a recursive watch sees the subtree, never NodeChildrenChanged", idSuper,
			map[wkey]armedWatch{{"/d", wRecursive}: {set: 1}, {"/d", wRecursiveChild}: {set: 1}},
			[]step{{created, "/d/c0/g", true}, {children, "/d", false}, {children, "/d/c0", false}, {changed, "/d", true}, {created, "/e", false}},
			[]wkey{{"/d", wRecursive}, {"/d", wRecursiveChild}}},
		{"a recursive watch's child half alone sees NodeDeleted only", idSuper,
			map[wkey]armedWatch{{"/d", wRecursiveChild}: {set: 1}},
			[]step{{created, "/d/c0", false}, {changed, "/d/c0", false}, {deleted, "/d/c0", true}},
			[]wkey{{"/d", wRecursiveChild}}},
		{"a change at the watch's zxid fires nothing", idSuper, map[wkey]armedWatch{{"/a", wData}: {set: 2}},
			[]step{{changed, "/a", false}, {changed, "/a", true}}, nil},
		{"an unreadable node's event is withheld, its watch used up", idOther,
			map[wkey]armedWatch{{keyPath(keyOwnerOnly), wData}: {set: 1, exist: true}},
			[]step{{created, keyPath(keyOwnerOnly), false}}, nil},
		{"a readable guarded key's event comes", idOther,
			map[wkey]armedWatch{{keyPath(keyReadOnly), wData}: {set: 1}},
			[]step{{deleted, keyPath(keyReadOnly), true}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &client{watches: tc.watches, who: tc.who}
			for i, st := range tc.steps {
				zxid := int64(i + 2) // the steps apply at zxid 2, 3, ...
				if got := c.fires(appliedTrigger{zxid: zxid, path: st.path, typ: st.typ}); got != st.want {
					t.Errorf("step %d (%d on %s): owed an event = %v, want %v", i, st.typ, st.path, got, st.want)
				}
			}
			if len(c.watches) != len(tc.left) {
				t.Errorf("watches left: %v, want %v", c.watches, tc.left)
			}
			for _, k := range tc.left {
				if _, ok := c.watches[k]; !ok {
					t.Errorf("watch %v gone, want it kept", k)
				}
			}
		})
	}
}

// TestOwedBySetWatches pins what the model expects a setWatches to fire
// to Apache 3.8's DataTree.setWatches.
func TestOwedBySetWatches(t *testing.T) {
	s := &Sim{trigs: map[int64][]appliedTrigger{
		11: {{11, "/gone", jute.EventNodeDeleted}, {11, "/", jute.EventNodeChildrenChanged}},
		12: {{12, "/set", jute.EventNodeDataChanged}},
		13: {{13, "/p", jute.EventNodeChildrenChanged}},
		14: {{14, "/again", jute.EventNodeDeleted}},
		15: {{15, "/again", jute.EventNodeCreated}},
		16: {{16, "/new", jute.EventNodeCreated}},
		17: {{17, "/blip", jute.EventNodeCreated}},
		18: {{18, "/blip", jute.EventNodeDeleted}},
	}}
	for _, tc := range []struct {
		k     wkey
		exist bool
		typ   int32 // 0: nothing owed
	}{
		{wkey{"/gone", wData}, false, jute.EventNodeDeleted},
		{wkey{"/gone", wChild}, false, jute.EventNodeDeleted},
		{wkey{"/set", wData}, false, jute.EventNodeDataChanged},
		{wkey{"/set", wChild}, false, 0},
		{wkey{"/p", wChild}, false, jute.EventNodeChildrenChanged},
		{wkey{"/p", wData}, false, 0},
		{wkey{"/again", wData}, false, jute.EventNodeDataChanged},      // mzxid > rel
		{wkey{"/again", wChild}, false, jute.EventNodeChildrenChanged}, // pzxid = czxid > rel
		{wkey{"/new", wData}, true, jute.EventNodeCreated},             // an exist watch
		{wkey{"/blip", wData}, true, 0},                                // made and gone again: missed
		{wkey{"/", wChild}, false, jute.EventNodeChildrenChanged},      // a child went
		{wkey{"/d", wPersistent}, false, 0},                            // persistent: nothing, ever
		{wkey{"/gone", wRecursive}, false, 0},
	} {
		typ, owed := s.owedBySetWatches(tc.k, armedWatch{set: 3, exist: tc.exist}, 10, 20)
		if !owed {
			typ = 0
		}
		if typ != tc.typ {
			t.Errorf("%s watch on %s (exist=%v): owed %d, want %d", tc.k.kind, tc.k.path, tc.exist, typ, tc.typ)
		}
	}
	if _, owed := s.owedBySetWatches(wkey{"/set", wData}, armedWatch{set: 3}, 12, 20); owed {
		t.Error("a change at the relative zxid itself is owed; the client saw it")
	}
}
