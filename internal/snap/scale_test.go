package snap

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// scaleNodes is the tree size of the scale benchmarks: ZOO_BENCH_ZNODES,
// default 1M (scale.sh's middle point).
func scaleNodes(b *testing.B) int {
	if s := os.Getenv("ZOO_BENCH_ZNODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 1_000_000
}

// scaleTree is the tree zkload fill makes: /fill/dNNNNN parents of 1,000
// children /fill/dNNNNN/nNNNNNNNN with 100 bytes each, each node's data
// its own allocation as it is in a server. It returns the
// children's paths.
func scaleTree(b *testing.B, n int) (*tree.Tree, []string) {
	b.Helper()
	tr := tree.New()
	zxid := int64(1)
	mk := func(p string, data []byte) {
		zxid++
		if _, err := tr.CreateNode(p, data, openACL, 0, -1, zxid, 1_700_000_000_000+zxid); err != nil {
			b.Fatal(err)
		}
	}
	mk("/fill", nil)
	paths := make([]string, n)
	for i := range n {
		if i%1000 == 0 {
			mk(fmt.Sprintf("/fill/d%05d", i/1000), nil)
		}
		paths[i] = fmt.Sprintf("/fill/d%05d/n%08d", i/1000, i)
		mk(paths[i], make([]byte, 100)) // its own, as a request's
	}
	return tr, paths
}

// BenchmarkTreeMemory reports the live heap per znode of a loaded tree
// (after a full collection), the figure that RSS follows.
func BenchmarkTreeMemory(b *testing.B) {
	n := scaleNodes(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, _ := scaleTree(b, n) // the paths are the tree's keys: no extra memory
	runtime.GC()
	runtime.ReadMemStats(&after)
	for b.Loop() {
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/znode")
	b.ReportMetric(float64(after.HeapObjects-before.HeapObjects)/float64(n), "objects/znode")
	runtime.KeepAlive(tr)
}

// BenchmarkSetDataDuringSnapshot is the write path with and without a
// snapshot being written at the same time, from a frozen view, by another
// goroutine, as the replica does it: the cost of a write should not
// depend on it. It also reports the snapshot's own cost per znode.
func BenchmarkSetDataDuringSnapshot(b *testing.B) {
	n := scaleNodes(b)
	tr, paths := scaleTree(b, n)
	data := make([]byte, 100)
	zxid := int64(1 << 40)
	for _, snapshotting := range []bool{false, true} {
		b.Run(fmt.Sprintf("snapshotting=%v", snapshotting), func(b *testing.B) {
			// The writer freezes (Freeze is the writer's, as in the
			// replica) each time the walker asks for a view.
			want, views := make(chan struct{}, 1), make(chan *tree.Frozen, 1)
			done := make(chan int, 1)
			if snapshotting {
				go func() {
					walked := 0
					for {
						want <- struct{}{}
						f, ok := <-views
						if !ok {
							done <- walked
							return
						}
						w := NewWriter(io.Discard, Meta{}, CompressNone)
						err := f.Walk(func(p []byte, nd tree.Node) error {
							walked++
							return w.AddNodeBytes(p, nd.Data, nd.ACL, nd.Stat)
						}, nil)
						f.Close()
						if err != nil {
							panic(err)
						}
					}
				}()
			}
			for i := 0; b.Loop(); i++ {
				select {
				case <-want:
					views <- tr.Freeze()
				default:
				}
				zxid++
				if _, err := tr.SetData(paths[(i*7919)%len(paths)], data, int32(i), zxid, 1); err != nil {
					b.Fatal(err)
				}
			}
			if snapshotting {
				<-want
				close(views)
				b.ReportMetric(float64(<-done), "znodes-walked")
			}
		})
	}
}

// BenchmarkLoadScale is a restart's snapshot load: the tree zkload fill
// makes (ZOO_BENCH_ZNODES, default 1M) written to memory, then read
// back. It reports the load's time and garbage per znode and the
// snapshot's bytes per znode.
func BenchmarkLoadScale(b *testing.B) {
	n := scaleNodes(b)
	tr, _ := scaleTree(b, n)
	st := txn.NewState(tr)
	for _, c := range []Compression{CompressNone, CompressSnappy} {
		b.Run(fmt.Sprintf("compression=%d", c), func(b *testing.B) {
			var buf bytes.Buffer
			w := NewWriter(&buf, Meta{Index: 1}, c)
			if err := AddState(w, st); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if _, _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{}); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU, the collector's included: on a shared
			// machine the wall clock says more about the neighbours.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/float64(n), "cpu-ns/znode")
			b.ReportMetric(float64(buf.Len())/float64(n), "file-B/znode")
		})
	}
}

// cpuTime is the process's user and system CPU so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
