package server

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
)

// errDropped fails a request whose proposal the replica dropped (a leader
// change, a lost or refused forward, a stop): it may or may not apply
// later, so its client sees ConnectionLoss, as ZooKeeper allows.
var errDropped = errors.New("server: request dropped before it was applied")

// request is one request from the frame it was read from to its reply:
// a client's read, write, sync, sasl, auth, ping or closeSession; a
// handshake's session txn (createSession, setOwner); or the server's own
// restore. It holds the throttling token its reader took, if any, and
// ends exactly once, through complete, completeFrame or fail (or, for a
// restore, deliver): the token is given back there and nowhere else.
// While it waits for the log or for its session's earlier writes it sits
// in the server's registry.
type request struct {
	k     *Core    // the request path it runs on; nil until it is handled
	conn  Endpoint // nil for the server's own (a restore)
	xid   int32
	op    jute.Op
	rec   jute.Record // the decoded request; nil for ping, close, whoami
	start time.Time   // zero: not counted in latency stats
	token bool        // holds a throttling token

	tag   uint64 // its registry key while it waits for the log
	ahead int    // registry's: writes of its session before it (a waiting read)

	// connect is the reply to a handshake's session txn, which holds no
	// token and is answered with a ConnectResponse.
	connect *jute.ConnectResponse
	// done, for a restore, takes the event that ends it.
	done chan<- replica.Event

	ended atomic.Bool
}

// newRequest is a client request of c holding a token its reader took.
// The reader's spare request, if any, is reused: see dispatch.
func (c *conn) newRequest(h jute.RequestHeader, start time.Time) *request {
	r := c.spare
	if r == nil {
		r = new(request)
	}
	c.spare = nil
	*r = request{k: c.srv.core, conn: c, xid: h.Xid, op: h.Type, start: start, token: true}
	return r
}

// end marks the request completed and gives its token back. It reports
// false, and counts a bug, if it had already ended: a second completion
// must not reply twice or give a token back twice.
func (r *request) end() bool {
	if r.ended.Swap(true) {
		if k := r.k; k != nil && r.conn != nil {
			k.metrics.completedTwice.Inc()
			k.log.Error("bug: a request was completed twice; the second completion is ignored",
				"op", r.op, "xid", r.xid, "session", sessionHex(r.conn.SessionID()))
		}
		return false
	}
	return true
}

// release gives the request's token back, once it has ended.
func (r *request) release() {
	if r.token {
		<-r.k.tokens
	}
}

// complete answers the request with code at zxid and, if code is OK,
// resp.
func (r *request) complete(zxid int64, code jute.Code, resp jute.Record) {
	r.completeAt(r.k.now(), zxid, code, resp)
}

// completeAt is complete for a caller that has just read the clock.
func (r *request) completeAt(now time.Time, zxid int64, code jute.Code, resp jute.Record) {
	if code != jute.OK {
		resp = nil
	}
	frame, owner := encodeReply(jute.ReplyHeader{Xid: r.xid, Zxid: zxid, Err: code}, resp)
	r.completeOwned(now, frame, owner, zxid, false)
}

// completeFrame answers the request with a frame of the caller's; last
// makes it the connection's last frame (the connection closes once it
// is written).
func (r *request) completeFrame(frame []byte, zxid int64, last bool) {
	r.completeFrameAt(r.k.now(), frame, zxid, last)
}

// completeFrameAt is completeFrame at now, the time of the reply.
func (r *request) completeFrameAt(now time.Time, frame []byte, zxid int64, last bool) {
	r.completeOwned(now, frame, nil, zxid, last)
}

// completeOwned is completeFrameAt for a frame in a pooled buffer, owner
// (nil: none), which the connection's queue takes over.
func (r *request) completeOwned(now time.Time, frame []byte, owner *[]byte, zxid int64, last bool) {
	if !r.end() {
		return
	}
	c := r.conn
	if last {
		c.Finish(frame)
	} else {
		sendReply(c, frame, owner)
	}
	r.release()
	c.Replied(r.xid, zxid, r.start, now)
}

// fail ends the request without a reply: its connection closes, so the
// client sees ConnectionLoss and may retry elsewhere. A restore is told
// its proposal was dropped.
func (r *request) fail(err error) {
	if !r.end() {
		return
	}
	if r.done != nil {
		select {
		case r.done <- replica.Event{Kind: replica.Dropped}:
		default: // its channel holds one event; one already arrived
		}
		return
	}
	r.release()
	c := r.conn
	r.k.log.Debug("request failed; closing its connection", "op", r.op, "xid", r.xid,
		"session", sessionHex(c.SessionID()), "err", err)
	c.Close()
}

// deliver ends a restore with the event of its txn.
func (r *request) deliver(ev replica.Event) {
	if r.end() {
		r.done <- ev
	}
}

// answer answers a read from st, at zxid (the caller holds st locked).
func (r *request) answer(st *txn.State, zxid int64) {
	code, resp := r.k.serveRead(r.conn, r.op, r.rec, st, zxid)
	// Counted before the reply is queued: a client that asks mntr after
	// the reply sees its read.
	r.k.metrics.readLatency.Observe(r.k.sinceMs(r.start))
	r.complete(zxid, code, resp)
}

// replier is an Endpoint that queues replies apart from events (never
// refusing one) and takes over a reply's pooled buffer, giving it back
// once the reply is written: the server's conn.
type replier interface {
	reply(frame []byte, owner *[]byte)
}

// sendReply queues a reply in a pooled buffer, owner (nil: none). An
// endpoint that is not a replier gets the frame as any other; the buffer
// is then left to the collector.
func sendReply(c Endpoint, frame []byte, owner *[]byte) {
	if r, ok := c.(replier); ok {
		r.reply(frame, owner)
		return
	}
	c.Send(frame)
}
