package watch

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// run executes a watch script against r, one command per line:
//
//	add W PATH MODE            MODE: data | child | persistent | recursive
//	fire TYPE PATH => W...     TYPE: created | deleted | changed | children;
//	                           the watchers expected, in order (none: empty)
//	remove W PATH KIND => B    KIND: children | data | any; B: true | false
//	check W PATH KIND => B
//	close W => N               RemoveWatcher; N pairs removed
//	len => N                   Len()
//
// Blank lines and lines starting with # are ignored.
func run(t *testing.T, r *Registry, script string) {
	t.Helper()
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, want, _ := strings.Cut(line, "=>")
		f := strings.Fields(cmd)
		want = strings.TrimSpace(want)
		var got string
		switch f[0] {
		case "add":
			r.Add(watcher(t, f[1]), f[2], modes[f[3]])
			continue
		case "fire":
			got = describe(r.Trigger(f[2], eventTypes[f[1]], 7), f[2], eventTypes[f[1]])
		case "remove":
			got = strconv.FormatBool(r.Remove(watcher(t, f[1]), f[2], kinds[f[3]]))
		case "check":
			got = strconv.FormatBool(r.Check(watcher(t, f[1]), f[2], kinds[f[3]]))
		case "close":
			got = strconv.Itoa(r.RemoveWatcher(watcher(t, f[1])))
		case "len":
			got = strconv.Itoa(r.Len())
		default:
			t.Fatalf("line %d: unknown command %q", i+1, f[0])
		}
		if got != want {
			t.Errorf("line %d: %s\n\tgot  %q\n\twant %q", i+1, line, got, want)
		}
	}
}

var (
	modes = map[string]Mode{
		"data": ModeData, "child": ModeChild,
		"persistent": ModePersistent, "recursive": ModePersistentRecursive,
	}
	eventTypes = map[string]int32{
		"created": jute.EventNodeCreated, "deleted": jute.EventNodeDeleted,
		"changed": jute.EventNodeDataChanged, "children": jute.EventNodeChildrenChanged,
	}
	kinds = map[string]int32{
		"children": jute.WatcherChildren, "data": jute.WatcherData, "any": jute.WatcherAny,
	}
)

func watcher(t *testing.T, s string) Watcher {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad watcher %q", s)
	}
	return Watcher(n)
}

// describe renders deliveries as "1 2 3", checking that each carries the
// event that was fired.
func describe(ds []Delivery, path string, eventType int32) string {
	var ws []string
	for _, d := range ds {
		if d.Event != (Event{Type: eventType, Path: path, Zxid: 7}) {
			return fmt.Sprintf("bad event %+v", d.Event)
		}
		ws = append(ws, strconv.FormatUint(uint64(d.Watcher), 10))
	}
	return strings.Join(ws, " ")
}

func TestEventRules(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		// Ref: programmer's guide, "ZooKeeper Watches": "getData() and
		// exists() set data watches. getChildren() sets child watches."
		// "setData() will trigger data watches for the znode being set".
		{"setData fires data watches once", `
			add 1 /a data
			add 2 /a child
			fire changed /a => 1
			fire changed /a =>
			fire children /a => 2
			fire children /a =>
		`},
		// Ref: "ZooKeeper Watches": "A successful create() will trigger a
		// data watch for the znode being created and a child watch for the
		// parent znode." (exists on a missing node sets a data watch.)
		{"create fires exist watch and parent child watch", `
			add 1 /a/b data
			add 2 /a child
			add 3 /a/b child
			fire created /a/b => 1
			fire children /a => 2
			# a child watch on the new node itself is not a creation watch
			check 3 /a/b children => true
		`},
		// Ref: "ZooKeeper Watches": "A successful delete() will trigger both
		// a data watch and a child watch (since there can be no more
		// children) for a znode being deleted as well as a child watch for
		// the parent znode."
		{"delete fires data and child watches, then the parent's", `
			add 1 /a/b data
			add 2 /a/b child
			add 3 /a child
			add 4 /a data
			fire deleted /a/b => 1 2
			fire children /a => 3
			check 1 /a/b any => false
			check 2 /a/b any => false
			check 4 /a data => true
		`},
		// Ref: "Things to Remember about Watches": "if the same watch object
		// is registered for an exists and a getData call for the same file
		// and that file is then deleted, the watch object would only be
		// invoked once". Seen on Apache 3.8: getData + getChildren on /t1,
		// delete /t1 -> one NodeDeleted.
		{"one event per watcher on delete", `
			add 1 /a data
			add 1 /a child
			fire deleted /a => 1
			check 1 /a any => false
			len => 0
		`},
		// Seen on Apache 3.8: child watch on p and data watch on p/c,
		// delete p/c -> NodeDeleted p/c then NodeChildrenChanged p.
		{"delete gives the deleted node's and the parent's watchers their own events", `
			add 1 /p child
			add 1 /p/c data
			fire deleted /p/c => 1
			fire children /p => 1
		`},
		// Ref: "ZooKeeper Watches": "Watches are one time triggers".
		{"one-time watches are removed when they fire", `
			add 1 /a data
			fire changed /a => 1
			fire changed /a =>
			add 1 /a data
			fire created /a => 1
			fire deleted /a =>
		`},
		{"registering twice is one watch", `
			add 1 /a data
			add 1 /a data
			len => 1
			fire changed /a => 1
			fire changed /a =>
		`},
		{"deliveries are ordered by watcher", `
			add 30 /a data
			add 4 /a data
			add 100 /a child
			add 17 /a data
			fire deleted /a => 4 17 30 100
		`},
		{"children changed does not touch data watches", `
			add 1 /a data
			fire children /a =>
			fire changed /a => 1
		`},
		{"unrelated paths", `
			add 1 /a data
			add 1 /ab child
			fire changed /b =>
			fire children /a =>
			fire changed /a/b =>
			fire changed /ab =>
			fire changed /a => 1
			fire children /ab => 1
		`},
		{"the root", `
			add 1 / child
			add 2 / data
			fire children / => 1
			fire changed / => 2
		`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, &Registry{}, tt.script) })
	}
}

