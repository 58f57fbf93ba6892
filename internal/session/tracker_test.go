package session

import (
	"math/rand"
	"slices"
	"testing"
)

func TestDeadlineRounding(t *testing.T) {
	// Ref: Apache ExpiryQueue.roundToNextInterval: (t/interval + 1) * interval.
	tests := []struct {
		tick, timeout, now, want int64
	}{
		{tick: 2000, timeout: 4000, now: 0, want: 6000},
		{tick: 2000, timeout: 4000, now: 1, want: 6000},
		{tick: 2000, timeout: 4000, now: 1999, want: 6000},
		{tick: 2000, timeout: 4000, now: 2000, want: 8000},
		{tick: 2000, timeout: 3999, now: 0, want: 4000},
		{tick: 3000, timeout: 10000, now: 1700000000123, want: 1700000013000},
		{tick: 1, timeout: 5, now: 10, want: 16},
	}
	for _, tt := range tests {
		tr := New(tt.tick, tt.now)
		tr.Add(1, int32(tt.timeout), tt.now)
		if got := tr.NextExpiry(); got != tt.want {
			t.Errorf("tick=%d timeout=%d now=%d: deadline %d, want %d", tt.tick, tt.timeout, tt.now, got, tt.want)
		}
		s, _ := tr.Get(1)
		if s.Deadline != tt.want {
			t.Errorf("Get: deadline %d, want %d", s.Deadline, tt.want)
		}
	}
}

// firstExpiry steps time one millisecond at a time from start and returns the
// first time at which Expired reports id, or -1 if it never does before limit.
func firstExpiry(tr *Tracker, id, start, limit int64) int64 {
	for now := start; now <= limit; now++ {
		for _, got := range tr.Expired(now) {
			if got == id {
				return now
			}
		}
	}
	return -1
}

func TestUntouchedExpiresWithinTimeoutPlusTick(t *testing.T) {
	// Ref: programmer's guide, "ZooKeeper Sessions": the session expires when
	// the cluster does not hear from the client within the timeout. Buckets
	// add up to one tick of grace.
	tests := []struct {
		name                 string
		tick, timeout, start int64
	}{
		{"aligned start", 100, 400, 1000},
		{"unaligned start", 100, 400, 1037},
		{"timeout not a multiple of tick", 100, 450, 1099},
		{"timeout below tick", 100, 30, 5},
		{"large clock", 200, 1000, 1700000000001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(tt.tick, tt.start)
			tr.Add(7, int32(tt.timeout), tt.start)
			got := firstExpiry(tr, 7, tt.start, tt.start+tt.timeout+2*tt.tick)
			lo, hi := tt.start+tt.timeout, tt.start+tt.timeout+tt.tick
			if got <= lo || got > hi {
				t.Fatalf("expired at %d, want in (%d, %d]", got, lo, hi)
			}
		})
	}
}

func TestTouchedSessionDoesNotExpire(t *testing.T) {
	const tick, timeout = 100, 400
	tr := New(tick, 0)
	tr.Add(1, timeout, 0) // touched
	tr.Add(2, timeout, 0) // left alone
	var expired []int64
	for now := int64(0); now <= 5000; now += 10 {
		if now%150 == 0 && !tr.Touch(1, now) {
			t.Fatalf("Touch(1, %d) = false", now)
		}
		expired = append(expired, tr.Expired(now)...)
	}
	if !slices.Equal(expired, []int64{2}) {
		t.Fatalf("expired %v, want [2]", expired)
	}
	// Once the touches stop, session 1 expires within timeout+tick.
	last := int64(4950)
	got := firstExpiry(tr, 1, 5001, 6000)
	if got <= last+timeout || got > last+timeout+tick {
		t.Fatalf("session 1 expired at %d, want in (%d, %d]", got, last+timeout, last+timeout+tick)
	}
}

func TestTouch(t *testing.T) {
	tr := New(100, 0)
	tr.Add(1, 400, 0)
	tr.Add(2, 400, 0)
	tr.SetClosing(2)
	tests := []struct {
		name string
		id   int64
		want bool
	}{
		{"live", 1, true},
		{"closing", 2, false},
		{"unknown", 3, false},
	}
	for _, tt := range tests {
		if got := tr.Touch(tt.id, 50); got != tt.want {
			t.Errorf("%s: Touch(%d) = %v, want %v", tt.name, tt.id, got, tt.want)
		}
	}
}

