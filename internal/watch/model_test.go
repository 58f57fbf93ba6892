package watch

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// model is a literal, slow transcription of Apache's two WatchManagers
// (data and child) and of how DataTree drives them, with the modes of a
// (watcher, path) kept as a set as Apache does since ZOOKEEPER-4466. The
// registry must agree with it on every operation.
type model struct {
	tables [2]map[modelKey]modelModes // 0: data, 1: child
}

type modelKey struct {
	path string
	w    Watcher
}

type modelModes struct{ standard, persistent, recursive bool }

func (m modelModes) empty() bool { return !m.standard && !m.persistent && !m.recursive }

func newModel() *model {
	return &model{tables: [2]map[modelKey]modelModes{{}, {}}}
}

func (m *model) add(w Watcher, path string, mode Mode) {
	set := func(t int, f func(*modelModes)) {
		k := modelKey{path, w}
		mm := m.tables[t][k]
		f(&mm)
		m.tables[t][k] = mm
	}
	switch mode {
	case ModeData:
		set(0, func(mm *modelModes) { mm.standard = true })
	case ModeChild:
		set(1, func(mm *modelModes) { mm.standard = true })
	case ModePersistent: // DataTree.addWatch adds to both managers
		set(0, func(mm *modelModes) { mm.persistent = true })
		set(1, func(mm *modelModes) { mm.persistent = true })
	case ModePersistentRecursive:
		set(0, func(mm *modelModes) { mm.recursive = true })
		set(1, func(mm *modelModes) { mm.recursive = true })
	}
}

// triggerTable is WatchManager.triggerWatch: the path and its parents;
// recursive watches anywhere on the way fire unless the type is
// NodeChildrenChanged; standard and persistent ones fire only on the path
// itself, and standard ones are removed.
func (m *model) triggerTable(t int, path string, typ int32, fired map[Watcher]bool) {
	for p, ok := path, true; ok; p, ok = parent(p) {
		for k, mm := range m.tables[t] {
			if k.path != p {
				continue
			}
			if mm.recursive && typ != jute.EventNodeChildrenChanged {
				fired[k.w] = true
			}
			if p == path && (mm.standard || mm.persistent) {
				fired[k.w] = true
				mm.standard = false
				if mm.empty() {
					delete(m.tables[t], k)
				} else {
					m.tables[t][k] = mm
				}
			}
		}
	}
}

func (m *model) trigger(path string, typ int32) []Watcher {
	fired := map[Watcher]bool{}
	switch typ {
	case jute.EventNodeCreated, jute.EventNodeDataChanged:
		m.triggerTable(0, path, typ, fired)
	case jute.EventNodeChildrenChanged:
		m.triggerTable(1, path, typ, fired)
	case jute.EventNodeDeleted: // deleteNode: data, then child suppressing those notified
		m.triggerTable(0, path, typ, fired)
		m.triggerTable(1, path, typ, fired)
	}
	var ws []Watcher
	for w := range fired {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return ws
}

func kindTables(kind int32) []int {
	switch kind {
	case jute.WatcherData:
		return []int{0}
	case jute.WatcherChildren:
		return []int{1}
	case jute.WatcherAny:
		return []int{0, 1}
	}
	return nil
}

func (m *model) remove(w Watcher, path string, kind int32) bool {
	removed := false
	for _, t := range kindTables(kind) {
		k := modelKey{path, w}
		if _, ok := m.tables[t][k]; ok {
			delete(m.tables[t], k)
			removed = true
		}
	}
	return removed
}

func (m *model) check(w Watcher, path string, kind int32) bool {
	for _, t := range kindTables(kind) {
		if _, ok := m.tables[t][modelKey{path, w}]; ok {
			return true
		}
	}
	return false
}

func (m *model) close(w Watcher) {
	for t := range m.tables {
		for k := range m.tables[t] {
			if k.w == w {
				delete(m.tables[t], k)
			}
		}
	}
}

func (m *model) len() int { return len(m.tables[0]) + len(m.tables[1]) }

// TestAgainstModel runs random operations on a registry and on the model
// and compares every answer.
func TestAgainstModel(t *testing.T) {
	paths := []string{"/", "/a", "/a/b", "/a/b/c", "/a/c", "/b", "/ab"}
	types := []int32{jute.EventNodeCreated, jute.EventNodeDeleted, jute.EventNodeDataChanged, jute.EventNodeChildrenChanged}
	kinds := []int32{jute.WatcherChildren, jute.WatcherData, jute.WatcherAny}
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		var r Registry
		m := newModel()
		for step := 0; step < 300; step++ {
			w := Watcher(rng.IntN(4))
			p := paths[rng.IntN(len(paths))]
			switch op := rng.IntN(10); {
			case op < 4:
				mode := Mode(1 + rng.IntN(4))
				r.Add(w, p, mode)
				m.add(w, p, mode)
			case op < 7:
				typ := types[rng.IntN(len(types))]
				var got []Watcher
				for _, d := range r.Trigger(p, typ, int64(step)) {
					got = append(got, d.Watcher)
				}
				if want := m.trigger(p, typ); !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: Trigger(%s, %d) = %v, model %v", seed, step, p, typ, got, want)
				}
			case op < 8:
				k := kinds[rng.IntN(len(kinds))]
				if got, want := r.Remove(w, p, k), m.remove(w, p, k); got != want {
					t.Fatalf("seed %d step %d: Remove(%d, %s, %d) = %v, model %v", seed, step, w, p, k, got, want)
				}
			case op < 9:
				k := kinds[rng.IntN(len(kinds))]
				if got, want := r.Check(w, p, k), m.check(w, p, k); got != want {
					t.Fatalf("seed %d step %d: Check(%d, %s, %d) = %v, model %v", seed, step, w, p, k, got, want)
				}
			default:
				if rng.IntN(5) == 0 {
					r.RemoveWatcher(w)
					m.close(w)
				}
			}
			if got, want := r.Len(), m.len(); got != want {
				t.Fatalf("seed %d step %d: Len = %d, model %d", seed, step, got, want)
			}
			checkIndexes(t, &r)
		}
	}
}

