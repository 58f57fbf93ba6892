// Package treescale holds what the scale benchmarks of internal/tree and
// internal/txn share: a tree of ZOO_TREE_ZNODES 100-byte znodes, 1,000
// per parent as shared/bench's scale.sh loads them, and the metrics they
// report. Issue 17 asks that a write's cost not grow with the tree; these
// benchmarks measure it in process:
//
//	ZOO_TREE_ZNODES=3000000 go test ./internal/tree/ -run X -bench Scale -benchtime 200000x
//
// Each reports cpu-ns/op: the process's CPU time (getrusage) per op,
// which a busy machine disturbs less than ns/op, the wall time;
// heap-B/znode: the live heap after a forced collection, divided by the
// znodes; gc-cpu-ms: the process's CPU time for that one collection, a
// full mark of the tree; and gc-ns/op: the collector's CPU per op that
// implies with GOGC=100, where a cycle comes every live-heap bytes
// allocated: B/op / heap × gc-cpu-ms (at the server's GOGC of about 25
// it is four times that). The loops are too short to wait for the
// cycles of a 3M tree to happen.
package treescale

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// OpenACL is world:anyone with every permission.
var OpenACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// Znodes is ZOO_TREE_ZNODES, the tree's size; 10,000 if unset.
func Znodes(tb testing.TB) int {
	tb.Helper()
	s := os.Getenv("ZOO_TREE_ZNODES")
	if s == "" {
		return 10000
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		tb.Fatalf("ZOO_TREE_ZNODES=%q: %v", s, err)
	}
	return n
}

// Fill creates n znodes of 100 bytes in tr, 1,000 per parent under the
// root, and returns their paths.
func Fill(tb testing.TB, tr *tree.Tree, n int) []string {
	return fill(tb, tr, n, nil)
}

// FillShuffled is Fill with each parent's children created in a random
// order (seeded), as concurrent clients create them: a tree's child
// lists are then not in name order.
func FillShuffled(tb testing.TB, tr *tree.Tree, n int, seed uint64) []string {
	return fill(tb, tr, n, rand.New(rand.NewPCG(seed, 0)))
}

func fill(tb testing.TB, tr *tree.Tree, n int, r *rand.Rand) []string {
	tb.Helper()
	paths := make([]string, 0, n)
	for dir := 0; len(paths) < n; dir++ {
		parent := "/scale-" + strconv.Itoa(dir)
		if _, err := tr.CreateNode(parent, nil, OpenACL, 0, -1, int64(len(paths)+1), 1); err != nil {
			tb.Fatal(err)
		}
		kids := min(1000, n-len(paths))
		order := make([]int, kids)
		for i := range order {
			order[i] = dir*1000 + i
		}
		if r != nil {
			r.Shuffle(kids, func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, i := range order {
			p := parent + "/node-" + strconv.Itoa(i)
			if _, err := tr.CreateNode(p, make([]byte, 100), OpenACL, 0, -1, int64(len(paths)+1), 1); err != nil {
				tb.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	return paths
}

// CPUTime is the process's user and system CPU time.
func CPUTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Run times run(0, b.N), which does ops 0 to b.N-1, and reports
// cpu-ns/op and the heap metrics of tr (ReportHeap). With warm,
// run(b.N, 2*b.N) goes first, untimed, and then a collection: the timed
// ops then allocate into the memory those freed, as a server in steady
// state does, rather than growing the heap into fresh pages (page
// faults), whose cost depends on how full the building left the heap's
// spans; and the collection takes the building's garbage, whose cycle
// would otherwise run into the timed ops and be counted.
func Run(b *testing.B, tr *tree.Tree, warm bool, run func(from, to int)) {
	b.Helper()
	b.ReportAllocs()
	if warm {
		run(b.N, 2*b.N)
		runtime.GC()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	cpu0 := CPUTime(b)
	run(0, b.N)
	cpu := CPUTime(b) - cpu0
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	ReportHeap(b, tr, float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N))
}

// Each turns op into a run for Run: op(i) for each i from from to to.
func Each(op func(i int)) func(from, to int) {
	return func(from, to int) {
		for i := from; i < to; i++ {
			op(i)
		}
	}
}

// ReportHeap forces a collection and reports the live heap per znode of
// tr, how long a full collection takes, and the collector's CPU per op
// that bytesPerOp implies.
func ReportHeap(b *testing.B, tr *tree.Tree, bytesPerOp float64) {
	b.Helper()
	runtime.GC()
	gc0 := CPUTime(b)
	start := time.Now()
	runtime.GC()
	wall := time.Since(start)
	gc := (CPUTime(b) - gc0).Seconds()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/float64(tr.NodeCount()), "heap-B/znode")
	b.ReportMetric(gc*1000, "gc-cpu-ms")
	b.ReportMetric(float64(wall.Microseconds())/1000, "gc-wall-ms")
	b.ReportMetric(bytesPerOp/float64(ms.HeapAlloc)*gc*1e9, "gc-ns/op")
	runtime.KeepAlive(tr)
}
