// Package watch is the registry of the watches that the clients of one
// server have set, and the rules that decide which of them a change fires.
//
// The rules are Apache ZooKeeper's (programmer's guide, "ZooKeeper
// Watches"; DataTree and WatchManager in the 3.8 server). Apache keeps two
// tables, data watches and child watches, and so does this package, as
// bits per (watcher, path):
//
//	registration                    data table    child table
//	getData, exists (ModeData)      one-time      -
//	getChildren (ModeChild)         -             one-time
//	addWatch PERSISTENT             persistent    persistent
//	addWatch PERSISTENT_RECURSIVE   recursive     recursive
//
// A change fires these tables of its path (Trigger):
//
//	NodeCreated(p)          data table of p
//	NodeDataChanged(p)      data table of p
//	NodeChildrenChanged(p)  child table of p
//	NodeDeleted(p)          data and child tables of p
//
// plus, for every type but NodeChildrenChanged, the recursive watches of
// p's ancestors. A watcher gets at most one event per Trigger however many of
// its watches match (guide, "Things to Remember about Watches": a watch
// object is triggered once per notification). One-time registrations of the
// fired tables are removed; persistent and recursive ones stay, even when
// their node is deleted.
//
// Where this package differs from Apache 3.8.0 it follows the fix Apache
// made later: in 3.8.0 a watcher has one mode per path and table, so a
// getData watch on a path that also has a persistent watch silently turns
// the persistent watch into a one-time one (ZOOKEEPER-4466, fixed upstream after 3.8.0).
// Here the registrations coexist.
//
// Apache's server never sends DataWatchRemoved, ChildWatchRemoved or
// PersistentWatchRemoved events: client libraries make them up locally
// when removeWatches succeeds. Notifications carry zxid -1 in their reply
// header on Apache 3.8; Event.Zxid is there for the server to use or not.
//
// Watch events are also subject to ACLs: Apache 3.8 delivers an event only
// if the watcher's session has READ on the node the event is about (the
// created node, the changed node, the deleted node as it was, the parent
// for NodeChildrenChanged), and a one-time watch is used up even when its
// event is withheld (seen on Apache 3.8). The registry knows nothing of
// ACLs; the server filters the deliveries of each Trigger with acl.Check,
// so a delete must report the ACL the deleted node had.
//
// A Registry is safe for concurrent use. Its one mutex is a leaf: it is
// never held while calling code outside the package.
package watch

import (
	"cmp"
	"slices"
	"sync"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/shrink"
)

// Watcher identifies the owner of watches, normally a client connection.
// The server chooses the values; the registry only compares them.
type Watcher uint64

// Mode is the kind of watch a request sets.
type Mode uint8

// The kinds of watch.
const (
	// ModeData is set by getData, and by exists whether or not the node
	// exists (Apache keeps "exist" watches in the data table too). It fires
	// once, on NodeCreated, NodeDataChanged or NodeDeleted of its path.
	ModeData Mode = iota + 1
	// ModeChild is set by getChildren. It fires once, on
	// NodeChildrenChanged or NodeDeleted of its path.
	ModeChild
	// ModePersistent is addWatch mode PERSISTENT: NodeCreated,
	// NodeDataChanged, NodeChildrenChanged and NodeDeleted of its path,
	// until removed.
	ModePersistent
	// ModePersistentRecursive is addWatch mode PERSISTENT_RECURSIVE:
	// NodeCreated, NodeDataChanged and NodeDeleted of its path and of every
	// path below it (never NodeChildrenChanged), until removed.
	ModePersistentRecursive
)

// Event is a watch notification, before the server adds the keeper state.
type Event struct {
	Type int32 // jute.EventNodeCreated, ...
	Path string
	Zxid int64 // the zxid given to Trigger or SetWatches
}

// Delivery is an event for one watcher.
type Delivery struct {
	Watcher Watcher
	Event   Event
}

// regs is the set of registrations of one watcher on one path.
type regs uint8

const (
	dataOnce regs = 1 << iota
	dataPersistent
	dataRecursive
	childOnce
	childPersistent
	childRecursive

	dataTable      = dataOnce | dataPersistent | dataRecursive
	childTable     = childOnce | childPersistent | childRecursive
	onceRegs       = dataOnce | childOnce
	recursiveRegs  = dataRecursive | childRecursive
	allRegs        = dataTable | childTable
	persistentRegs = dataPersistent | childPersistent
)

func (m Mode) regs() regs {
	switch m {
	case ModeData:
		return dataOnce
	case ModeChild:
		return childOnce
	case ModePersistent:
		return persistentRegs
	case ModePersistentRecursive:
		return recursiveRegs
	}
	return 0
}

