package tree_test

import (
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/tree/treescale"
)

// The scale benchmarks: a write's cost and the collector's share of it
// with ZOO_TREE_ZNODES znodes in the tree (package treescale says how to
// run them and what they report).

func scaleTree(b *testing.B) (*tree.Tree, []string) {
	b.Helper()
	tr := tree.New()
	return tr, treescale.Fill(b, tr, treescale.Znodes(b))
}

func BenchmarkScaleSetData(b *testing.B) {
	tr, paths := scaleTree(b)
	treescale.Run(b, tr, true, treescale.Each(func(i int) {
		data := make([]byte, 100) // as the decoder hands it over
		if _, err := tr.SetData(paths[(i*7919)%len(paths)], data, int32(i), int64(i), 1); err != nil {
			b.Fatal(err)
		}
	}))
}

func BenchmarkScaleCreateDelete(b *testing.B) {
	tr, _ := scaleTree(b)
	treescale.Run(b, tr, true, treescale.Each(func(i int) {
		p := "/scale-0/new-" + strconv.Itoa(i%1024)
		if _, err := tr.CreateNode(p, make([]byte, 100), treescale.OpenACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
		if err := tr.DeleteNode(p, int64(i)); err != nil {
			b.Fatal(err)
		}
	}))
}

// BenchmarkScaleLoad creates b.N znodes into a tree of ZOO_TREE_ZNODES.
func BenchmarkScaleLoad(b *testing.B) {
	tr, _ := scaleTree(b)
	// Not warmed: loading grows the heap by design.
	treescale.Run(b, tr, false, treescale.Each(func(i int) {
		dir := "/load-" + strconv.Itoa(i/1000)
		if i%1000 == 0 {
			if _, err := tr.CreateNode(dir, nil, treescale.OpenACL, 0, -1, int64(i), 1); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := tr.CreateNode(dir+"/n-"+strconv.Itoa(i), make([]byte, 100), treescale.OpenACL, 0, -1, int64(i), 1); err != nil {
			b.Fatal(err)
		}
	}))
}
