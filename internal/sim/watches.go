package sim

import (
	"fmt"
	"maps"
	"slices"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/watch"
)

// The client's watch model. A client knows which watches it holds: a
// read's reply at zxid z registers its watch as of z (the server
// registers it in the read's critical section), and the events of every
// change applied before the reply was computed reach the client before
// it. So, walking the triggers its member applied, in order, the client
// can say which events it is owed and when: a naive reference of the
// rules internal/watch implements (Apache's; see its package comment),
// checked against what the member's request path sends.

// wkind is the kind of a watch a client holds. A persistent or recursive
// watch is two halves, one in each of Apache's tables (data and child),
// as internal/watch keeps them: removeWatches of one watcher type takes
// one half away.
type wkind uint8

const (
	wData            wkind = iota // one-time: getData, or exists (exist: on a missing node)
	wChild                        // one-time: getChildren
	wPersistent                   // addWatch PERSISTENT, its data half
	wPersistentChild              // its child half
	wRecursive                    // addWatch PERSISTENT_RECURSIVE, its data half
	wRecursiveChild               // its child half
)

func (k wkind) String() string {
	return [...]string{"data", "child", "persistent", "persistent(child half)", "recursive", "recursive(child half)"}[k]
}

// halves are the two kinds of an addWatch mode.
func halves(mode int32) [2]wkind {
	if mode == jute.AddWatchPersistentRecursive {
		return [2]wkind{wRecursive, wRecursiveChild}
	}
	return [2]wkind{wPersistent, wPersistentChild}
}

// wkey is one watch: a kind on a path.
type wkey struct {
	path string
	kind wkind
}

// armedWatch is a watch the client holds, registered as of zxid set: only
// a change applied after set fires it. exist marks a data watch that an
// exists set on a missing node (setWatches lists it as an exist watch).
type armedWatch struct {
	set   int64
	exist bool
}

// arm records a watch registered as of zxid set. A watch the client holds
// already keeps its registration: the server's is as old.
func (c *client) arm(k wkey, w armedWatch) {
	if _, ok := c.watches[k]; !ok {
		c.watches[k] = w
	}
}

// fires applies trigger t to the client's watches, as the registry does:
// it reports whether t owes the client an event (one, however many of
// its watches t fires, and none if it may not read the node) and uses up
// the one-time watches it fires.
func (c *client) fires(t appliedTrigger) bool {
	hit := false
	use := func(path string, kind wkind) {
		k := wkey{path, kind}
		w, ok := c.watches[k]
		if !ok || w.set >= t.zxid {
			return
		}
		hit = true
		if kind == wData || kind == wChild {
			delete(c.watches, k)
		}
	}
	// A change fires the watches of its path in the tables its type
	// names (NodeDeleted both), and the recursive watches of the path and
	// its ancestors in those tables, never for NodeChildrenChanged.
	var data, child bool
	switch t.typ {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		data = true
	case jute.EventNodeChildrenChanged:
		child = true
	case jute.EventNodeDeleted:
		data, child = true, true
	default:
		return false
	}
	if data {
		use(t.path, wData)
		use(t.path, wPersistent)
	}
	if child {
		use(t.path, wChild)
		use(t.path, wPersistentChild)
	}
	if t.typ != jute.EventNodeChildrenChanged {
		for p, ok := t.path, true; ok; p, ok = parentPath(p) {
			if data {
				use(p, wRecursive)
			}
			if child {
				use(p, wRecursiveChild)
			}
		}
	}
	// The server withholds the event from a watcher that may not read
	// the node; the one-time watches are used up all the same.
	return hit && readable(c.who, t.path)
}

// parentPath is the parent of an absolute path; false for "/".
func parentPath(p string) (string, bool) {
	if p == "/" || p == "" {
		return "", false
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i], true
		}
	}
	return "/", true
}

// nextOwed walks the member's triggers up to zxid limit from where the
// connection is, and returns the first that owes the client an event.
// Nothing is owed on a connection whose watches are not registered yet
// (its setWatches is not answered).
func (c *client) nextOwed(cn *conn, limit int64) (appliedTrigger, bool) {
	if !cn.watching {
		return appliedTrigger{}, false
	}
	log := cn.m.trigLog
	for cn.cursor < len(log) && log[cn.cursor].zxid <= limit {
		t := log[cn.cursor]
		cn.cursor++
		if c.fires(t) {
			return t, true
		}
	}
	return appliedTrigger{}, false
}

// skipTo moves the connection past the member's triggers up to zxid: they
// fire nothing the client holds on it.
func (cn *conn) skipTo(zxid int64) {
	log := cn.m.trigLog
	for cn.cursor < len(log) && log[cn.cursor].zxid <= zxid {
		cn.cursor++
	}
}

