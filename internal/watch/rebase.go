package watch

import (
	"cmp"
	"slices"

	"github.com/zoohq/zoo/internal/jute"
)

// Rebase moves every watcher's one-time watches from the state they were
// set on (prev, as of zxid rel) to one that replaced it in a jump (now,
// as of zxid): a follower that installs its leader's snapshot applies
// none of the changes in between, so Trigger never saw them. Each
// watcher's one-time watches are taken out and handed to SetWatches with
// rel as the relative zxid, as if its client had reconnected having seen
// rel: what the jump changed fires now, the rest is registered again.
// Persistent and recursive watches stay; what they missed is lost, as
// after a reconnect.
//
// The data table does not tell an exists watch from a getData one; prev
// does: a data-table watch on a node that existed in prev is a data
// watch (NodeDataChanged or NodeDeleted), on one that did not an exist
// watch (NodeCreated).
//
// The deliveries are ordered by watcher, and for each in SetWatches'
// order, paths sorted within each list. Neither state may change until
// Rebase returns, nor may a watch be added meanwhile (the server holds the
// state's write lock).
func (r *Registry) Rebase(rel, zxid int64, prev, now NodeInfo) []Delivery {
	taken := r.takeOnce()
	var out []Delivery
	for _, t := range taken {
		req := &jute.SetWatches2{RelativeZxid: rel}
		for _, p := range t.data {
			if _, ok := prev.Stat(p); ok {
				req.DataWatches = append(req.DataWatches, p)
			} else {
				req.ExistWatches = append(req.ExistWatches, p)
			}
		}
		req.ChildWatches = t.child
		out = append(out, r.SetWatches(t.w, req, zxid, now)...)
	}
	return out
}

// onceWatches is one watcher's one-time registrations.
type onceWatches struct {
	w           Watcher
	data, child []string
}

// takeOnce removes every one-time registration and returns them by
// watcher, in watcher order, paths sorted.
func (r *Registry) takeOnce() []onceWatches {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []onceWatches
	for w, wp := range r.watchers {
		t := onceWatches{w: w}
		wp.ids.each(func(id pathID, _ struct{}) {
			old := r.get(id, w)
			if old&dataOnce != 0 {
				t.data = append(t.data, r.paths.path(id))
			}
			if old&childOnce != 0 {
				t.child = append(t.child, r.paths.path(id))
			}
		})
		if len(t.data)+len(t.child) > 0 {
			out = append(out, t)
		}
	}
	// Changed outside the walk: a change may drop the watcher's path set.
	for _, t := range out {
		for _, p := range t.data {
			r.dropOnce(t.w, p, dataOnce)
		}
		for _, p := range t.child {
			r.dropOnce(t.w, p, childOnce)
		}
		slices.Sort(t.data)
		slices.Sort(t.child)
	}
	r.compact()
	slices.SortFunc(out, func(a, b onceWatches) int { return cmp.Compare(a.w, b.w) })
	return out
}

// dropOnce removes w's registration bit on path; r.mu is held.
func (r *Registry) dropOnce(w Watcher, path string, bit regs) {
	id := r.paths.find(path)
	if id == 0 {
		return
	}
	old := r.get(id, w)
	r.change(id, w, old, old&^bit)
}
