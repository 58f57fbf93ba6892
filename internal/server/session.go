package server

import (
	"bytes"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/shrink"
	"github.com/zoohq/zoo/internal/txn"
)

// Sessions are replicated state (txn.State.Sessions, DESIGN decision 8);
// this server also tracks their expiry, touching a session on every packet
// and closing the expired ones through the log.

// expireSessions closes the sessions whose time is up and returns how long
// to wait before the next check.
func (s *Server) expireSessions() time.Duration {
	if s.cfg.Ensemble.enabled() {
		s.checkQuorum()
		if !s.rep.IsLeader() {
			return s.followerTick()
		}
		if !s.leading {
			s.takeOver()
		}
	}
	now := s.nowMs()
	s.smu.Lock()
	// The leader tracks expiry itself: what touch records for a report
	// to the leader would pile up here.
	s.resetActive()
	expired := s.tracker.Expired(now)
	for _, id := range expired {
		s.tracker.SetClosing(id)
	}
	again := s.tracker.Reclose(now, recloseTicks*s.cfg.TickTime.Milliseconds())
	next := s.tracker.NextExpiry()
	s.smu.Unlock()
	for _, id := range expired {
		s.log.Info("session expired", "session", sessionHex(id))
		s.stats.expired.Add(1)
		s.metrics.staleSessionsExpired.Inc()
	}
	for _, id := range again {
		s.log.Warn("an expired session's closeSession did not apply (dropped); proposing it again", "session", sessionHex(id))
	}
	for _, id := range append(expired, again...) {
		if err := s.rep.Submit(s.baseCtx, txn.Request{SessionID: id, Op: jute.OpCloseSession}, 0); err != nil {
			return s.cfg.TickTime
		}
	}
	wait := time.Duration(next-now) * time.Millisecond
	longest := s.cfg.TickTime
	if s.cfg.Ensemble.enabled() {
		longest /= 2 // notice a lost leadership soon
	}
	if wait <= 0 || wait > longest {
		wait = longest
	}
	return wait
}

// recloseTicks is how many ticks a leader waits for an expired session's
// closeSession to apply before it proposes it again: a dropped proposal
// would otherwise leave the session closing for good, neither expired nor
// usable (found by the simulator).
const recloseTicks = 5

// touch records traffic from a session; it reports false for a session the
// tracker does not know or is closing.
func (s *Server) touch(sid int64) bool {
	if sid == 0 {
		return false
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.cfg.Ensemble.enabled() {
		s.active[sid] = struct{}{}
	}
	return s.tracker.Touch(sid, s.nowMs())
}

// touchMoved records traffic from a session that just moved here, live in
// the replicated state. Only the leader's tracker decides that a session
// is closing; a tracker that does not know the session (this server took
// its state from a leader's snapshot, which the tracker did not follow),
// or a former leader's that still marks it closing, starts tracking it
// afresh, so the move is not refused as if the session had expired (both
// found by the simulator). It reports false for a session the leader is
// closing.
func (s *Server) touchMoved(sid int64, timeoutMs int32) bool {
	leading := s.rep.IsLeader()
	s.smu.Lock()
	defer s.smu.Unlock()
	now := s.nowMs()
	if e, known := s.tracker.Get(sid); !known || (e.Closing && !leading) {
		s.tracker.Remove(sid)
		s.tracker.Add(sid, timeoutMs, now)
	}
	if s.cfg.Ensemble.enabled() {
		s.active[sid] = struct{}{}
	}
	return s.tracker.Touch(sid, now)
}

// newSessionID allocates a session id in this server's id space.
func (s *Server) newSessionID() int64 {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.ids.Next()
}

// checkSession reports whether sid is a session this server knows,
// whether it is live with this password, and the server that owns it (0
// if none is known), from one read of the state.
func (s *Server) checkSession(sid int64, passwd []byte) (known, valid bool, owner int64) {
	s.rep.Read(func(st *txn.State, _ int64) {
		info, found := st.Sessions[sid]
		known, valid, owner = found, found && bytes.Equal(info.Password, passwd), info.Owner
	})
	return known, valid && s.touch(sid), owner
}

// attach binds a session to c, closing the connection it was attached to
// before: a session lives on one connection at a time.
func (s *Server) attach(sid int64, c *conn) {
	s.mu.Lock()
	old := s.bySess[sid]
	s.bySess[sid] = c
	s.mu.Unlock()
	if old != nil && old != c {
		s.log.Info("session moved to a new connection; closing the old one", "session", sessionHex(sid))
		old.close()
	}
}

// sessionChanged keeps the expiry tracker in step with the replicated
// session table, and closes the connection of a session that ended.
func (s *Server) sessionChanged(t *txn.Txn) {
	switch t.Type {
	case jute.OpCreateSession:
		s.smu.Lock()
		s.tracker.Add(t.SessionID, t.Body.(*txn.CreateSessionTxn).TimeoutMs, s.nowMs())
		s.smu.Unlock()
	case txn.OpSetOwner:
		if t.Body.(*txn.SetOwnerTxn).Owner == s.cfg.ServerID {
			return
		}
		// The client went to another server: drop its connection here,
		// should it still be open (Apache closes it at the first write).
		s.mu.Lock()
		c := s.bySess[t.SessionID]
		s.forgetSessionConn(t.SessionID)
		s.mu.Unlock()
		if c != nil {
			s.log.Info("session moved to another server; closing its connection here", "session", sessionHex(t.SessionID))
			c.close()
		}
	case jute.OpCloseSession:
		s.smu.Lock()
		s.tracker.Remove(t.SessionID)
		s.smu.Unlock()
		s.mu.Lock()
		c := s.bySess[t.SessionID]
		s.forgetSessionConn(t.SessionID)
		s.mu.Unlock()
		if c != nil {
			// After its queued frames (the closeSession reply among them).
			c.out.finish(nil)
		}
	}
}

// forgetSessionConn drops a session's connection from bySess; s.mu is
// held.
func (s *Server) forgetSessionConn(sid int64) {
	delete(s.bySess, sid)
	s.bySess = shrink.Map(s.bySess, &s.bySessPeak)
}

// resetActive empties the set of sessions heard from; smu is held. A
// large set is replaced, not cleared, so its memory goes back.
func (s *Server) resetActive() {
	if len(s.active) > 256 {
		s.active = make(map[int64]struct{})
		return
	}
	clear(s.active)
}
