package replica

// inflightSet holds this server's requests proposed (as leader) or
// forwarded (to the leader) and not yet applied, by sequence number. A
// server's sequence numbers grow in the order its requests go out, and
// the leader preps one origin's forwards in the order they arrive on a
// FIFO link, so one origin's requests commit in sequence order. Hence the
// gap rule (DESIGN decision 12): when sequence N applies, every request
// below N still here was lost on the way (a broken link, a leader that
// refused it) and has failed. A request that waits past its deadline has
// failed too, so that none waits for ever.
//
// It is loop-owned. Every operation is amortized O(1) per request.
type inflightSet struct {
	bySeq map[uint64]inflight
	// order holds the sequence numbers in the order added, which is
	// increasing; those already taken are skipped when they reach the
	// front.
	order []uint64
}

type inflight struct {
	tag      uint64
	deadline uint64 // the tick at which it fails
}

func newInflightSet() inflightSet {
	return inflightSet{bySeq: make(map[uint64]inflight)}
}

// add records a request; seq must be above every seq added before.
func (s *inflightSet) add(seq uint64, in inflight) {
	s.bySeq[seq] = in
	s.order = append(s.order, seq)
}

// take removes seq, if it is here.
func (s *inflightSet) take(seq uint64) (inflight, bool) {
	in, ok := s.bySeq[seq]
	if ok {
		delete(s.bySeq, seq)
	}
	return in, ok
}

// oldest returns the lowest sequence number here, dropping taken ones
// from the front of order.
func (s *inflightSet) oldest() (uint64, inflight, bool) {
	for len(s.order) > 0 {
		seq := s.order[0]
		if in, ok := s.bySeq[seq]; ok {
			return seq, in, true
		}
		s.order = s.order[1:]
	}
	s.order = nil // let the emptied array go
	return 0, inflight{}, false
}

// takeBefore removes every request below seq (the gap rule) and passes
// each to fail, lowest first.
func (s *inflightSet) takeBefore(seq uint64, fail func(inflight)) {
	for {
		old, in, ok := s.oldest()
		if !ok || old >= seq {
			return
		}
		delete(s.bySeq, old)
		fail(in)
	}
}

// takeExpired removes every request whose deadline is at or before now
// and passes each to fail, oldest first. Deadlines grow with sequence
// numbers, so only the front need be looked at.
func (s *inflightSet) takeExpired(now uint64, fail func(inflight)) {
	for {
		old, in, ok := s.oldest()
		if !ok || in.deadline > now {
			return
		}
		delete(s.bySeq, old)
		fail(in)
	}
}

// waitingUpTo reports whether any request at or below seq is here.
func (s *inflightSet) waitingUpTo(seq uint64) bool {
	old, _, ok := s.oldest()
	return ok && old <= seq
}

// takeAll removes every request and passes each to fail.
func (s *inflightSet) takeAll(fail func(inflight)) {
	s.takeBefore(^uint64(0), fail)
}