// tableMasks are the sets of registrations Summary counts by: Apache's
// data table, its child table, and both.
var tableMasks = [...]regs{dataTable, childTable, allRegs}

// watcherPaths is the paths one watcher has a registration on.
type watcherPaths struct {
	ids smallMap[pathID, struct{}] // a map of ids has no pointers for the collector to scan
	in  [len(tableMasks)]uint32
}

// Registry holds the watches of one server's clients. The zero value is
// ready to use.
type Registry struct {
	mu    sync.Mutex
	paths pathTable
	// many holds the registrations of the paths with several watchers,
	// recursive the watchers with a recursive registration on a path, so
	// that walking the ancestors of a changed path looks only at them.
	many      map[pathID]map[Watcher]regs
	recursive map[pathID]map[Watcher]struct{}
	watchers  map[Watcher]*watcherPaths
	// recursives counts (watcher, path) pairs with a recursive
	// registration; while it is 0 no Trigger needs to look at ancestors.
	recursives int
	// sum counts, for each of tableMasks, the watchers, paths and (watcher,
	// path) pairs with a registration in it.
	sum [len(tableMasks)]Summary
	// The sizes of watchers, many and recursive at their peaks: the maps
	// are rebuilt when they empty, to give their memory back (shrink.Map).
	watchersPeak, manyPeak, recursivePeak int
}

// Add registers a watch of mode m by w on path. Adding a registration that
// already exists changes nothing. An unknown mode is ignored.
//
// The server must not Add for a watcher after RemoveWatcher(w) unless w is
// in use again: the registry cannot tell a closed connection from a new one.
func (r *Registry) Add(w Watcher, path string, m Mode) {
	add := m.regs()
	if add == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(w, path, add)
}

func (r *Registry) addLocked(w Watcher, path string, add regs) {
	id := r.paths.add(path)
	old := r.get(id, w)
	r.change(id, w, old, old|add)
}

// change sets w's registrations on path id from old to now and keeps every
// index and count in step. It releases id when nobody watches it any more;
// the caller must not use id after a change to 0 unless it knows others
// still watch it.
func (r *Registry) change(id pathID, w Watcher, old, now regs) {
	if old == now {
		return
	}
	pr := r.paths.rec(id)
	wp := r.watcher(w)
	for i, m := range tableMasks {
		switch {
		case old&m == 0 && now&m != 0:
			r.sum[i].Watches++
			if pr.in[i]++; pr.in[i] == 1 {
				r.sum[i].Paths++
			}
			if wp.in[i]++; wp.in[i] == 1 {
				r.sum[i].Watchers++
			}
		case old&m != 0 && now&m == 0:
			r.sum[i].Watches--
			if pr.in[i]--; pr.in[i] == 0 {
				r.sum[i].Paths--
			}
			if wp.in[i]--; wp.in[i] == 0 {
				r.sum[i].Watchers--
			}
		}
	}
	switch {
	case old&recursiveRegs == 0 && now&recursiveRegs != 0:
		r.recursives++
		rw := r.recursive[id]
		if rw == nil {
			if r.recursive == nil {
				r.recursive = make(map[pathID]map[Watcher]struct{})
			}
			rw = make(map[Watcher]struct{})
			r.recursive[id] = rw
		}
		rw[w] = struct{}{}
	case old&recursiveRegs != 0 && now&recursiveRegs == 0:
		r.recursives--
		delete(r.recursive[id], w)
		if len(r.recursive[id]) == 0 {
			delete(r.recursive, id)
			r.recursive = shrink.Map(r.recursive, &r.recursivePeak)
		}
	}
	if now != 0 {
		r.set(id, pr, w, now)
		wp.ids.set(id, struct{}{})
		return
	}
	if r.del(id, pr, w) {
		r.paths.release(id)
	}
	wp.ids.del(id)
	if wp.ids.len() == 0 {
		delete(r.watchers, w)
		r.watchers = shrink.Map(r.watchers, &r.watchersPeak)
	}
}

// get returns w's registrations on path id.
func (r *Registry) get(id pathID, w Watcher) regs {
	pr := r.paths.rec(id)
	switch {
	case pr.many:
		return r.many[id][w]
	case pr.one && pr.w == w:
		return pr.b
	}
	return 0
}

// set sets w's registrations on path id (record pr) to b, which is not 0.
// A path keeps its first watcher in its record and moves to r.many when a
// second one comes: most paths have one watcher.
func (r *Registry) set(id pathID, pr *pathRec, w Watcher, b regs) {
	switch {
	case pr.many:
		r.many[id][w] = b
	case !pr.one || pr.w == w:
		pr.w, pr.b, pr.one = w, b, true
	default:
		if r.many == nil {
			r.many = make(map[pathID]map[Watcher]regs)
		}
		r.many[id] = map[Watcher]regs{pr.w: pr.b, w: b}
		pr.w, pr.b, pr.one, pr.many = 0, 0, false, true
	}
}