// checkEvent checks a watch event that is not owed by a setWatches: it
// must be the next one the client's watches are owed, in the member's
// apply order.
func (c *client) checkEvent(cn *conn, ev watch.Event) {
	t, ok := c.nextOwed(cn, ev.Zxid)
	switch {
	case !ok:
		c.s.fail("watch: c%d got %d on %s at zxid %d from m%d, which no watch it holds owes (%s)",
			c.id, ev.Type, ev.Path, ev.Zxid, cn.m.id, c.s.trig[ev.Zxid])
	case t.zxid != ev.Zxid || t.typ != ev.Type || t.path != ev.Path:
		c.s.fail("watch: c%d got %d on %s at zxid %d from m%d, but %d on %s at zxid %d came first (lost or out of order)",
			c.id, ev.Type, ev.Path, ev.Zxid, cn.m.id, t.typ, t.path, t.zxid)
	}
}

// checkDelivered: a reply computed at zxid comes after every event of the
// changes up to zxid (DESIGN decision 7): none may still be owed.
func (c *client) checkDelivered(cn *conn, zxid int64, what string) {
	for {
		t, ok := c.nextOwed(cn, zxid)
		if !ok {
			return
		}
		c.s.fail("watch lost: c%d got %s at zxid %d from m%d without the event %d on %s of zxid %d",
			c.id, what, zxid, cn.m.id, t.typ, t.path, t.zxid)
	}
}

// setWatches makes cl the setWatches2 of the client's watches, relative
// to the last zxid a reply brought it (a notification carries none: as
// Apache's client, it counts replies only). Each list is sorted.
func (c *client) setWatches(cl *call) *jute.SetWatches2 {
	cl.rewatch, cl.rel = maps.Clone(c.watches), c.replyZxid
	sw := &jute.SetWatches2{RelativeZxid: cl.rel}
	// A persistent watch of which one half is left is listed all the
	// same: the server registers both halves again, as Apache's does.
	listed := func(list []string, p string) []string {
		if n := len(list); n > 0 && list[n-1] == p {
			return list
		}
		return append(list, p)
	}
	for _, k := range sortedKeys(c.watches) {
		switch k.kind {
		case wData:
			if c.watches[k].exist {
				sw.ExistWatches = append(sw.ExistWatches, k.path)
			} else {
				sw.DataWatches = append(sw.DataWatches, k.path)
			}
		case wChild:
			sw.ChildWatches = append(sw.ChildWatches, k.path)
		case wPersistent, wPersistentChild:
			sw.PersistentWatches = listed(sw.PersistentWatches, k.path)
		case wRecursive, wRecursiveChild:
			sw.PersistentRecursiveWatches = listed(sw.PersistentRecursiveWatches, k.path)
		}
	}
	return sw
}

func sortedKeys(m map[wkey]armedWatch) []wkey {
	return slices.SortedFunc(maps.Keys(m), func(a, b wkey) int {
		if a.path != b.path {
			if a.path < b.path {
				return -1
			}
			return 1
		}
		return int(a.kind) - int(b.kind)
	})
}

// owedBySetWatches is what a setWatches relative to rel and answered at
// zxid owes a one-time watch, by Apache's DataTree.setWatches: a data
// watch NodeDeleted if its node is gone, NodeDataChanged if it changed
// after rel (mzxid > rel); an exist watch NodeCreated if its node is
// there; a child watch NodeDeleted if its node is gone, else
// NodeChildrenChanged if a child came or went after rel, or the node was
// made again (pzxid > rel). Persistent watches are registered again and
// owed nothing: what they missed is lost, as in Apache.
func (s *Sim) owedBySetWatches(k wkey, w armedWatch, rel, zxid int64) (typ int32, owed bool) {
	var life int32 // the last NodeCreated or NodeDeleted of the path
	var data, child bool
	for z := rel + 1; z <= zxid; z++ {
		for _, t := range s.trigs[z] {
			if t.path != k.path {
				continue
			}
			switch t.typ {
			case jute.EventNodeCreated:
				life, data, child = t.typ, true, true
			case jute.EventNodeDeleted:
				life = t.typ
			case jute.EventNodeDataChanged:
				data = true
			case jute.EventNodeChildrenChanged:
				child = true
			}
		}
	}
	switch k.kind {
	case wData:
		if w.exist {
			// Missing when set; there now if it was made or changed since.
			return jute.EventNodeCreated, life == jute.EventNodeCreated || (life == 0 && data)
		}
		if life == jute.EventNodeDeleted {
			return jute.EventNodeDeleted, true
		}
		return jute.EventNodeDataChanged, data
	case wChild:
		if life == jute.EventNodeDeleted {
			return jute.EventNodeDeleted, true
		}
		return jute.EventNodeChildrenChanged, child
	}
	return 0, false
}