func TestExpiredReturnsEachOnceInOrder(t *testing.T) {
	tr := New(100, 0)
	// Two buckets: 500 (ids 9, 3, 5) and 600 (ids 1, 4).
	for _, id := range []int64{9, 3, 5} {
		tr.Add(id, 400, 0)
	}
	for _, id := range []int64{4, 1} {
		tr.Add(id, 400, 100)
	}
	if got := tr.Expired(499); got != nil {
		t.Fatalf("Expired(499) = %v, want none", got)
	}
	if got, want := tr.Expired(10000), []int64{3, 5, 9, 1, 4}; !slices.Equal(got, want) {
		t.Fatalf("Expired = %v, want %v", got, want)
	}
	if got := tr.Expired(20000); got != nil {
		t.Fatalf("second Expired = %v, want none", got)
	}
	// Expired sessions stay (closing) until removed, and cannot be revived.
	if tr.Len() != 5 {
		t.Fatalf("Len = %d, want 5", tr.Len())
	}
	if tr.Touch(3, 20000) {
		t.Fatal("Touch of an expired session succeeded")
	}
	tr.Add(3, 400, 20000) // a replayed createSession must not revive it
	if got := tr.Expired(30000); got != nil {
		t.Fatalf("re-added closing session expired again: %v", got)
	}
	for _, id := range []int64{1, 3, 4, 5, 9} {
		tr.Remove(id)
	}
	if tr.Len() != 0 || tr.NextExpiry() != 0 {
		t.Fatalf("after Remove: Len=%d NextExpiry=%d", tr.Len(), tr.NextExpiry())
	}
}

func TestNextExpiry(t *testing.T) {
	tr := New(100, 0)
	if got := tr.NextExpiry(); got != 0 {
		t.Fatalf("empty tracker: NextExpiry = %d, want 0", got)
	}
	tr.Add(1, 1000, 0) // bucket 1100
	tr.Add(2, 200, 0)  // bucket 300
	if got := tr.NextExpiry(); got != 300 {
		t.Fatalf("NextExpiry = %d, want 300", got)
	}
	tr.Touch(2, 250) // moves to 500; bucket 300 is now empty and must not count
	if got := tr.NextExpiry(); got != 500 {
		t.Fatalf("after touch: NextExpiry = %d, want 500", got)
	}
	tr.SetClosing(2)
	if got := tr.NextExpiry(); got != 1100 {
		t.Fatalf("after SetClosing: NextExpiry = %d, want 1100", got)
	}
	tr.Remove(1)
	if got := tr.NextExpiry(); got != 0 {
		t.Fatalf("after Remove: NextExpiry = %d, want 0", got)
	}
}

func TestAddExistingRefreshes(t *testing.T) {
	tr := New(100, 0)
	tr.Add(1, 400, 0)
	tr.Add(1, 800, 1000)
	if n := tr.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	if to, ok := tr.Timeout(1); !ok || to != 800 {
		t.Fatalf("Timeout = %d, %v; want 800, true", to, ok)
	}
	if got := tr.NextExpiry(); got != 1900 {
		t.Fatalf("NextExpiry = %d, want 1900", got)
	}
	if _, ok := tr.Timeout(2); ok {
		t.Fatal("Timeout of unknown session reported ok")
	}
}

func TestSessionsAndBuckets(t *testing.T) {
	tr := New(100, 0)
	tr.Add(3, 400, 0)
	tr.Add(1, 400, 0)
	tr.Add(2, 900, 0)
	tr.SetClosing(2)
	wantS := []Session{
		{ID: 1, Timeout: 400, Deadline: 500},
		{ID: 2, Timeout: 900, Closing: true},
		{ID: 3, Timeout: 400, Deadline: 500},
	}
	if got := tr.Sessions(); !slices.Equal(got, wantS) {
		t.Fatalf("Sessions = %+v, want %+v", got, wantS)
	}
	got := tr.Buckets()
	if len(got) != 1 || got[0].Deadline != 500 || !slices.Equal(got[0].IDs, []int64{1, 3}) {
		t.Fatalf("Buckets = %+v", got)
	}
}

func TestNewPanicsOnBadTick(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(0, 0) did not panic")
		}
	}()
	New(0, 0)
}