// del removes w's registrations on path id (record pr) and reports
// whether the path has no watcher left. A path that has had several
// watchers keeps them in r.many until the last one goes.
func (r *Registry) del(id pathID, pr *pathRec, w Watcher) (empty bool) {
	if pr.many {
		delete(r.many[id], w)
		if len(r.many[id]) > 0 {
			return false
		}
		delete(r.many, id)
		r.many = shrink.Map(r.many, &r.manyPeak)
		pr.many = false
		return true
	}
	if pr.one && pr.w == w {
		pr.w, pr.b, pr.one = 0, 0, false
	}
	return !pr.one
}

// each calls f for every watcher of path id with its registrations. f may
// change the registrations of the watcher it is given.
func (r *Registry) each(id pathID, f func(Watcher, regs)) {
	pr := r.paths.rec(id)
	if pr.many {
		for w, b := range r.many[id] {
			f(w, b)
		}
		return
	}
	if pr.one {
		f(pr.w, pr.b)
	}
}

// watcher returns w's paths, making an empty set for a new watcher.
func (r *Registry) watcher(w Watcher) *watcherPaths {
	wp := r.watchers[w]
	if wp == nil {
		if r.watchers == nil {
			r.watchers = make(map[Watcher]*watcherPaths)
		}
		wp = &watcherPaths{}
		r.watchers[w] = wp
	}
	return wp
}

// compact gives memory back once the registry holds a quarter of what it
// did, or its path bytes are mostly released. Renumbering every path costs
// time in proportion to what is left, so shrinking by a constant factor
// keeps the cost per removed watch constant; but it is paid at once,
// under the lock that Trigger takes: 0.26 µs per path left in
// BenchmarkCompact, 0.6 s of stalled writes when 3M of 4M watches close
// (the map of strings this replaced stalled 0.4 s there). Moving records
// a few at a time would bound the stall; not done yet.
func (r *Registry) compact() {
	if !r.paths.sparse() {
		return
	}
	if r.paths.live == 0 { // every watch is gone: nothing to renumber
		r.paths = pathTable{}
		return
	}
	t, moved := r.paths.rebuild()
	r.paths = *t
	for _, wp := range r.watchers {
		wp.ids = renumbered(wp.ids, moved)
	}
	r.many = renumberedKeys(r.many, moved)
	r.recursive = renumberedKeys(r.recursive, moved)
	r.manyPeak, r.recursivePeak = len(r.many), len(r.recursive)
}

func renumberedKeys[V any](m map[pathID]V, moved []pathID) map[pathID]V {
	if len(m) == 0 {
		return nil
	}
	out := make(map[pathID]V, len(m))
	for id, v := range m {
		out[moved[id]] = v
	}
	return out
}

// renumbered returns ids with each id replaced by moved[id].
func renumbered(ids smallMap[pathID, struct{}], moved []pathID) smallMap[pathID, struct{}] {
	if ids.m == nil {
		if ids.one {
			ids.k = moved[ids.k]
		}
		return ids
	}
	m := make(map[pathID]struct{}, len(ids.m))
	for id := range ids.m {
		m[moved[id]] = struct{}{}
	}
	return smallMap[pathID, struct{}]{m: m}
}

// firedTables is the registrations an event type fires on its own path.
func firedTables(eventType int32) regs {
	switch eventType {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		if eventType == jute.EventNodeDataChanged && mutated(MutChildFiresOnSetData) {
			return dataTable | childTable
		}
		return dataTable
	case jute.EventNodeChildrenChanged:
		return childTable
	case jute.EventNodeDeleted:
		return dataTable | childTable
	}
	return 0
}