// checkOwed checks a setWatches' reply, at zxid, against the changes the
// client missed, those after cl.rel up to zxid: the events that came
// before the reply are exactly those its one-time watches are owed, in
// the order of its lists (data, exist, child), and the watches not fired
// are registered again as of zxid, persistent ones all.
func (c *client) checkOwed(cn *conn, cl *call, code jute.Code, zxid int64) {
	if code != jute.OK {
		c.s.fail("c%d: setWatches on m%d failed with %v", c.id, cn.m.id, code)
		return
	}
	type owedEv struct {
		k   wkey
		typ int32
	}
	var want []owedEv
	keys := sortedKeys(cl.rewatch)
	for _, pass := range []func(wkey, armedWatch) bool{
		func(k wkey, w armedWatch) bool { return k.kind == wData && !w.exist },
		func(k wkey, w armedWatch) bool { return k.kind == wData && w.exist },
		func(k wkey, w armedWatch) bool { return k.kind == wChild },
	} {
		for _, k := range keys {
			w := cl.rewatch[k]
			if !pass(k, w) {
				continue
			}
			if typ, owed := c.s.owedBySetWatches(k, w, cl.rel, zxid); owed {
				want = append(want, owedEv{k, typ})
			}
		}
	}
	got := cl.owed
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			c.s.fail("watch lost across a reconnect: c%d's %s watch on %s (set at %d) owed event %d for the changes in (%d, %d], got none from m%d",
				c.id, want[i].k.kind, want[i].k.path, cl.rewatch[want[i].k].set, want[i].typ, cl.rel, zxid, cn.m.id)
		case i >= len(want):
			c.s.fail("watch: c%d got %d on %s at setWatches on m%d, owed by none of its watches for the changes in (%d, %d]",
				c.id, got[i].Type, got[i].Path, cn.m.id, cl.rel, zxid)
		case got[i].Type != want[i].typ || got[i].Path != want[i].k.path:
			c.s.fail("watch: c%d got %d on %s at setWatches on m%d, want %d on %s (its %s watch) for the changes in (%d, %d]",
				c.id, got[i].Type, got[i].Path, cn.m.id, want[i].typ, want[i].k.path, want[i].k.kind, cl.rel, zxid)
		}
		if i < len(want) {
			delete(c.watches, want[i].k)
		}
	}
	// Registered again as of zxid: what changed before is settled above
	// (an exist watch misses a node made and deleted again meanwhile, as
	// in Apache; a persistent watch misses all).
	cn.skipTo(zxid)
	cn.watching = true
	for k, w := range c.watches {
		if _, ok := cl.rewatch[k]; ok {
			c.watches[k] = armedWatch{set: zxid, exist: w.exist}
		}
	}
	for k := range cl.rewatch {
		switch k.kind {
		case wPersistent, wPersistentChild:
			c.watches[wkey{k.path, wPersistent}] = armedWatch{set: zxid}
			c.watches[wkey{k.path, wPersistentChild}] = armedWatch{set: zxid}
		case wRecursive, wRecursiveChild:
			c.watches[wkey{k.path, wRecursive}] = armedWatch{set: zxid}
			c.watches[wkey{k.path, wRecursiveChild}] = armedWatch{set: zxid}
		}
	}
}

// expectWatchReply checks the code of a removeWatches or checkWatches
// answered at zxid (the events up to it are in, so the client's watches
// are the server's registrations) and, for a removeWatches, drops the
// watches it removed. Both look at the path itself only: data names the
// data table (data watches, the data halves of persistent and recursive
// ones), children the child table (child watches, the child halves), any
// both. So a removeWatches of one type leaves half a persistent watch, as
// in Apache 3.8: without its child half it misses NodeChildrenChanged; a
// recursive one without its data half still sees NodeDeleted.
func (c *client) expectWatchReply(cn *conn, cl *call, code jute.Code) {
	var kinds []wkind
	switch cl.in.mode {
	case jute.WatcherData:
		kinds = []wkind{wData, wPersistent, wRecursive}
	case jute.WatcherChildren:
		kinds = []wkind{wChild, wPersistentChild, wRecursiveChild}
	default:
		kinds = []wkind{wData, wChild, wPersistent, wPersistentChild, wRecursive, wRecursiveChild}
	}
	held := false
	for _, k := range kinds {
		if _, ok := c.watches[wkey{cl.in.path, k}]; ok {
			held = true
			if cl.in.op == opRemoveWatches {
				delete(c.watches, wkey{cl.in.path, k})
			}
		}
	}
	want := jute.NoWatcher
	if held {
		want = jute.OK
	}
	if code != want && !sessionLevel(code) {
		c.s.fail("watch: c%d's %s on m%d answered %v, want %v (its watches there: %v)", c.id, cl.in, cn.m.id, code, want, c.watchesOn(cl.in.path))
	}
}

func (c *client) watchesOn(path string) string {
	var out []string
	for _, k := range sortedKeys(c.watches) {
		if k.path == path {
			out = append(out, fmt.Sprintf("%s@%d", k.kind, c.watches[k].set))
		}
	}
	return fmt.Sprint(out)
}
