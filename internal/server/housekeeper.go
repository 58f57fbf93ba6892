package server

import (
	"maps"
	"slices"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/session"
	"github.com/zoohq/zoo/internal/txn"
)

// Housekeeper is the part of a server's housekeeping that decides, with
// no goroutine, lock or clock of its own (time comes in as ms since the
// epoch): which sessions expire, which closeSession goes again, which
// sessions a follower reports to the leader, which containers and TTL
// nodes go, and which session's connection ends when a txn applies. Its
// caller does what it decides: the Server from its housekeeping goroutine
// and its replica's loop, holding Server.smu around every call;
// internal/sim from its members, on the simulated clock. So the
// simulator's checks cover these decisions.
//
// In an ensemble only the leader expires sessions (DESIGN decision 8): the
// others report the sessions they heard from, as Apache's followers answer
// the leader's pings, and a new leader gives every session a full timeout
// from when it took over.
type Housekeeper struct {
	tickMs   int64 // the expiry buckets' width: tickTime
	ensemble bool  // keep the sessions heard from, for reports to the leader
	tracker  *session.Tracker
	active   map[int64]struct{} // sessions heard from since the last report
	leading  bool               // tracking expiry as the leader
	// lostAt is when the server last stopped serving clients (no
	// leader, or out of the membership); 0 while it serves.
	lostAt int64
}

// recloseTicks is how many ticks a leader waits for an expired session's
// closeSession to apply before it proposes it again: a dropped proposal
// would otherwise leave the session closing for good, neither expired nor
// usable (found by the simulator).
const recloseTicks = 5

// NewHousekeeper returns a Housekeeper with expiry buckets tickMs wide,
// tracking no session yet. In an ensemble it keeps the sessions heard
// from for Follow.
func NewHousekeeper(tickMs int64, ensemble bool, now int64) *Housekeeper {
	return &Housekeeper{
		tickMs:   tickMs,
		ensemble: ensemble,
		tracker:  session.New(tickMs, now),
		active:   make(map[int64]struct{}),
	}
}

// Track restarts expiry from sessions (the replicated state's, after a
// start, a restore or a leader's snapshot): each is due one timeout from
// now.
func (h *Housekeeper) Track(sessions map[int64]txn.SessionInfo, now int64) {
	h.tracker = session.New(h.tickMs, now)
	for _, id := range slices.Sorted(maps.Keys(sessions)) {
		h.tracker.Add(id, sessions[id].TimeoutMs, now)
	}
}

// Leading reports whether the Housekeeper tracks expiry as the leader
// (TakeOver), not as a follower (Follow).
func (h *Housekeeper) Leading() bool { return h.leading }

// TakeOver starts tracking expiry as a server that has just become the
// leader: every live session is due one timeout from now.
func (h *Housekeeper) TakeOver(sessions map[int64]txn.SessionInfo, now int64) {
	h.Track(sessions, now)
	h.leading = true
}

// Follow ends a report period on a server that does not lead: it returns
// the sessions heard from since the last, for ReportActivity to the
// leader, in ascending order.
func (h *Housekeeper) Follow() []int64 {
	h.leading = false
	ids := slices.Sorted(maps.Keys(h.active))
	h.resetActive()
	return ids
}

// Leaderless tells a member of an ensemble whether it serves clients at
// now (it knows a leader and is in the membership) and returns how long
// it has not: 0 while it serves and at the first check it does not. Past
// an election timeout the server closes its client connections (or turns
// read-only), so that its clients move to a server in the majority.
func (h *Housekeeper) Leaderless(serving bool, now int64) int64 {
	switch {
	case serving:
		h.lostAt = 0
	case h.lostAt == 0:
		h.lostAt = now
	default:
		return now - h.lostAt
	}
	return 0
}

// Expiry is what one expiry check asks of the server.
type Expiry struct {
	// Expired are the sessions whose time is up: the server proposes
	// their closeSession. Again are those whose closeSession, proposed
	// recloseTicks ago, has not applied (it was dropped): it goes again.
	Expired, Again []int64
	// Next is when the next session is due, 0 if none is.
	Next int64
}

