package txn

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree/treescale"
)

// The scale benchmarks are internal/tree's one level up: what the leader
// does per write, prep, the txn's encoding for the log and apply, with
// ZOO_TREE_ZNODES znodes in the tree; they report the same metrics
// (package treescale):
//
//	ZOO_TREE_ZNODES=3000000 go test ./internal/txn/ -run X -bench PrepApplyScale -benchtime 200000x
func scaleState(b *testing.B) (*harness, []string) {
	b.Helper()
	h := newHarness(b, PrepConfig{})
	n := treescale.Znodes(b)
	paths := treescale.Fill(b, h.st.Tree, n)
	h.zxid = int64(n) + 10
	return h, paths
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
	treescale.Run(b, h.st.Tree, true, run)
	runtime.KeepAlive(h)
}

// scaleDepths are the batch sizes the benchmarks run with: one txn at a
// time, and 256 (scale.sh's 8 clients with 32 requests outstanding each).
var scaleDepths = []int{1, 256}

func BenchmarkPrepApplyScaleSetData(b *testing.B) {
	benchPrepApplyScale(b, func(paths []string) func(i int) []Request {
		reqs := make([]Request, 1)
		return func(i int) []Request {
			// A new record, path and data per op, as the decoder hands
			// them over.
			rec := &jute.SetDataRequest{Path: strings.Clone(paths[(i*7919)%len(paths)]), Data: make([]byte, 100), Version: -1}
			reqs[0] = Request{SessionID: sess1, Op: jute.OpSetData, Record: rec}
			return reqs
		}
	})
}

// BenchmarkPrepApplyScaleCreateDelete is one op a create and its delete,
// as in tree's BenchmarkScaleCreateDelete and scale.sh's create+delete.
func BenchmarkPrepApplyScaleCreateDelete(b *testing.B) {
	benchPrepApplyScale(b, func([]string) func(i int) []Request {
		reqs := make([]Request, 2)
		return func(i int) []Request {
			p := "/scale-0/new-" + strconv.Itoa(i%1024)
			reqs[0] = Request{SessionID: sess1, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: p, Data: make([]byte, 100), ACL: open}}
			reqs[1] = Request{SessionID: sess1, Op: jute.OpDelete, Record: &jute.PathVersion{Path: p, Version: -1}}
			return reqs
		}
	})
}

// benchPrepApplyScale runs runPrepApplyScale at each of scaleDepths, on a
// fresh tree, with the requests reqsFor makes from the tree's paths.
func benchPrepApplyScale(b *testing.B, reqsFor func(paths []string) func(i int) []Request) {
	for _, depth := range scaleDepths {
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			h, paths := scaleState(b)
			runPrepApplyScale(b, h, depth, reqsFor(paths))
		})
	}
}
