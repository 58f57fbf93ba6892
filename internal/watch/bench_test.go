package watch

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// The common case: a write to a path nobody watches. Must not allocate.
func BenchmarkTriggerUnwatched(b *testing.B) {
	var r Registry
	for i := range 1000 {
		r.Add(Watcher(i), "/other/"+strconv.Itoa(i), ModeData)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ds := r.Trigger("/app/config/node", jute.EventNodeDataChanged, 1); ds != nil {
			b.Fatal(ds)
		}
	}
}

// The same with a recursive watch elsewhere, which makes Trigger walk the
// ancestors of every changed path.
func BenchmarkTriggerUnwatchedWithRecursive(b *testing.B) {
	var r Registry
	r.Add(1, "/elsewhere", ModePersistentRecursive)
	b.ReportAllocs()
	for b.Loop() {
		if ds := r.Trigger("/app/config/deep/node", jute.EventNodeDataChanged, 1); ds != nil {
			b.Fatal(ds)
		}
	}
}

func BenchmarkTriggerOneWatcher(b *testing.B) {
	var r Registry
	b.ReportAllocs()
	for b.Loop() {
		r.Add(1, "/a/b", ModeData)
		if ds := r.Trigger("/a/b", jute.EventNodeDataChanged, 1); len(ds) != 1 {
			b.Fatal(ds)
		}
	}
}

func BenchmarkTriggerPersistent(b *testing.B) {
	var r Registry
	r.Add(1, "/a/b", ModePersistent)
	b.ReportAllocs()
	for b.Loop() {
		if ds := r.Trigger("/a/b", jute.EventNodeDataChanged, 1); len(ds) != 1 {
			b.Fatal(ds)
		}
	}
}

// 100k watchers on one path: a herd woken by one change.
func BenchmarkTriggerHerd(b *testing.B) {
	const n = 100_000
	var r Registry
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i := range n {
			r.Add(Watcher(i), "/lock", ModeData)
		}
		b.StartTimer()
		if ds := r.Trigger("/lock", jute.EventNodeDeleted, 1); len(ds) != n {
			b.Fatal(len(ds))
		}
	}
}

func BenchmarkRemoveWatcherMany(b *testing.B) {
	paths := make([]string, 10_000)
	for i := range paths {
		paths[i] = "/p/" + strconv.Itoa(i)
	}
	var r Registry
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for _, p := range paths {
			r.Add(1, p, ModeData)
		}
		b.StartTimer()
		r.RemoveWatcher(1)
	}
}

// Memory of the two extreme shapes, reported as bytes per watch.
func BenchmarkMemoryOneWatcherManyPaths(b *testing.B) {
	paths := make([]string, 100_000)
	for i := range paths {
		paths[i] = "/node/" + strconv.Itoa(i)
	}
	benchMemory(b, len(paths), func(r *Registry) {
		for _, p := range paths {
			r.Add(1, p, ModeData)
		}
	})
}

func BenchmarkMemoryManyWatchersOnePath(b *testing.B) {
	const n = 100_000
	benchMemory(b, n, func(r *Registry) {
		for i := range n {
			r.Add(Watcher(i), "/lock", ModeData)
		}
	})
}

func benchMemory(b *testing.B, n int, fill func(*Registry)) {
	var total uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := &Registry{}
		fill(r)
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(r)
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(n), "B/watch")
}

// A write to an unwatched path while millions of other paths are watched
// (issue 14's cost curve at 1M-10M watches): a miss in a large index.
func BenchmarkTriggerUnwatchedMillions(b *testing.B) {
	const n = 2_000_000
	var r Registry
	for i := range n {
		r.Add(Watcher(i%300), "/zkscale/"+strconv.Itoa(i/1000)+"/n"+strconv.Itoa(i), ModeData)
	}
	miss := make([]string, 1<<16)
	for i := range miss {
		miss[i] = "/zkscale/" + strconv.Itoa(i%5000) + "/u" + strconv.Itoa(i*7919)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if ds := r.Trigger(miss[i&(len(miss)-1)], jute.EventNodeDataChanged, 1); ds != nil {
			b.Fatal(ds)
		}
		i++
	}
}

// The pause a compaction makes (Registry.compact, under the lock Trigger
// takes): 1M paths watched by 300 connections, three quarters of them
// gone, then the rebuild, reported per path left.
func BenchmarkCompact(b *testing.B) {
	const n, left = 1_000_000, 250_000
	paths := make([]string, n)
	for i := range paths {
		paths[i] = "/zkscale/" + strconv.Itoa(i/1000) + "/n" + strconv.Itoa(i)
	}
	for b.Loop() {
		b.StopTimer()
		var r Registry
		for i, p := range paths {
			r.Add(Watcher(i%300), p, ModeData)
		}
		for i, p := range paths[left:] { // released without compacting
			w := Watcher((left + i) % 300)
			id := r.paths.find(p)
			r.change(id, w, r.get(id, w), 0)
		}
		b.StartTimer()
		r.compact()
		if r.paths.live != left || len(r.paths.recs) > left/recChunk+1 {
			b.Fatalf("%d paths in %d chunks after compacting", r.paths.live, len(r.paths.recs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/left, "ns/path-left")
}
