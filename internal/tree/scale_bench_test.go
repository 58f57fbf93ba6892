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

// BenchmarkScaleFrozenWalk is a snapshot's walk of a frozen view: every
// znode of a tree of ZOO_TREE_ZNODES, each parent's children created in
// a random order. cpu-ns/znode is the walk's CPU per znode.
func BenchmarkScaleFrozenWalk(b *testing.B) {
	tr := tree.New()
	treescale.FillShuffled(b, tr, treescale.Znodes(b), 1)
	n := tr.NodeCount()
	walked := 0
	cpu0 := treescale.CPUTime(b)
	for b.Loop() {
		f := tr.Freeze()
		err := f.Walk(func(path []byte, nd tree.Node) error {
			walked++
			return nil
		}, nil)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	if walked != b.N*n {
		b.Fatalf("walked %d znodes in %d walks of %d", walked, b.N, n)
	}
	b.ReportMetric(float64((treescale.CPUTime(b)-cpu0).Nanoseconds())/float64(walked), "cpu-ns/znode")
}
