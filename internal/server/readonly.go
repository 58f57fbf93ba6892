package server

import (
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// Read-only mode (readonlymode.enabled, Apache's ReadOnlyZooKeeperServer):
// a member cut off from the quorum stops serving ordinary clients after
// an election timeout and, after readOnlyDelay, serves reads from its last
// applied state to the clients that connect with canBeReadOnly. Writes
// fail with NotReadOnly.
// When a leader is known again, the read-only connections are closed and
// their clients reconnect, to a read-write server.
//
// Sessions cannot be created through the log without a quorum. As in
// Apache, a read-only member gives new sessions only as local sessions
// (localSessionsEnabled): they live in this server's memory, are unknown
// to the ensemble, and are gone when read-only mode ends. Without local
// sessions it refuses new sessions, as Apache 3.8/3.9 does.
//
// It also refuses to reattach a global session, as Apache's
// ReadOnlyZooKeeperServer.validateSession does
// (RENEW_GLOBAL_SESSION_IN_RO_MODE): the majority, which the session's
// pings no longer reach, expires it after its timeout and deletes its
// ephemeral nodes. Serving it here would let a client believe it still
// holds them (a lock, a leadership) while others have taken them over.
// Its client keeps trying and reattaches once a leader is known again.

var (
	// errNotReadOnlyClient closes a connection from a client without
	// canBeReadOnly while the member is read-only.
	errNotReadOnlyClient = errors.New("refusing a client that cannot be read-only: this member has no quorum")
	// errNoLocalSessions closes a connection that asks for a new session
	// while the member is read-only and local sessions are disabled.
	errNoLocalSessions = errors.New("refusing a new session: a read-only member gives only local sessions (localSessionsEnabled=false)")
	// errGlobalSessionReadOnly closes a connection that reattaches a
	// global session while the member is read-only.
	errGlobalSessionReadOnly = errors.New("refusing global session reconnection in read-only mode")
)

// readOnlyState is the server's read-only mode. on changes only with
// Server.mu held, so a connection's connect (which reads it under mu)
// and the switch that closes connections of the other kind cannot
// interleave.
type readOnlyState struct {
	on atomic.Bool

	mu    sync.Mutex
	local map[int64]localSession // by session id
}

// localSession is a session given while read-only: never in the log.
type localSession struct {
	passwd  []byte
	expires int64 // ms; refreshed while a connection holds it
	timeout int32 // ms
}

// readOnly reports whether the server serves read-only clients now.
func (s *Server) readOnly() bool { return s.ro.on.Load() }

// enterReadOnly switches a member without a leader to read-only mode,
// closing the connections it served read-write. Called by housekeeping.
func (s *Server) enterReadOnly() {
	if s.readOnly() {
		s.sweepLocalSessions()
		return
	}
	s.mu.Lock()
	s.ro.on.Store(true)
	var rw []*conn
	for _, c := range s.conns {
		if !c.ro.Load() {
			rw = append(rw, c)
		}
	}
	s.mu.Unlock()
	s.log.Warn("no quorum: serving read-only clients (readonlymode.enabled)", "closing", len(rw))
	for _, c := range rw {
		c.close()
	}
}

// exitReadOnly returns to normal service once a leader is known: the
// read-only connections close, and their clients reconnect read-write
// (with a global session; a local one is gone, as in Apache).
func (s *Server) exitReadOnly() {
	if !s.readOnly() {
		return
	}
	s.mu.Lock()
	s.ro.on.Store(false)
	var ro []*conn
	for _, c := range s.conns {
		if c.ro.Load() {
			ro = append(ro, c)
		}
	}
	s.mu.Unlock()
	s.ro.mu.Lock()
	n := len(s.ro.local)
	s.ro.local = nil
	s.ro.mu.Unlock()
	s.log.Info("quorum regained: leaving read-only mode", "closing", len(ro), "local_sessions_dropped", n)
	for _, c := range ro {
		c.close()
	}
}

// sweepLocalSessions forgets the local sessions that no connection has
// held for their timeout, as their expiry; held ones get a new timeout.
func (s *Server) sweepLocalSessions() {
	now := s.nowMs()
	s.ro.mu.Lock()
	defer s.ro.mu.Unlock()
	for sid, ls := range s.ro.local {
		s.mu.RLock()
		held := s.bySess[sid] != nil
		s.mu.RUnlock()
		switch {
		case held:
			ls.expires = now + int64(ls.timeout)
			s.ro.local[sid] = ls
		case now >= ls.expires:
			delete(s.ro.local, sid)
		}
	}
}

// connectReadOnly answers a ConnectRequest while read-only.
func (c *conn) connectReadOnly(req *jute.ConnectRequest, timeout int32) error {
	s := c.srv
	if !req.ReadOnly {
		return errNotReadOnlyClient
	}
	resp := &jute.ConnectResponse{
		TimeOut: timeout, SessionID: req.SessionID, Passwd: req.Passwd, ReadOnly: true, HasReadOnly: true,
	}
	switch {
	case req.SessionID == 0:
		if !s.cfg.LocalSessions {
			return errNoLocalSessions
		}
		resp.SessionID = s.newSessionID()
		resp.Passwd = make([]byte, 16)
		_, _ = rand.Read(resp.Passwd)
		s.ro.mu.Lock()
		if s.ro.local == nil {
			s.ro.local = map[int64]localSession{}
		}
		s.ro.local[resp.SessionID] = localSession{passwd: resp.Passwd, timeout: timeout, expires: s.nowMs() + int64(timeout)}
		s.ro.mu.Unlock()
		s.log.Info("local session created (read-only mode)", "session", sessionHex(resp.SessionID))
	case s.localSession(req.SessionID) != nil:
		if !equalPasswd(s.localSession(req.SessionID), req.Passwd) {
			return c.refuseSession(req)
		}
	default:
		if s.globalSession(req.SessionID) {
			return errGlobalSessionReadOnly
		}
		return c.refuseSession(req)
	}
	c.session.Store(resp.SessionID)
	s.attach(resp.SessionID, c)
	c.send(connectFrame(resp))
	return nil
}

// localSession returns the password of a local session, or nil.
func (s *Server) localSession(sid int64) []byte {
	s.ro.mu.Lock()
	defer s.ro.mu.Unlock()
	if ls, ok := s.ro.local[sid]; ok {
		return ls.passwd
	}
	return nil
}

func equalPasswd(a, b []byte) bool { return string(a) == string(b) }

// readOnlyWrite answers a write on a read-only connection as Apache's
// ReadOnlyRequestProcessor does: NotReadOnly, except closing a local
// session, which needs no quorum.
func (c *conn) readOnlyWrite(r *request) error {
	s := c.srv
	sid := c.sessionID()
	if r.op == jute.OpCloseSession && s.localSession(sid) != nil {
		s.ro.mu.Lock()
		delete(s.ro.local, sid)
		s.ro.mu.Unlock()
		r.complete(s.rep.LastZxid(), jute.OK, nil)
		c.out.finish(nil)
		return errFinishing
	}
	r.complete(s.rep.LastZxid(), jute.NotReadOnly, nil)
	return nil
}

// fourLetterWords is the 4lw whitelist: Apache adds isro when read-only
// mode is enabled, since read-only clients depend on it.
func fourLetterWords(cfg Config) []string {
	if !cfg.ReadOnlyMode {
		return cfg.FourLetterWords
	}
	return append(append([]string{}, cfg.FourLetterWords...), "isro")
}

// localSessionCount is mntr's local_sessions.
func (s *Server) localSessionCount() int64 {
	s.ro.mu.Lock()
	defer s.ro.mu.Unlock()
	return int64(len(s.ro.local))
}

// globalSession reports whether sid is in the replicated session table;
// unlike checkSession it does not count as the session's activity.
func (s *Server) globalSession(sid int64) (known bool) {
	s.rep.Read(func(st *txn.State, _ int64) { _, known = st.Sessions[sid] })
	return known
}

// readOnlyDelay is how long a member is without a leader before it turns
// read-only: Apache's QuorumPeer waits max(2s, tickTime) before starting
// its ReadOnlyZooKeeperServer, so that an ordinary election does not
// switch it to read-only and back. Until then it serves no client.
func readOnlyDelay(tickTime time.Duration) time.Duration {
	return max(2*time.Second, tickTime)
}
