package snap

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// benchState is n nodes under 100 parents, 64 bytes of data each, and
// 1000 sessions.
func benchState(b *testing.B, n int) *txn.State {
	tr := tree.New()
	zxid := int64(1 << 32)
	for i := range n {
		p := fmt.Sprintf("/app/service-%02d", i%100)
		if i < 100 {
			if i == 0 {
				if _, err := tr.CreateNode("/app", nil, openACL, 0, -1, zxid, 1); err != nil {
					b.Fatal(err)
				}
			}
			zxid++
			if _, err := tr.CreateNode(p, nil, openACL, 0, -1, zxid, 1); err != nil {
				b.Fatal(err)
			}
		}
		zxid++
		data := bytes.Repeat([]byte{byte(i)}, 64)
		if _, err := tr.CreateNode(fmt.Sprintf("%s/member-%010d", p, i), data, openACL, 0, -1, zxid, 1_700_000_000_000+zxid); err != nil {
			b.Fatal(err)
		}
	}
	st := txn.NewState(tr)
	for i := range 1000 {
		st.Sessions[int64(i+1)<<8] = txn.SessionInfo{TimeoutMs: 30000, Password: bytes.Repeat([]byte{1}, 16)}
	}
	return st
}

const benchNodes = 100_000

func BenchmarkWrite(b *testing.B) {
	for _, tc := range compressions {
		b.Run(tc.name, func(b *testing.B) {
			st := benchState(b, benchNodes)
			nodes := st.Tree.NodeCount()
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				w := NewWriter(&buf, Meta{}, tc.c)
				if err := AddState(w, st); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len())/float64(nodes), "bytes/node")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, tc := range compressions {
		b.Run(tc.name, func(b *testing.B) {
			st := benchState(b, benchNodes)
			nodes := st.Tree.NodeCount()
			file := encode(b, st, tc.c)
			for b.Loop() {
				if _, _, err := Read(bytes.NewReader(file), int64(len(file)), Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(file))/float64(nodes), "bytes/node")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
		})
	}
}

// BenchmarkWriteFile includes the fsync and rename.
func BenchmarkWriteFile(b *testing.B) {
	st := benchState(b, benchNodes)
	dir := b.TempDir()
	var i uint64
	for b.Loop() {
		i++
		if _, err := Write(osFS{}, dir, Meta{Index: i}, st, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*st.Tree.NodeCount()), "ns/node")
}

// BenchmarkAddNode is the encoder's cost per node as a snapshot's walk
// feeds it: paths in a reused buffer, siblings sharing an ACL.
func BenchmarkAddNode(b *testing.B) {
	paths := make([][]byte, 1000)
	for i := range paths {
		paths[i] = fmt.Appendf(nil, "/fill/d00012/n%08d", i)
	}
	data := make([]byte, 100)
	st := tree.StatPersisted{Czxid: 1<<32 + 5000, Mzxid: 1<<32 + 9000, Ctime: 1_700_000_000_000,
		Mtime: 1_700_000_000_500, Version: 3, Pzxid: 1<<32 + 5000}
	w := NewWriter(io.Discard, Meta{}, CompressNone)
	for i := 0; b.Loop(); i++ {
		if err := w.AddNodeBytes(paths[i%len(paths)], data, openACL, st); err != nil {
			b.Fatal(err)
		}
	}
}
