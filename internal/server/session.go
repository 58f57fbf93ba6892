package server

import (
	"bytes"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/shrink"
	"github.com/zoohq/zoo/internal/txn"
)

// Sessions are replicated state (txn.State.Sessions, DESIGN decision 8);
// this server also tracks their expiry, touching a session on every packet
// and closing the expired ones through the log.

// expireSessions closes the sessions whose time is up and returns how long
// to wait before the next check; the Housekeeper decides which.
func (s *Server) expireSessions() time.Duration {
	if s.cfg.Ensemble.enabled() {
		s.checkQuorum()
		if !s.rep.IsLeader() {
			return s.followerTick()
		}
		s.smu.Lock()
		leading := s.hk.Leading()
		s.smu.Unlock()
		if !leading {
			s.takeOver()
		}
	}
	now := s.nowMs()
	s.smu.Lock()
	e := s.hk.Expire(now)
	s.smu.Unlock()
	for _, id := range e.Expired {
		s.log.Info("session expired", "session", sessionHex(id))
		s.stats.expired.Add(1)
		s.metrics.staleSessionsExpired.Inc()
	}
	for _, id := range e.Again {
		s.log.Warn("an expired session's closeSession did not apply (dropped); proposing it again", "session", sessionHex(id))
	}
	for _, id := range append(e.Expired, e.Again...) {
		if err := s.rep.Submit(s.baseCtx, txn.Request{SessionID: id, Op: jute.OpCloseSession}, 0); err != nil {
			return s.cfg.TickTime
		}
	}
	wait := time.Duration(e.Next-now) * time.Millisecond
	longest := s.cfg.TickTime
	if s.cfg.Ensemble.enabled() {
		longest /= 2 // notice a lost leadership soon
	}
	if wait <= 0 || wait > longest {
		wait = longest
	}
	return wait
}

// touch records traffic from a session; it reports false for a session the
// tracker does not know or is closing.
func (s *Server) touch(sid int64) bool {
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.hk.Touch(sid, s.nowMs())
}

// touchMoved records traffic from a session that just moved here, live in
// the replicated state (Housekeeper.TouchMoved). It reports false for a
// session the leader is closing.
func (s *Server) touchMoved(sid int64, timeoutMs int32) bool {
	leading := s.rep.IsLeader()
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.hk.TouchMoved(sid, timeoutMs, leading, s.nowMs())
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
// session table, and closes the connection of a session that ended or
// moved to another server (Housekeeper.Applied decides).
func (s *Server) sessionChanged(ev replica.Event) {
	t := ev.Txn
	if !sessionTxn(t.Type) {
		return
	}
	s.smu.Lock()
	end := s.hk.Applied(t, ev.Result.Err, s.cfg.ServerID, s.nowMs())
	s.smu.Unlock()
	if end == Keep {
		return
	}
	s.mu.Lock()
	c := s.bySess[t.SessionID]
	s.forgetSessionConn(t.SessionID)
	s.mu.Unlock()
	switch {
	case c == nil:
	case end == Moved:
		s.log.Info("session moved to another server; closing its connection here", "session", sessionHex(t.SessionID))
		c.close()
	default:
		// After its queued frames (the closeSession reply among them).
		c.out.finish(nil)
	}
}

// forgetSessionConn drops a session's connection from bySess; s.mu is
// held.
func (s *Server) forgetSessionConn(sid int64) {
	delete(s.bySess, sid)
	s.bySess = shrink.Map(s.bySess, &s.bySessPeak)
}
