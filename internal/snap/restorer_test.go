package snap

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// A snapshot of several batches loads exactly: every node, in order, with
// nil, empty, small and large data (a large one is read apart from the
// batch's bytes), and the same digest.
func TestLoadAcrossBatches(t *testing.T) {
	tr := tree.New()
	n := 3*batchNodes + 17
	big := bytes.Repeat([]byte("b"), bufSize+1)
	want := map[string][]byte{}
	for i := range n {
		path := fmt.Sprintf("/n%05d", i)
		var data []byte
		switch i % 4 {
		case 1:
			data = []byte{}
		case 2:
			data = []byte(path)
		case 3:
			if i%400 == 3 {
				data = big
			} else {
				data = bytes.Repeat([]byte{byte(i)}, i%300)
			}
		}
		if _, err := tr.CreateNode(path, data, openACL, 0, -1, int64(i+1), int64(i)); err != nil {
			t.Fatal(err)
		}
		want[path] = data
	}
	for _, c := range compressions {
		t.Run(c.name, func(t *testing.T) {
			b := encode(t, txn.NewState(tr), c.c)
			_, st, err := Read(bytes.NewReader(b), int64(len(b)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, w := st.Tree.Digest(), tr.Digest(); got != w {
				t.Fatalf("digest %x, want %x", got, w)
			}
			if got, w := st.Tree.NodeCount(), tr.NodeCount(); got != w {
				t.Fatalf("%d nodes, want %d", got, w)
			}
			for path, data := range want {
				got, _, err := st.Tree.Get(path)
				if err != nil || !bytes.Equal(got, data) || (got == nil) != (data == nil) {
					t.Fatalf("%s: %q (nil %v), %v; want %q (nil %v)", path, got, got == nil, err, data, data == nil)
				}
			}
		})
	}
}

// A node that cannot go into the tree fails the load with its own error
// (the missing parent), naming it, though the restorer is batches behind
// the decoder and the file goes on, to a malformed record the decoder
// would report otherwise.
func TestRestoreErrorAcrossBatches(t *testing.T) {
	node := func(path string) []byte {
		return cat([]byte{tagNode}, uv(0, uint64(len(path))), []byte(path), uv(0, 1), make([]byte, 9))
	}
	parts := [][]byte{aclDef, node("/")}
	bad := batchNodes + 5
	for i := range 3 * batchNodes {
		if i == bad {
			parts = append(parts, node("/missing/child"))
		}
		parts = append(parts, node(fmt.Sprintf("/n%05d", i)))
	}
	parts = append(parts, []byte{'Z'}) // an unknown record tag
	file := seal(cat(parts...), 0, 1)
	_, st, err := Read(bytes.NewReader(file), int64(len(file)), Options{})
	if st != nil || !errors.Is(err, ErrMalformed) || !errors.Is(err, jute.NoNode) {
		t.Fatalf("err %v, state %v; want the missing parent's NoNode", err, st != nil)
	}
	if want := fmt.Sprintf("after %d nodes: restore /missing/child", bad+1); !strings.Contains(err.Error(), want) {
		t.Fatalf("err %q does not say %q", err, want)
	}
}

// A batch is handed over by bytes as well as by count: with a megabyte
// in every znode, the decoder must not run 6,000 of them ahead.
func TestBatchHandedOverByBytes(t *testing.T) {
	var b nodeBatch
	big := make([]byte, bufSize+1)
	n := 0
	for !b.full() {
		b.add([]byte("/n"), big, nil, tree.StatPersisted{})
		n++
	}
	if max := batchBytes/len(big) + 1; n > max {
		t.Fatalf("%d nodes of %d bytes in a batch, want at most %d", n, len(big), max)
	}
	b.reset()
	if b.full() || b.size != 0 || len(b.nodes) != 0 || b.nodes[:1][0].big != nil {
		t.Fatalf("reset batch: size %d, %d nodes, first node's data kept %v", b.size, len(b.nodes), b.nodes[:1][0].big != nil)
	}
}
