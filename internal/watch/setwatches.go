package watch

import "github.com/zoohq/zoo/internal/jute"

// NodeInfo is the view of the data tree that SetWatches needs: the stat of
// a node, false if it does not exist.
type NodeInfo interface {
	Stat(path string) (jute.Stat, bool)
}

// SetWatches handles setWatches and setWatches2, which a client sends
// after reconnecting to re-register the watches it had, with the last zxid
// it saw (req.RelativeZxid). A watch whose event the client missed fires
// now instead of being registered, as in Apache's DataTree.setWatches:
//
//	data watch   node missing: NodeDeleted; mzxid > relative: NodeDataChanged;
//	             else registered (ModeData)
//	exist watch  node exists: NodeCreated; else registered (ModeData)
//	child watch  node missing: NodeDeleted; pzxid > relative: NodeChildrenChanged;
//	             else registered (ModeChild)
//	persistent and persistent-recursive watches are always registered;
//	what they missed is lost.
//
// The returned deliveries are for w, in request order (data, exist, child
// lists), each with Zxid zxid (normally the server's last applied zxid).
// A path in both the data and child lists of a missing node gets two
// NodeDeleted events, as from Apache. For setWatches (v1) leave the
// persistent lists empty.
//
// Unlike Trigger's, these events are not filtered by ACL in Apache 3.8
// (DataTree.setWatches notifies without an ACL, which checkACL allows).
//
// nodes is consulted before the registry's lock is taken. The server must
// keep the tree from changing until SetWatches returns (it holds the tree's
// read lock), or a change could fall between a node's stat and the
// registration of its watch and be lost.
func (r *Registry) SetWatches(w Watcher, req *jute.SetWatches2, zxid int64, nodes NodeInfo) []Delivery {
	type reg struct {
		path string
		add  regs
	}
	var out []Delivery
	var regsToAdd []reg
	fire := func(path string, eventType int32) {
		out = append(out, Delivery{Watcher: w, Event: Event{Type: eventType, Path: path, Zxid: zxid}})
	}
	for _, p := range req.DataWatches {
		switch st, ok := nodes.Stat(p); {
		case !ok:
			fire(p, jute.EventNodeDeleted)
		case st.Mzxid > req.RelativeZxid:
			fire(p, jute.EventNodeDataChanged)
		default:
			regsToAdd = append(regsToAdd, reg{p, dataOnce})
		}
	}
	for _, p := range req.ExistWatches {
		if _, ok := nodes.Stat(p); ok {
			fire(p, jute.EventNodeCreated)
		} else {
			regsToAdd = append(regsToAdd, reg{p, dataOnce})
		}
	}
	for _, p := range req.ChildWatches {
		if mutated(MutSetWatchesDropsChildWatches) {
			break
		}
		switch st, ok := nodes.Stat(p); {
		case !ok:
			fire(p, jute.EventNodeDeleted)
		case st.Pzxid > req.RelativeZxid:
			fire(p, jute.EventNodeChildrenChanged)
		default:
			regsToAdd = append(regsToAdd, reg{p, childOnce})
		}
	}
	if mutated(MutSetWatchesDropsPersistent) {
		req.PersistentWatches, req.PersistentRecursiveWatches = nil, nil
	}
	for _, p := range req.PersistentWatches {
		regsToAdd = append(regsToAdd, reg{p, persistentRegs})
	}
	for _, p := range req.PersistentRecursiveWatches {
		regsToAdd = append(regsToAdd, reg{p, recursiveRegs})
	}
	if len(regsToAdd) == 0 {
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range regsToAdd {
		r.addLocked(w, g.path, g.add)
	}
	return out
}
