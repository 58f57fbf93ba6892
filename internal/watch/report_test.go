package watch

import (
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

func TestIntrospection(t *testing.T) {
	var r Registry
	r.Add(2, "/b", ModeData)
	r.Add(2, "/a", ModeData)
	r.Add(1, "/a", ModeData)
	r.Add(1, "/c", ModeChild)
	r.Add(3, "/p", ModePersistent)
	r.Add(4, "/c", ModeChild)

	// Apache's wchs/wchc/wchp look at the data table only.
	if got, want := r.Summary(DataTable), (Summary{Watchers: 3, Paths: 3, Watches: 4}); got != want {
		t.Errorf("Summary(DataTable) = %+v, want %+v", got, want)
	}
	if got, want := r.Summary(ChildTable), (Summary{Watchers: 3, Paths: 2, Watches: 3}); got != want {
		t.Errorf("Summary(ChildTable) = %+v, want %+v", got, want)
	}
	if got, want := r.Summary(AllTables), (Summary{Watchers: 4, Paths: 4, Watches: 6}); got != want {
		t.Errorf("Summary(AllTables) = %+v, want %+v", got, want)
	}
	if got := r.Len(); got != 7 { // 4 data + 3 child
		t.Errorf("Len = %d, want 7", got)
	}
	wantByWatcher := []WatcherPaths{
		{Watcher: 1, Paths: []string{"/a"}},
		{Watcher: 2, Paths: []string{"/a", "/b"}},
		{Watcher: 3, Paths: []string{"/p"}},
	}
	if got := r.ByWatcher(DataTable); !reflect.DeepEqual(got, wantByWatcher) {
		t.Errorf("ByWatcher(DataTable) = %v, want %v", got, wantByWatcher)
	}
	wantByPath := []PathWatchers{
		{Path: "/a", Watchers: []Watcher{1, 2}},
		{Path: "/c", Watchers: []Watcher{1, 4}},
		{Path: "/p", Watchers: []Watcher{3}},
	}
	if got := r.ByPath(ChildTable); !reflect.DeepEqual(got, wantByPath[1:]) {
		t.Errorf("ByPath(ChildTable) = %v, want %v", got, wantByPath[1:])
	}
	if got := r.ByPath(AllTables); len(got) != 4 || got[0].Path != "/a" || !reflect.DeepEqual(got[0].Watchers, []Watcher{1, 2}) {
		t.Errorf("ByPath(AllTables) = %v", got)
	}
	var empty Registry
	if s := empty.Summary(AllTables); s != (Summary{}) || len(empty.ByPath(AllTables)) != 0 || len(empty.ByWatcher(AllTables)) != 0 {
		t.Errorf("empty registry reports watches")
	}
}

// Many goroutines registering, firing and closing at once; run with -race.
// Each watcher's one-time watch must fire exactly once.
func TestConcurrent(t *testing.T) {
	var r Registry
	const n = 16
	fired := make([]int, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := Watcher(i)
			path := "/n" + strconv.Itoa(i%4)
			for range 200 {
				r.Add(w, path, ModeData)
				r.Add(w, "/", ModePersistentRecursive)
				_ = r.Check(w, path, jute.WatcherAny)
				_ = r.Summary(AllTables)
				r.RemoveWatcher(w)
			}
			r.Add(w, path, ModeData)
		}()
	}
	wg.Wait()
	for i := range 4 {
		for _, d := range r.Trigger("/n"+strconv.Itoa(i), jute.EventNodeDataChanged, 1) {
			mu.Lock()
			fired[d.Watcher]++
			mu.Unlock()
		}
	}
	for w, c := range fired {
		if c != 1 {
			t.Errorf("watcher %d fired %d times, want 1", w, c)
		}
	}
	if r.Len() != 0 {
		t.Errorf("Len = %d after everything fired", r.Len())
	}
}
