package txn

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// The scale benchmarks are internal/tree's (scale_bench_test.go) one
// level up: what the leader does per write, prep, the txn's encoding for
// the log and apply, with ZOO_TREE_ZNODES (default 10,000) 100-byte
// znodes in the tree, 1,000 per parent as scale.sh loads them:
//
//	ZOO_TREE_ZNODES=3000000 go test ./internal/txn/ -run X -bench PrepApplyScale -benchtime 200000x
//
// They report the same metrics: cpu-ns/op (getrusage), heap-B/znode,
// gc-cpu-ms (one full collection of the heap) and gc-ns/op, the
// collector's CPU per op that implies at GOGC=100 (B/op / heap ×
// gc-cpu-ms); at the server's GOGC of about 25 it is four times that.
func scaleState(b *testing.B) (*harness, []string) {
	b.Helper()
	n := 10000
	if s := os.Getenv("ZOO_TREE_ZNODES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("ZOO_TREE_ZNODES=%q: %v", s, err)
		}
		n = v
	}
	h := newHarness(b, PrepConfig{})
	tr := h.st.Tree
	paths := make([]string, 0, n)
	for i := 0; len(paths) < n; i++ {
		dir := "/scale-" + strconv.Itoa(i/1000)
		if i%1000 == 0 {
			if _, err := tr.CreateNode(dir, nil, open, 0, -1, int64(i+1), 1); err != nil {
				b.Fatal(err)
			}
		}
		p := dir + "/node-" + strconv.Itoa(i)
		if _, err := tr.CreateNode(p, make([]byte, 100), open, 0, -1, int64(i+1), 1); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	h.zxid = int64(n) + 10
	return h, paths
}

func scaleCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runPrepApplyScale runs reqs(i) through prep, encoding and apply. With
// depth 1 each txn is applied right after its prep, with the node still
// in the cache; the leader preps every waiting request, then proposes,
// writes the log and applies them in a batch, by which time the cache
// holds other things. With depth n, n ops are prepped and encoded, then
// applied, as a loop turn with n requests waiting does: the apply no
// longer finds the node in the L1/L2 cache, though still more often than
// the server, whose log writes, network and other goroutines run between.
func runPrepApplyScale(b *testing.B, h *harness, depth int, reqs func(i int) []Request) {
	b.ReportAllocs()
	zxid := h.zxid
	var scratch []byte
	var batch []*Txn
	run := func(from, to int) {
		for i := from; i < to; {
			batch = batch[:0]
			for end := min(i+depth, to); i < end; i++ {
				for _, req := range reqs(i) {
					req.Time = int64(i)
					t := h.p.Prep(req)
					// As the replica proposes it (Replica.entryData):
					// encoded to a scratch buffer, copied after a 16-byte
					// envelope into a buffer of its size, which the log
					// keeps.
					scratch = t.AppendMarshal(scratch[:0])
					data := append(make([]byte, 16, 16+len(scratch)), scratch...)
					runtime.KeepAlive(data)
					batch = append(batch, t)
				}
			}
			for _, t := range batch {
				zxid++
				if r := Apply(h.st, t, zxid); r.Err != jute.OK {
					b.Fatal(r.Err)
				}
				h.p.Applied(t)
			}
		}
	}
	// Warm up with as many ops, untimed, then collect: the timed loop
	// then allocates into the memory they freed, as a server in steady
	// state does, rather than growing the heap into fresh pages (page
	// faults), whose cost depends on how full the building left the
	// heap's spans. The collection also takes the building's garbage,
	// whose cycle would otherwise be counted.
	run(b.N, 2*b.N)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	cpu0 := scaleCPUTime(b)
	run(0, b.N)
	cpu := scaleCPUTime(b) - cpu0
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	bytesPerOp := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(b.N)
	runtime.GC()
	gc0 := scaleCPUTime(b)
	runtime.GC()
	gc := (scaleCPUTime(b) - gc0).Seconds()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/float64(h.st.Tree.NodeCount()), "heap-B/znode")
	b.ReportMetric(gc*1000, "gc-cpu-ms")
	b.ReportMetric(bytesPerOp/float64(ms.HeapAlloc)*gc*1e9, "gc-ns/op")
	runtime.KeepAlive(h)
}

// scaleDepths are the batch sizes the benchmarks run with: one txn at a
// time, and 256 (scale.sh's 8 clients with 32 requests outstanding each).
var scaleDepths = []int{1, 256}

func BenchmarkPrepApplyScaleSetData(b *testing.B) {
	for _, depth := range scaleDepths {
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			h, paths := scaleState(b)
			reqs := make([]Request, 1)
			runPrepApplyScale(b, h, depth, func(i int) []Request {
				// A new record, path and data per op, as the decoder
				// hands them over.
				rec := &jute.SetDataRequest{Path: strings.Clone(paths[(i*7919)%len(paths)]), Data: make([]byte, 100), Version: -1}
				reqs[0] = Request{SessionID: sess1, Op: jute.OpSetData, Record: rec}
				return reqs
			})
		})
	}
}

// BenchmarkPrepApplyScaleCreateDelete is one op a create and its delete,
// as in tree's BenchmarkScaleCreateDelete and scale.sh's create+delete.
func BenchmarkPrepApplyScaleCreateDelete(b *testing.B) {
	for _, depth := range scaleDepths {
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			h, _ := scaleState(b)
			reqs := make([]Request, 2)
			runPrepApplyScale(b, h, depth, func(i int) []Request {
				p := "/scale-0/new-" + strconv.Itoa(i%1024)
				reqs[0] = Request{SessionID: sess1, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: p, Data: make([]byte, 100), ACL: open}}
				reqs[1] = Request{SessionID: sess1, Op: jute.OpDelete, Record: &jute.PathVersion{Path: p, Version: -1}}
				return reqs
			})
		})
	}
}
