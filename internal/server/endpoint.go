package server

import (
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// A conn is the request path's Endpoint (core.go).
var _ Endpoint = (*conn)(nil)

// ID implements Endpoint.
func (c *conn) ID() uint64 { return c.id }

// SessionID implements Endpoint.
func (c *conn) SessionID() int64 { return c.sessionID() }

// AuthIDs implements Endpoint.
func (c *conn) AuthIDs() []jute.Id { return c.authIDs() }

// Send implements Endpoint.
func (c *conn) Send(frame []byte) { c.send(frame) }

// Finish implements Endpoint.
func (c *conn) Finish(frame []byte) { c.out.finish(frame) }

// Close implements Endpoint: conn.close ends it in the Core.
func (c *conn) Close() { c.close() }

// Replied implements Endpoint: the connection's and the server's
// statistics (cons, stat).
func (c *conn) Replied(xid int32, zxid int64, start, now time.Time) {
	c.st.replied(xid, zxid, now)
	if !start.IsZero() {
		d := now.Sub(start)
		c.srv.stats.lat.add(d)
		c.st.lat.add(d)
		c.st.lastLatency.Store(d.Milliseconds())
	}
}

// newCore is the Server's request path: over its connections, its
// replica, its throttling tokens and its metrics.
func (s *Server) newCore() *Core {
	k := newCore(CoreConfig{
		Logger:  s.log,
		Replica: serverReplica{s},
		Conn: func(id uint64) Endpoint {
			if c := s.conn(id); c != nil {
				return c
			}
			return nil // not a typed nil in the interface
		},
		Moved: s.touchMoved,
		Now:   time.Now,
	}, s.reqs, s.watches, s.tokens, s.metrics)
	k.audit = s.auditWrite
	return k
}

// serverReplica is the Server's replica as the Core sees it.
type serverReplica struct{ s *Server }

func (r serverReplica) Propose(t txn.Request, tag uint64) error {
	return r.s.rep.Submit(r.s.baseCtx, t, tag)
}

func (r serverReplica) Read(f func(*txn.State, int64)) { r.s.rep.Read(f) }

func (r serverReplica) LastZxid() int64 { return r.s.rep.LastZxid() }
