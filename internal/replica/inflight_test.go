package replica

import (
	"slices"
	"testing"
)

// The gap rule and deadlines on the set alone: requests fail lowest first,
// taken ones are skipped, and the set empties.
func TestInflightSet(t *testing.T) {
	s := newInflightSet()
	for seq := uint64(10); seq <= 15; seq++ {
		s.add(seq, inflight{tag: seq * 100, deadline: seq})
	}
	var failed []uint64
	fail := func(f inflight) { failed = append(failed, f.tag) }

	if _, ok := s.take(12); !ok { // answered (or refused) out of order
		t.Fatal("take(12) found nothing")
	}
	if !s.waitingUpTo(10) || s.waitingUpTo(9) {
		t.Fatal("waitingUpTo wrong around the oldest, 10")
	}
	s.takeBefore(14, fail) // 14 applied: 10, 11 and 13 were lost
	if f, ok := s.take(14); !ok || f.tag != 1400 {
		t.Fatalf("take(14) = %+v, %v", f, ok)
	}
	if want := []uint64{1000, 1100, 1300}; !slices.Equal(failed, want) {
		t.Fatalf("gap rule failed %v; want %v", failed, want)
	}
	if s.waitingUpTo(14) {
		t.Fatal("something at or below 14 still waits")
	}
	failed = nil
	s.takeExpired(14, fail)
	if len(failed) != 0 {
		t.Fatalf("expired before its deadline: %v", failed)
	}
	s.takeExpired(15, fail)
	if !slices.Equal(failed, []uint64{1500}) {
		t.Fatalf("at its deadline: %v", failed)
	}
	if _, _, ok := s.oldest(); ok || len(s.bySeq) != 0 || s.order != nil {
		t.Fatalf("not empty: %v %v", s.bySeq, s.order)
	}
}
