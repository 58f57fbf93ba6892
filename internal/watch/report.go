package watch

import (
	"cmp"
	"slices"
)

// Table selects Apache's watch tables for introspection.
type Table uint8

// The tables. Apache's four-letter words wchs, wchc and wchp report the
// DataTable only (getChildren watches do not show); mntr's zk_watch_count
// counts both (see Len).
const (
	DataTable  Table = 1 << iota // getData/exists watches, persistent, recursive
	ChildTable                   // getChildren watches, persistent, recursive
	AllTables  = DataTable | ChildTable
)

func (t Table) regs() regs {
	var m regs
	if t&DataTable != 0 {
		m |= dataTable
	}
	if t&ChildTable != 0 {
		m |= childTable
	}
	return m
}

// Summary is what wchs prints: "<Watchers> connections watching <Paths>
// paths", "Total watches:<Watches>".
type Summary struct {
	Watchers int // watchers with a registration in the tables
	Paths    int // paths with a registration in the tables
	Watches  int // (watcher, path) pairs with a registration in the tables
}

// WatcherPaths is one watcher's watched paths, sorted (wchc).
type WatcherPaths struct {
	Watcher Watcher
	Paths   []string
}

// PathWatchers is one path's watchers, sorted (wchp).
type PathWatchers struct {
	Path     string
	Watchers []Watcher
}

// Len is the number of registrations as Apache's zk_watch_count (mntr)
// counts them: (watcher, path) pairs in the data table plus those in the
// child table, so a persistent watch counts twice.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sum[0].Watches + r.sum[1].Watches
}

// Summary counts the registrations in tables t. It costs the same however
// many watches there are: the registry keeps the counts as they change.
func (r *Registry) Summary(t Table) Summary {
	i := int(t) - 1 // DataTable, ChildTable, AllTables: tableMasks[0..2]
	if i < 0 || i >= len(tableMasks) {
		return Summary{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sum[i]
}

// ByWatcher lists, for wchc, each watcher with the paths it watches in
// tables t, ordered by watcher.
func (r *Registry) ByWatcher(t Table) []WatcherPaths {
	m := t.regs()
	r.mu.Lock()
	out := make([]WatcherPaths, 0, len(r.watchers))
	for w, wp := range r.watchers {
		var paths []string
		wp.ids.each(func(id pathID, _ struct{}) {
			if r.get(id, w)&m != 0 {
				paths = append(paths, r.paths.path(id))
			}
		})
		if len(paths) > 0 {
			out = append(out, WatcherPaths{Watcher: w, Paths: paths})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b WatcherPaths) int { return cmp.Compare(a.Watcher, b.Watcher) })
	for _, wp := range out {
		slices.Sort(wp.Paths)
	}
	return out
}

// ByPath lists, for wchp, each path with its watchers in tables t, ordered
// by path.
func (r *Registry) ByPath(t Table) []PathWatchers {
	m := t.regs()
	r.mu.Lock()
	out := make([]PathWatchers, 0, r.paths.live)
	r.paths.each(func(id pathID, _ *pathRec) {
		var ws []Watcher
		r.each(id, func(w Watcher, b regs) {
			if b&m != 0 {
				ws = append(ws, w)
			}
		})
		if len(ws) > 0 {
			out = append(out, PathWatchers{Path: r.paths.path(id), Watchers: ws})
		}
	})
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b PathWatchers) int { return cmp.Compare(a.Path, b.Path) })
	for _, pw := range out {
		slices.Sort(pw.Watchers)
	}
	return out
}