// checkIndexes verifies the registry's redundant indexes and counts agree.
func checkIndexes(t *testing.T, r *Registry) {
	t.Helper()
	pairs, rec := 0, 0
	var sum [len(tableMasks)]Summary
	watcherIn := map[Watcher][len(tableMasks)]uint32{}
	r.paths.each(func(id pathID, pr *pathRec) {
		path := r.paths.path(id)
		if got := r.paths.find(path); got != id {
			t.Fatalf("find(%s) = %d, record %d", path, got, id)
		}
		if _, inMany := r.many[id]; pr.many != inMany || pr.many == pr.one || (pr.many && len(r.many[id]) == 0) {
			t.Fatalf("%s: one %v, many %v, %d in the map of many", path, pr.one, pr.many, len(r.many[id]))
		}
		var in [len(tableMasks)]uint32
		r.each(id, func(w Watcher, b regs) {
			pairs++
			if b == 0 {
				t.Fatalf("zero registrations kept for %d on %s", w, path)
			}
			if wp := r.watchers[w]; wp == nil {
				t.Fatalf("watcher %d missing from watchers index", w)
			} else if _, ok := wp.ids.get(id); !ok {
				t.Fatalf("path %s missing from watcher %d's index", path, w)
			}
			_, inRec := r.recursive[id][w]
			if inRec != (b&recursiveRegs != 0) {
				t.Fatalf("rec index wrong for %d on %s", w, path)
			}
			if inRec {
				rec++
			}
			wi := watcherIn[w]
			for i, m := range tableMasks {
				if b&m != 0 {
					in[i]++
					wi[i]++
					sum[i].Watches++
				}
			}
			watcherIn[w] = wi
		})
		if in != pr.in {
			t.Fatalf("%s: counts by table %v, kept %v", path, in, pr.in)
		}
		for i := range in {
			if in[i] > 0 {
				sum[i].Paths++
			}
		}
	})
	n := 0
	for w, wp := range r.watchers {
		n += wp.ids.len()
		if watcherIn[w] != wp.in {
			t.Fatalf("watcher %d: counts by table %v, kept %v", w, watcherIn[w], wp.in)
		}
		for i, c := range wp.in {
			if c > 0 {
				sum[i].Watchers++
			}
		}
	}
	if n != pairs || rec != r.recursives {
		t.Fatalf("indexes disagree: %d pairs by path, %d by watcher; %d recursive counted, %d kept", pairs, n, rec, r.recursives)
	}
	for id := range r.many {
		if !r.paths.rec(id).use {
			t.Fatalf("map of many kept for released path %d", id)
		}
	}
	for id := range r.recursive {
		if !r.paths.rec(id).use {
			t.Fatalf("recursive watchers kept for released path %d", id)
		}
	}
	if sum != r.sum {
		t.Fatalf("summaries %v, kept %v", sum, r.sum)
	}
	inIndex := 0
	for _, s := range r.paths.index {
		if s != 0 {
			inIndex++
		}
	}
	if inIndex != r.paths.live {
		t.Fatalf("index holds %d paths, %d live", inIndex, r.paths.live)
	}
}
