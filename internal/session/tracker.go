// Package session keeps the leader's table of live sessions and decides when
// they expire.
//
// The design is Apache ZooKeeper's SessionTrackerImpl and ExpiryQueue: a
// session's deadline is rounded up to the next multiple of the expiration
// interval (the tick time), so sessions fall into a few buckets and expiry is
// checked once per bucket rather than once per session. A session last heard
// from at time t with timeout T therefore expires at some time in
// (t+T, t+T+interval].
//
// The package is pure: it starts no goroutines and never reads a clock. The
// owner passes the current time (milliseconds since the epoch) into every call
// and uses NextExpiry to arm its own timer.
//
// Ref: programmer's guide, "ZooKeeper Sessions".
package session

import (
	"maps"
	"slices"

	"github.com/zoohq/zoo/internal/shrink"
)

// Tracker is the session table. It is not safe for concurrent use: one
// goroutine (the leader's session loop) owns it.
type Tracker struct {
	interval int64
	sessions map[int64]*entry
	// buckets maps a deadline (a multiple of interval) to the sessions
	// that expire then. Empty buckets are deleted at once, so the smallest
	// key is always the next deadline that matters.
	buckets map[int64]map[int64]struct{}
	// peak is the most sessions held since the table was last rebuilt:
	// a Go map never shrinks, so Remove rebuilds it once most are gone.
	peak int
	// closing counts the sessions marked closing, so that Reclose costs
	// nothing while none is.
	closing int
}

type entry struct {
	timeout  int32
	deadline int64 // 0 once the session was handed out by Expired
	closing  bool
	// closingSince is when Expired (or Reclose) handed the session out
	// for its closeSession; 0 if SetClosing marked it.
	closingSince int64
}

// Session is a read-only view of one tracked session.
type Session struct {
	ID      int64
	Timeout int32 // negotiated timeout, ms
	// Deadline is the end of the bucket the session expires in, ms since
	// the epoch; 0 once the session is closing and out of the buckets.
	Deadline int64
	Closing  bool
}

// Bucket is one expiry bucket, for the "dump" four-letter word.
type Bucket struct {
	Deadline int64   // ms since the epoch
	IDs      []int64 // ascending
}

// New returns an empty tracker whose expiry buckets are tickMs wide. now is
// accepted for symmetry with the other calls and for future use; the tracker
// keeps no notion of time between calls. tickMs must be positive: the
// configuration validates the tick time, so a non-positive value here is a
// programming error and New panics.
func New(tickMs int64, now int64) *Tracker {
	_ = now
	if tickMs <= 0 {
		panic("session: tick must be positive")
	}
	return &Tracker{
		interval: tickMs,
		sessions: make(map[int64]*entry),
		buckets:  make(map[int64]map[int64]struct{}),
	}
}

// roundUp returns the bucket a deadline of t falls into: the next multiple of
// the interval strictly after t, which gives every session up to one interval
// of grace, as Apache's ExpiryQueue.roundToNextInterval does.
func (t *Tracker) roundUp(ms int64) int64 {
	return (ms/t.interval + 1) * t.interval
}

// Add starts tracking session id with the given negotiated timeout, or, if it
// is already tracked, refreshes its timeout and deadline (a replayed
// createSession and a new leader re-adding every session both land here). A
// session that is closing stays closing.
func (t *Tracker) Add(id int64, timeoutMs int32, now int64) {
	e, ok := t.sessions[id]
	if !ok {
		e = &entry{}
		t.sessions[id] = e
	}
	e.timeout = timeoutMs
	if e.closing {
		return
	}
	t.schedule(id, e, now)
}

// Touch records that session id was heard from at now and pushes its
// deadline out. It returns false if the session is unknown or closing, as
// Apache's touchSession does; the caller then fails the request with
// SessionExpired.
func (t *Tracker) Touch(id int64, now int64) bool {
	e, ok := t.sessions[id]
	if !ok || e.closing {
		return false
	}
	t.schedule(id, e, now)
	return true
}

func (t *Tracker) schedule(id int64, e *entry, now int64) {
	d := t.roundUp(now + int64(e.timeout))
	if d == e.deadline {
		return
	}
	t.unbucket(id, e)
	b := t.buckets[d]
	if b == nil {
		b = make(map[int64]struct{})
		t.buckets[d] = b
	}
	b[id] = struct{}{}
	e.deadline = d
}

