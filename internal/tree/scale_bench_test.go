package tree

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// The scale benchmarks measure the per-op cost and the collector's share
// of it with a large tree in the heap: issue 17 asks that neither grow
// with the tree. The size is ZOO_TREE_ZNODES (default 10,000), 100-byte
// znodes, 1,000 per parent as scale.sh loads them:
//
//	ZOO_TREE_ZNODES=3000000 go test ./internal/tree/ -run X -bench Scale -benchtime 200000x
//
// Each reports gc-%: the collector's share of the process's CPU during
// the loop (runtime/metrics), heap-B/znode: live heap after a forced
// collection, divided by the znodes, and mark-ms: the wall time of that
// forced collection (a full mark of the tree).
func scaleTree(b *testing.B) (*Tree, []string) {
	b.Helper()
	n := 10000
	if s := os.Getenv("ZOO_TREE_ZNODES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("ZOO_TREE_ZNODES=%q: %v", s, err)
		}
		n = v
	}
	tr := New()
	data := make([]byte, 100)
	paths := make([]string, 0, n)
	for i := 0; len(paths) < n; i++ {
		dir := "/scale-" + strconv.Itoa(i/1000)
		if i%1000 == 0 {
			if _, err := tr.CreateNode(dir, nil, openACL, 0, -1, int64(i+1), 1); err != nil {
				b.Fatal(err)
			}
		}
		p := dir + "/node-" + strconv.Itoa(i)
		if _, err := tr.CreateNode(p, append([]byte(nil), data...), openACL, 0, -1, int64(i+1), 1); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return tr, paths
}

var gcSamples = []metrics.Sample{
	{Name: "/cpu/classes/gc/total:cpu-seconds"},
	{Name: "/cpu/classes/total:cpu-seconds"},
}

func gcCPU() (gc, total float64) {
	metrics.Read(gcSamples)
	return gcSamples[0].Value.Float64(), gcSamples[1].Value.Float64()
}

// reportHeap forces a collection and reports the live heap per znode and
// how long the collection took.
func reportHeap(b *testing.B, tr *Tree) {
	b.Helper()
	runtime.GC()
	start := time.Now()
	runtime.GC()
	mark := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/float64(tr.NodeCount()), "heap-B/znode")
	b.ReportMetric(float64(mark.Microseconds())/1000, "mark-ms")
}

func runScale(b *testing.B, tr *Tree, op func(i int)) {
	b.Helper()
	b.ReportAllocs()
	gc0, tot0 := gcCPU()
	b.ResetTimer()
	for i := range b.N {
		op(i)
	}
	b.StopTimer()
	gc1, tot1 := gcCPU()
	if tot1 > tot0 {
		b.ReportMetric(100*(gc1-gc0)/(tot1-tot0), "gc-%")
	}
	reportHeap(b, tr)
}

func BenchmarkScaleSetData(b *testing.B) {
	tr, paths := scaleTree(b)
	runScale(b, tr, func(i int) {
		data := make([]byte, 100) // as the decoder hands it over
		if _, err := tr.SetData(paths[(i*7919)%len(paths)], data, int32(i), int64(i), 1); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkScaleCreateDelete(b *testing.B) {
	tr, _ := scaleTree(b)
	runScale(b, tr, func(i int) {
		p := "/scale-0/new-" + strconv.Itoa(i%1024)
		if _, err := tr.CreateNode(p, make([]byte, 100), openACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
		if err := tr.DeleteNode(p, int64(i)); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkScaleLoad creates b.N znodes into a tree of ZOO_TREE_ZNODES.
func BenchmarkScaleLoad(b *testing.B) {
	tr, _ := scaleTree(b)
	runScale(b, tr, func(i int) {
		dir := "/load-" + strconv.Itoa(i/1000)
		if i%1000 == 0 {
			if _, err := tr.CreateNode(dir, nil, openACL, 0, -1, int64(i), 1); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := tr.CreateNode(dir+"/n-"+strconv.Itoa(i), make([]byte, 100), openACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
	})
}
