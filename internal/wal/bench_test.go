package wal

import (
	"fmt"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// BenchmarkSave measures Save (append + one fdatasync) of 1 KiB entries on
// the os file system, one Save per raft Ready of batch entries.
func BenchmarkSave(b *testing.B) {
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			w, _, err := Open(vfs.Default, b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			data := make([]byte, 1024)
			ents := make([]raftpb.Entry, batch)
			next := uint64(1)
			b.SetBytes(int64(batch * len(data)))
			b.ResetTimer()
			for b.Loop() {
				for i := range ents {
					ents[i] = raftpb.Entry{Index: next, Term: 1, Data: data}
					next++
				}
				if err := w.Save(raftpb.HardState{Term: 1, Commit: next - 1}, ents); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int(next-1)), "ns/entry")
		})
	}
}