// Trigger fires the watches that a change of eventType at path concerns
// and returns one delivery per watcher, ordered by watcher. One-time
// watches that fire are removed. Other event types return nil.
//
// The server calls Trigger once per (path, type) a txn reports, in order:
// a create gives NodeCreated(path) then NodeChildrenChanged(parent); a
// delete gives NodeDeleted(path) then NodeChildrenChanged(parent); a
// setData gives NodeDataChanged(path). A NodeDeleted fires both the data
// and the child watches of path but sends each watcher one event, as
// Apache's DataTree.deleteNode does by passing the data watchers it
// notified as the set to suppress when it fires the child watchers.
//
// The server should drop deliveries whose watcher may not READ the node
// (see the package comment). Trigger does not allocate when nothing fires.
func (r *Registry) Trigger(path string, eventType int32, zxid int64) []Delivery {
	tables := firedTables(eventType)
	if tables == 0 {
		return nil
	}
	ev := Event{Type: eventType, Path: path, Zxid: zxid}
	var out []Delivery
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := r.paths.find(path); id != 0 {
		if pr := r.paths.rec(id); pr.many {
			out = make([]Delivery, 0, len(r.many[id]))
		}
		r.each(id, func(w Watcher, old regs) {
			hit := old & tables
			if hit == 0 {
				return
			}
			// Recursive watches never see NodeChildrenChanged; everything
			// else that is registered in a fired table fires.
			if hit&^recursiveRegs != 0 || eventType != jute.EventNodeChildrenChanged {
				out = append(out, Delivery{Watcher: w, Event: ev})
			}
			used := hit & onceRegs
			if mutated(MutPersistentOnce) {
				used = hit
			}
			r.change(id, w, old, old&^used)
		})
		r.compact()
	}
	if r.recursives > 0 && eventType != jute.EventNodeChildrenChanged {
		for p, ok := parent(path); ok; p, ok = parent(p) {
			if pp, _ := parent(path); mutated(MutRecursiveSkipsGrandchildren) && p != pp {
				break
			}
			id := r.paths.find(p)
			if id == 0 {
				continue
			}
			for w := range r.recursive[id] {
				if r.get(id, w)&tables&recursiveRegs != 0 {
					out = append(out, Delivery{Watcher: w, Event: ev})
				}
			}
		}
	}
	return sortDeliveries(out)
}

// parent returns the parent of an absolute path, false for "/" and for
// text without a slash.
func parent(p string) (string, bool) {
	if p == "/" {
		return "", false
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if i == 0 {
				return "/", true
			}
			return p[:i], true
		}
	}
	return "", false
}

// sortDeliveries orders ds by watcher and drops repeats of a watcher.
func sortDeliveries(ds []Delivery) []Delivery {
	if len(ds) < 2 {
		return ds
	}
	slices.SortFunc(ds, func(a, b Delivery) int { return cmp.Compare(a.Watcher, b.Watcher) })
	return slices.CompactFunc(ds, func(a, b Delivery) bool { return a.Watcher == b.Watcher })
}

// typeRegs maps a removeWatches/checkWatches watcher type to the tables it
// names. Children and Data name one of Apache's two tables, Any both.
func typeRegs(watcherType int32) regs {
	switch watcherType {
	case jute.WatcherChildren:
		return childTable
	case jute.WatcherData:
		return dataTable
	case jute.WatcherAny:
		return allRegs
	}
	return 0
}

// Remove implements removeWatches: it removes w's registrations on path in
// the tables watcherType names (jute.WatcherChildren, WatcherData or
// WatcherAny) and reports whether there were any; if not, the server
// answers NoWatcher. Only the exact path counts, not recursive watches on
// its ancestors.
//
// Persistent and recursive watches live in both tables, as in Apache 3.8,
// so WatcherAny removes them whole while WatcherChildren or WatcherData
// removes one half: a persistent watch that loses its child half no longer
// sees NodeChildrenChanged, and a recursive watch that loses its data half
// still sees NodeDeleted (below and at its path) but no longer NodeCreated
// or NodeDataChanged. This is what Apache 3.8 does.
func (r *Registry) Remove(w Watcher, path string, watcherType int32) bool {
	tables := typeRegs(watcherType)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.paths.find(path)
	if id == 0 {
		return false
	}
	old := r.get(id, w)
	if old&tables == 0 {
		return false
	}
	if halves := persistentRegs | recursiveRegs; mutated(MutRemoveWholePersistent) && old&tables&halves != 0 {
		tables |= old & halves
	}
	r.change(id, w, old, old&^tables)
	r.compact()
	return true
}

// Check implements checkWatches: whether w has a registration on path in
// the tables watcherType names. Apache 3.8.0 answers true when any watcher
// at all has one there (its WatchManager.containsWatcher ignores the
// watcher); Zoo answers for w only.
func (r *Registry) Check(w Watcher, path string, watcherType int32) bool {
	tables := typeRegs(watcherType)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.paths.find(path)
	if id == 0 {
		return false
	}
	b := r.get(id, w)
	return b&tables != 0
}

// RemoveWatcher removes every watch of w, for a closed connection, and
// returns how many (watcher, path) pairs it removed.
func (r *Registry) RemoveWatcher(w Watcher) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	wp := r.watchers[w]
	if wp == nil {
		return 0
	}
	n := wp.ids.len()
	wp.ids.each(func(id pathID, _ struct{}) {
		old := r.get(id, w)
		r.change(id, w, old, 0)
	})
	r.compact()
	return n
}