func (t *Tracker) unbucket(id int64, e *entry) {
	if e.deadline == 0 {
		return
	}
	if b := t.buckets[e.deadline]; b != nil {
		delete(b, id)
		if len(b) == 0 {
			delete(t.buckets, e.deadline)
		}
	}
	e.deadline = 0
}

// SetClosing marks session id as closing: it is no longer touched or
// expired, but stays in the table until Remove (when its closeSession is
// applied). Unknown ids are ignored.
func (t *Tracker) SetClosing(id int64) {
	e, ok := t.sessions[id]
	if !ok {
		return
	}
	if !e.closing {
		t.closing++
	}
	e.closing = true
	t.unbucket(id, e)
}

// Remove forgets session id. Unknown ids are ignored.
func (t *Tracker) Remove(id int64) {
	e, ok := t.sessions[id]
	if !ok {
		return
	}
	t.unbucket(id, e)
	if e.closing {
		t.closing--
	}
	delete(t.sessions, id)
	t.sessions = shrink.Map(t.sessions, &t.peak)
}

// Expired returns the sessions whose bucket deadline is at or before now,
// oldest bucket first and ascending ids within a bucket, and marks them
// closing so that each is returned once. The caller proposes a closeSession
// for each and calls Remove when it is applied.
func (t *Tracker) Expired(now int64) []int64 {
	var due []int64
	for d := range t.buckets {
		if d <= now {
			due = append(due, d)
		}
	}
	if len(due) == 0 {
		return nil
	}
	slices.Sort(due)
	var out []int64
	for _, d := range due {
		ids := slices.Sorted(maps.Keys(t.buckets[d]))
		delete(t.buckets, d)
		for _, id := range ids {
			e := t.sessions[id]
			e.deadline = 0
			if !e.closing {
				t.closing++
			}
			e.closing = true
			e.closingSince = now
		}
		out = append(out, ids...)
	}
	return out
}

// Reclose returns the sessions handed out for closing at or before
// now-after that are still here: their closeSession has not applied, as
// when the proposal was dropped (a leader change, a reconfig in flight).
// Without it such a session would stay closing for good, neither expired
// nor usable. Their wait starts again at now; the caller proposes their
// closeSession again (a second one, should both apply, fails harmlessly).
// A session SetClosing marked starts its wait here.
func (t *Tracker) Reclose(now, after int64) []int64 {
	if t.closing == 0 {
		return nil
	}
	var out []int64
	for id, e := range t.sessions {
		switch {
		case !e.closing:
		case e.closingSince == 0:
			e.closingSince = now
		case e.closingSince <= now-after:
			e.closingSince = now
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// NextExpiry returns the earliest bucket deadline (ms since the epoch), the
// time at which the caller should next call Expired, or 0 if no session is
// waiting to expire.
func (t *Tracker) NextExpiry() int64 {
	var next int64
	for d := range t.buckets {
		if next == 0 || d < next {
			next = d
		}
	}
	return next
}

// Len returns the number of tracked sessions, closing ones included.
func (t *Tracker) Len() int { return len(t.sessions) }

// Timeout returns the negotiated timeout of session id.
func (t *Tracker) Timeout(id int64) (int32, bool) {
	e, ok := t.sessions[id]
	if !ok {
		return 0, false
	}
	return e.timeout, true
}

// Get returns a view of session id.
func (t *Tracker) Get(id int64) (Session, bool) {
	e, ok := t.sessions[id]
	if !ok {
		return Session{}, false
	}
	return Session{ID: id, Timeout: e.timeout, Deadline: e.deadline, Closing: e.closing}, true
}

// Sessions returns every tracked session in ascending id order.
func (t *Tracker) Sessions() []Session {
	out := make([]Session, 0, len(t.sessions))
	for _, id := range slices.Sorted(maps.Keys(t.sessions)) {
		s, _ := t.Get(id)
		out = append(out, s)
	}
	return out
}

// Buckets returns the expiry buckets in deadline order, for the "dump"
// four-letter word.
func (t *Tracker) Buckets() []Bucket {
	out := make([]Bucket, 0, len(t.buckets))
	for _, d := range slices.Sorted(maps.Keys(t.buckets)) {
		out = append(out, Bucket{Deadline: d, IDs: slices.Sorted(maps.Keys(t.buckets[d]))})
	}
	return out
}

// Negotiate clamps a client's requested session timeout into [min, max], in
// that order, as Apache's ZooKeeperServer.processConnectRequest does (so if
// min > max, max wins).
func Negotiate(requested, min, max int32) int32 {
	if requested < min {
		requested = min
	}
	if requested > max {
		requested = max
	}
	return requested
}
