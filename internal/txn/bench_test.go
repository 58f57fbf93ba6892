package txn

import (
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// BenchmarkPrepApplyCreate preps and applies a create and a delete per
// iteration (so the tree keeps its size), as the leader's loop does.
func BenchmarkPrepApplyCreate(b *testing.B) {
	h := newHarness(b, PrepConfig{})
	h.mustDo(create("/bench", "", 0))
	data := make([]byte, 100)
	paths := make([]string, 1024)
	for i := range paths {
		paths[i] = "/bench/n" + strconv.Itoa(i)
	}
	zxid := h.zxid
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := paths[i%len(paths)]
		for _, req := range []Request{
			{SessionID: sess1, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: p, Data: data, ACL: open}},
			{SessionID: sess1, Op: jute.OpDelete, Record: &jute.PathVersion{Path: p, Version: -1}},
		} {
			t := h.p.Prep(req)
			zxid++
			if r := Apply(h.st, t, zxid); r.Err != jute.OK {
				b.Fatal(r.Err)
			}
			h.p.Applied(t)
		}
	}
}

func BenchmarkPrepApplySetData(b *testing.B) {
	h := newHarness(b, PrepConfig{})
	h.mustDo(create("/bench", "", 0))
	req := Request{SessionID: sess1, Op: jute.OpSetData, Record: &jute.SetDataRequest{Path: "/bench", Data: make([]byte, 100), Version: -1}}
	zxid := h.zxid
	b.ReportAllocs()
	for b.Loop() {
		t := h.p.Prep(req)
		zxid++
		if r := Apply(h.st, t, zxid); r.Err != jute.OK {
			b.Fatal(r.Err)
		}
		h.p.Applied(t)
	}
}

func BenchmarkMarshalUnmarshal(b *testing.B) {
	t := &Txn{SessionID: sess1, Cxid: 1, Time: 2, Type: jute.OpSetData, Body: &SetDataTxn{Path: "/bench/node", Data: make([]byte, 100), Version: 3}}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = t.AppendMarshal(buf[:0])
		if _, err := Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}