// Persistent watches (addWatch, ZooKeeper 3.6+). The guide in
// shared/seeds predates them; the rules are Apache's WatchManager and
// were checked against Apache 3.8 (see the comments).
func TestPersistentRules(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		// Seen on Apache 3.8: persistent on p: create p/c -> ChildrenChanged p;
		// set p/c -> nothing; set p -> DataChanged p; delete p/c ->
		// ChildrenChanged p; delete p -> Deleted p; create p -> Created p.
		{"persistent sees its path only and survives everything", `
			add 1 /p persistent
			fire created /p/c =>
			fire children /p => 1
			fire changed /p/c =>
			fire changed /p => 1
			fire deleted /p/c =>
			fire children /p => 1
			fire deleted /p => 1
			fire created /p => 1
			len => 2
		`},
		// Seen on Apache 3.8: recursive on p: create p/c -> Created p/c;
		// set p/c -> DataChanged p/c; create p/c/d -> Created p/c/d (no
		// ChildrenChanged anywhere); delete p/c/d -> Deleted; set p -> DataChanged p.
		{"recursive sees its subtree but never children changed", `
			add 1 /p recursive
			fire created /p/c => 1
			fire children /p =>
			fire changed /p/c => 1
			fire created /p/c/d => 1
			fire children /p/c =>
			fire deleted /p/c/d => 1
			fire changed /p => 1
			fire deleted /p => 1
			fire created /p => 1
			fire changed /pp =>
			fire changed / =>
		`},
		{"recursive on the root sees everything", `
			add 1 / recursive
			fire created /a => 1
			fire changed /a/b/c => 1
			fire changed / => 1
			fire children / =>
		`},
		// Seen on Apache 3.8: recursive on p and exists watch on p/c,
		// create p/c -> a single Created p/c.
		{"one event per watcher across one-time and recursive", `
			add 1 /p recursive
			add 1 /p/c data
			add 1 /p/c child
			fire created /p/c => 1
			check 1 /p/c data => false
			fire deleted /p/c => 1
			check 1 /p/c children => false
		`},
		{"several recursive ancestors give one event", `
			add 1 / recursive
			add 1 /a recursive
			add 1 /a/b recursive
			add 2 /a recursive
			fire changed /a/b/c => 1 2
		`},
		// Apache 3.8.0 lets a getData watch downgrade a persistent watch on
		// the same path (ZOOKEEPER-4466; seen: the second setData gave no
		// event). Zoo keeps both, as Apache does since the fix.
		{"one-time and persistent on the same path coexist", `
			add 1 /p persistent
			add 1 /p data
			add 1 /p child
			fire changed /p => 1
			fire changed /p => 1
			fire children /p => 1
			fire children /p => 1
			len => 2
		`},
		{"one-time and recursive on the same path coexist", `
			add 1 /p recursive
			add 1 /p data
			fire changed /p => 1
			fire changed /p => 1
			fire created /p/c => 1
		`},
		{"persistent and recursive together", `
			add 1 /p persistent
			add 1 /p recursive
			fire children /p => 1
			fire created /p/c => 1
			remove 1 /p any => true
			fire children /p =>
			fire created /p/c =>
		`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, &Registry{}, tt.script) })
	}
}

