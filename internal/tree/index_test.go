package tree

import (
	"math/rand/v2"
	"testing"
)

// The index's invariant under random inserts and removes, with homes
// crowded so that runs are long and wrap round the table's end: every
// entry is reached from its home without crossing a free slot, and
// nothing else is in the table.
func TestIndexRunsStayWhole(t *testing.T) {
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		x := newPathIndex()
		live := map[uint64]bool{}
		var ids []uint64
		for step := range 3000 {
			if len(ids) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(ids))
				v := ids[i]
				ids[i] = ids[len(ids)-1]
				ids = ids[:len(ids)-1]
				delete(live, v)
				x.remove(v&^0xffffffff, entryID(v))
			} else {
				// Tags from a few values near the top and the bottom.
				tag := uint64(r.IntN(4)) << 30
				if r.IntN(2) == 0 {
					tag = 0xffffffff - uint64(r.IntN(4))
				}
				v := tag<<32 | uint64(step+1)
				x.insert(v, entryID(v))
				live[v] = true
				ids = append(ids, v)
			}
			if step%100 == 0 || step == 2999 {
				checkIndex(t, &x, live)
			}
		}
	}
}

func checkIndex(t *testing.T, x *pathIndex, live map[uint64]bool) {
	t.Helper()
	n := 0
	for _, v := range x.slots {
		if v == 0 {
			continue
		}
		n++
		if !live[v] {
			t.Fatalf("%#x in the index, not live", v)
		}
		for i := x.home(entryTag(v)); x.slots[i] != v; i = x.next(i) {
			if x.slots[i] == 0 {
				t.Fatalf("%#x not reached from its home %d", v, x.home(entryTag(v)))
			}
		}
	}
	if n != len(live) || x.count != len(live) {
		t.Fatalf("%d in the table, count %d, %d live", n, x.count, len(live))
	}
}