// Expire checks expiry at now, as the leader or standalone.
func (h *Housekeeper) Expire(now int64) Expiry {
	// The leader tracks expiry itself: what Touch records for a report
	// would pile up here.
	h.resetActive()
	var e Expiry
	e.Expired = h.tracker.Expired(now)
	for _, id := range e.Expired {
		h.tracker.SetClosing(id)
	}
	e.Again = h.tracker.Reclose(now, recloseTicks*h.tickMs)
	e.Next = h.tracker.NextExpiry()
	return e
}

// Touch records traffic from a session; it reports false for a session
// the tracker does not know or is closing.
func (h *Housekeeper) Touch(sid int64, now int64) bool {
	if sid == 0 {
		return false
	}
	if h.ensemble {
		h.active[sid] = struct{}{}
	}
	return h.tracker.Touch(sid, now)
}

// TouchMoved records traffic from a session that just moved here, live in
// the replicated state with this timeout; leader says whether this server
// leads. Only the leader's tracker decides that a session is closing; a
// tracker that does not know the session (this server took its state from
// a leader's snapshot, which the tracker did not follow), or a former
// leader's that still marks it closing, starts tracking it afresh, so the
// move is not refused as if the session had expired (both found by the
// simulator). It reports false for a session the leader is closing.
func (h *Housekeeper) TouchMoved(sid int64, timeoutMs int32, leader bool, now int64) bool {
	if e, known := h.tracker.Get(sid); !known || (e.Closing && !leader) {
		h.tracker.Remove(sid)
		h.tracker.Add(sid, timeoutMs, now)
	}
	return h.Touch(sid, now)
}

// Activity touches the sessions another server heard from (its report).
func (h *Housekeeper) Activity(ids []int64, now int64) {
	for _, id := range ids {
		h.tracker.Touch(id, now)
	}
}

// SessionEnd is what becomes of a session's connection on this server
// when a txn applies.
type SessionEnd int

const (
	// Keep: the txn ends no session's connection here.
	Keep SessionEnd = iota
	// Moved: the session moved to another server; its connection here,
	// should it still be open, closes at once (Apache closes it at its
	// next request).
	Moved
	// Ended: the session was closed or expired; its connection closes
	// after what is queued for it (the closeSession's reply among it).
	Ended
)

// sessionTxn reports whether a txn of type op is one Applied acts on:
// every other txn leaves the session table and its connections as they
// were, so the caller need not take the tracker's lock or read the clock.
func sessionTxn(op jute.Op) bool {
	return op == jute.OpCloseSession || op == jute.OpCreateSession || op == txn.OpSetOwner
}

// Applied keeps expiry in step with an applied txn t (result err) of the
// replicated session table, on server self, at now; it returns what
// becomes of the connection of t's session here. A closeSession ends the
// session whatever its result (one that fails found it gone already); a
// createSession or setOwner counts only if it succeeded.
func (h *Housekeeper) Applied(t *txn.Txn, err jute.Code, self int64, now int64) SessionEnd {
	switch {
	case t.Type == jute.OpCloseSession:
		h.tracker.Remove(t.SessionID)
		if mutated(MutEndedKeepsConn) {
			return Keep
		}
		return Ended
	case err != jute.OK:
	case t.Type == jute.OpCreateSession:
		h.tracker.Add(t.SessionID, t.Body.(*txn.CreateSessionTxn).TimeoutMs, now)
	case t.Type == txn.OpSetOwner && t.Body.(*txn.SetOwnerTxn).Owner != self:
		return Moved
	}
	return Keep
}

// resetActive empties the set of sessions heard from. A large set is
// replaced, not cleared, so its memory goes back.
func (h *Housekeeper) resetActive() {
	if len(h.active) > 256 {
		h.active = make(map[int64]struct{})
		return
	}
	clear(h.active)
}

// Cleanup lists the containers left empty and the TTL nodes past their
// time in st at now, in path order, at most limit of them (0: all): the
// leader deletes each through the log (deleteContainer).
func Cleanup(st *txn.State, now int64, limit int) []string {
	paths := append(st.Tree.ContainersToDelete(), st.Tree.ExpiredTTL(now)...)
	slices.Sort(paths) // the tree lists them in map order
	if limit > 0 && len(paths) > limit {
		paths = paths[:limit]
	}
	return paths
}
