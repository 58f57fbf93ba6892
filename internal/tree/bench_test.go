package tree

import (
	"strconv"
	"testing"
)

// benchTree returns a tree with n children of /bench, each with 100 bytes.
func benchTree(b *testing.B, n int) (*Tree, []string) {
	b.Helper()
	tr := New()
	data := make([]byte, 100)
	if _, err := tr.CreateNode("/bench", nil, openACL, 0, -1, 1, 1); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = "/bench/node-" + strconv.Itoa(i)
		if _, err := tr.CreateNode(paths[i], data, openACL, 0, -1, int64(i+2), 1); err != nil {
			b.Fatal(err)
		}
	}
	return tr, paths
}

func BenchmarkGet(b *testing.B) {
	tr, paths := benchTree(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := tr.Get(paths[i%len(paths)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetData(b *testing.B) {
	tr, paths := benchTree(b, 10000)
	data := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := tr.SetData(paths[i%len(paths)], data, int32(i), int64(i), 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateDelete creates and deletes one node per iteration, so the
// tree stays the same size.
func BenchmarkCreateDelete(b *testing.B) {
	tr, _ := benchTree(b, 10000)
	data := make([]byte, 100)
	paths := make([]string, 1024)
	for i := range paths {
		paths[i] = "/bench/new-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := paths[i%len(paths)]
		if _, err := tr.CreateNode(p, data, openACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
		if err := tr.DeleteNode(p, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	tr := New()
	data := make([]byte, 100)
	if _, err := tr.CreateNode("/bench", nil, openACL, 0, -1, 1, 1); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, b.N)
	for i := range paths {
		paths[i] = "/bench/node-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := tr.CreateNode(paths[i], data, openACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChildren(b *testing.B) {
	tr, _ := benchTree(b, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := tr.Children("/bench"); err != nil {
			b.Fatal(err)
		}
	}
}