// TestAgainstModel drives the tracker and a naive model (last touch + timeout,
// checked against every deadline) with the same random operations.
func TestAgainstModel(t *testing.T) {
	type msess struct {
		timeout, deadline int64
		closing           bool
	}
	const tick = 50
	rng := rand.New(rand.NewSource(1))
	tr := New(tick, 0)
	model := map[int64]*msess{}
	now := int64(0)
	for step := 0; step < 20000; step++ {
		now += int64(rng.Intn(40))
		id := int64(rng.Intn(20))
		switch op := rng.Intn(10); {
		case op < 2:
			to := int64(50 + rng.Intn(500))
			tr.Add(id, int32(to), now)
			m, ok := model[id]
			if !ok {
				m = &msess{}
				model[id] = m
			}
			m.timeout = to
			if !m.closing {
				m.deadline = (now+to)/tick*tick + tick
			}
		case op < 7:
			m, ok := model[id]
			want := ok && !m.closing
			if want {
				m.deadline = (now+m.timeout)/tick*tick + tick
			}
			if got := tr.Touch(id, now); got != want {
				t.Fatalf("step %d: Touch(%d) = %v, want %v", step, id, got, want)
			}
		case op < 8:
			tr.Remove(id)
			delete(model, id)
		case op < 9:
			tr.SetClosing(id)
			if m, ok := model[id]; ok {
				m.closing = true
			}
		}
		var want []int64
		for mid, m := range model {
			if !m.closing && m.deadline <= now {
				want = append(want, mid)
				m.closing = true
			}
		}
		got := tr.Expired(now)
		slices.Sort(want)
		gotSorted := slices.Sorted(slices.Values(got))
		if !slices.Equal(gotSorted, want) {
			t.Fatalf("step %d now=%d: Expired = %v, want %v", step, now, got, want)
		}
		if tr.Len() != len(model) {
			t.Fatalf("step %d: Len = %d, want %d", step, tr.Len(), len(model))
		}
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		req, min, max, want int32
	}{
		{req: 10000, min: 4000, max: 40000, want: 10000},
		{req: 1000, min: 4000, max: 40000, want: 4000},
		{req: 100000, min: 4000, max: 40000, want: 40000},
		{req: 0, min: 4000, max: 40000, want: 4000},
		{req: -5, min: 4000, max: 40000, want: 4000},
		{req: 4000, min: 4000, max: 4000, want: 4000},
		{req: 5000, min: 6000, max: 3000, want: 3000}, // min applied first, then max
	}
	for _, tt := range tests {
		if got := Negotiate(tt.req, tt.min, tt.max); got != tt.want {
			t.Errorf("Negotiate(%d, %d, %d) = %d, want %d", tt.req, tt.min, tt.max, got, tt.want)
		}
	}
}

// TestReclose: a session whose closeSession did not apply (the proposal
// was dropped) is handed out again once the wait has passed, and again
// after each further wait, until it is removed.
func TestReclose(t *testing.T) {
	tr := New(100, 0)
	tr.Add(1, 400, 0)
	tr.Add(2, 4000, 0)
	tr.Add(3, 400, 0)
	if got, want := tr.Expired(1000), []int64{1, 3}; !slices.Equal(got, want) {
		t.Fatalf("Expired = %v, want %v", got, want)
	}
	if got := tr.Reclose(1500, 1000); got != nil {
		t.Fatalf("Reclose before the wait = %v, want none", got)
	}
	tr.Remove(3) // its closeSession applied
	if got, want := tr.Reclose(2000, 1000), []int64{1}; !slices.Equal(got, want) {
		t.Fatalf("Reclose = %v, want %v", got, want)
	}
	if got := tr.Reclose(2500, 1000); got != nil {
		t.Fatalf("Reclose right after a retry = %v, want none", got)
	}
	if got, want := tr.Reclose(3000, 1000), []int64{1}; !slices.Equal(got, want) {
		t.Fatalf("second Reclose = %v, want %v", got, want)
	}
	if tr.Touch(1, 3000) {
		t.Fatal("a session being closed was touched")
	}
	tr.SetClosing(2)
	if got := tr.Reclose(3100, 1000); got != nil {
		t.Fatalf("Reclose of a session SetClosing just marked = %v, want none", got)
	}
	if got, want := tr.Reclose(4100, 1000), []int64{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("Reclose = %v, want %v", got, want)
	}
}