// removeWatches and checkWatches; codes seen on Apache 3.8 in comments.
func TestRemoveAndCheck(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		// 3.8: data watch only: check data 0, check children -121, check any 0;
		// remove children -121, remove data 0, remove data again -121.
		{"one-time watches by kind", `
			add 1 /a data
			check 1 /a data => true
			check 1 /a children => false
			check 1 /a any => true
			remove 1 /a children => false
			remove 1 /a data => true
			remove 1 /a data => false
			fire changed /a =>
		`},
		{"any removes both kinds", `
			add 1 /a data
			add 1 /a child
			remove 1 /a any => true
			check 1 /a any => false
			fire deleted /a =>
			len => 0
		`},
		{"another watcher's watch is not ours", `
			# Apache 3.8.0 answers checkWatches with OK here (it ignores the watcher).
			add 2 /a data
			check 1 /a data => false
			remove 1 /a data => false
			remove 1 /a any => false
			fire changed /a => 2
		`},
		{"unknown kind matches nothing", `
			add 1 /a data
			check 1 /a bogus => false
			remove 1 /a bogus => false
		`},
		{"missing path", `
			check 1 /nowhere any => false
			remove 1 /nowhere any => false
		`},
		// 3.8: persistent: check children 0, check data 0; remove children 0;
		// then create p/c gives nothing but set p gives DataChanged; remove
		// data 0; remove any -121.
		{"persistent is removed half by half", `
			add 1 /p persistent
			check 1 /p children => true
			check 1 /p data => true
			remove 1 /p children => true
			fire children /p =>
			fire changed /p => 1
			remove 1 /p data => true
			remove 1 /p any => false
			fire changed /p =>
			len => 0
		`},
		// 3.8: remove any 0, then set p gives nothing.
		{"persistent removed by any", `
			add 1 /p persistent
			remove 1 /p any => true
			fire changed /p =>
			fire children /p =>
		`},
		// 3.8: recursive, remove data 0; create p/c and set p/c give nothing,
		// delete p/c gives Deleted p/c; check data on p/c -121.
		{"recursive without its data half still sees deletes", `
			add 1 /p recursive
			check 1 /p children => true
			remove 1 /p data => true
			fire created /p/c =>
			fire changed /p/c =>
			fire deleted /p/c => 1
			fire deleted /p => 1
			check 1 /p/c data => false
			check 1 /p/c any => false
		`},
		{"removing a one-time watch keeps a persistent one on the same path", `
			add 1 /p persistent
			add 1 /p data
			remove 1 /p data => true
			fire changed /p =>
			fire children /p => 1
		`},
		{"close removes everything of one watcher", `
			add 1 /a data
			add 1 /a child
			add 1 /b persistent
			add 1 / recursive
			add 2 /a data
			close 1 => 3
			close 1 => 0
			fire deleted /a => 2
			fire changed /b =>
			fire created /c =>
			len => 0
		`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, &Registry{}, tt.script) })
	}
}

// The server's view of one create and one delete, as Trigger calls in txn
// order.
func TestServerSequences(t *testing.T) {
	run(t, &Registry{}, `
		# W1 watches a node's data, W2 its children, W3 the parent's children,
		# W4 has a recursive watch on the root, W5 a persistent one on the parent.
		add 1 /p/c data
		add 2 /p/c child
		add 3 /p child
		add 4 / recursive
		add 5 /p persistent
		# create /p/c
		fire created /p/c => 1 4
		fire children /p => 3 5
		# re-arm the one-time watches, as clients do after an event
		add 1 /p/c data
		add 3 /p child
		# delete /p/c: W2's child watch and W1's data watch both see NodeDeleted
		fire deleted /p/c => 1 2 4
		fire children /p => 3 5
		len => 4
	`)
}

func TestUnknownEventTypeAndMode(t *testing.T) {
	var r Registry
	r.Add(1, "/a", Mode(0))
	r.Add(1, "/a", Mode(99))
	if r.Len() != 0 {
		t.Fatalf("unknown modes registered something: Len = %d", r.Len())
	}
	r.Add(1, "/a", ModeData)
	for _, typ := range []int32{jute.EventNone, jute.EventDataWatchRemoved, jute.EventChildWatchRemoved, jute.EventPersistentWatchRemoved, 42} {
		if ds := r.Trigger("/a", typ, 1); ds != nil {
			t.Errorf("Trigger type %d = %v, want nil", typ, ds)
		}
	}
	if !r.Check(1, "/a", jute.WatcherData) {
		t.Fatalf("an unknown event type used up the watch")
	}
}

func TestParent(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/", "", false},
		{"/a", "/", true},
		{"/a/b", "/a", true},
		{"/a/b/", "/a/b", true},
		{"a", "", false},
		{"a/b", "a", true},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := parent(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parent(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// Odd path text must not break Trigger's walk up the tree.
func FuzzTrigger(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "", "a", "//", "/a//b/", "a/b"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, watched, changed string) {
		var r Registry
		r.Add(1, watched, ModePersistentRecursive)
		r.Add(2, watched, ModeData)
		for _, typ := range []int32{jute.EventNodeCreated, jute.EventNodeDeleted, jute.EventNodeDataChanged, jute.EventNodeChildrenChanged} {
			ds := r.Trigger(changed, typ, 1)
			for i := 1; i < len(ds); i++ {
				if ds[i-1].Watcher >= ds[i].Watcher {
					t.Fatalf("deliveries out of order: %v", ds)
				}
			}
			if changed == watched && typ != jute.EventNodeChildrenChanged && (len(ds) == 0 || ds[0].Watcher != 1) {
				t.Fatalf("recursive watch on %q missed %d on itself: %v", watched, typ, ds)
			}
		}
	})
}
