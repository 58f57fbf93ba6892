package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/rawsock"
	"github.com/zoohq/zoo/internal/session"
	"github.com/zoohq/zoo/internal/txn"
)

// errFinishing ends a connection's reader after a last frame was queued
// with outq.finish: the writer closes the connection once it is written.
var errFinishing = errors.New("server: connection finishing")

// conn is one client connection. Its reader goroutine (serve) owns the
// request side; a writer goroutine drains out, or the reader itself when
// it has answered the requests it had buffered (writers.go). Replies and
// events are queued on out by whichever goroutine computes them, in the
// order the client must see them.
type conn struct {
	srv *Server
	id  uint64
	nc  net.Conn // the socket
	ip  netip.Addr
	br  *connReader
	buf []byte // frame buffer, reused: decoded records never alias it
	// spare is the reader's: a request that ended and that nothing else
	// holds, for newRequest to reuse.
	spare *request
	out   *outq
	// touched is the br.fills of the last read whose frames touched the
	// session; 0 makes the next request touch it.
	touched uint64
	// queuedRead is the reader's: the last request was a read queued
	// behind the connection's writes. Only then can the reads waiting
	// behind them have reached the bound (waitReadsBehind): a read
	// answered at once means none waits.
	queuedRead bool
	// token is the reader's: a token of the global outstanding limit the
	// idle poller took for it, which its next request uses (acquire).
	token bool
	// holding is the reader's: it holds out (hold, writers.go).
	holding bool

	// sec is the listener's TLS (nil: plaintext); wire is what requests
	// are read from and replies written to: nc, or the TLS layer over it.
	sec  *Secure
	wire net.Conn

	session atomic.Int64
	timeout atomic.Int32
	ro      atomic.Bool // connected while the server was read-only

	authMu sync.Mutex
	auth   []jute.Id
	// The reader's SASL exchange, once begun, and its mechanism's name.
	sasl     saslMechanism
	saslMech string

	done      chan struct{}
	closeOnce sync.Once
	lingering atomic.Bool // the reader closes the socket after a lingering read
	rest      restGate
	st        connStats
	// The idle poller's (idlepoll_linux.go), under its mu: the token c is
	// parked under (0: not parked), whether its socket is in the poller's
	// set, the rest's mark (restGate.wait) and when it was parked.
	idleTok   uint64
	idleAdded bool
	restMark  uint64
	parkedAt  time.Time
}

func newConn(s *Server, id uint64, nc net.Conn, ip netip.Addr) *conn {
	c := &conn{
		srv:  s,
		id:   id,
		nc:   nc,
		wire: nc,
		ip:   ip,
		br:   newConnReader(rawsock.Reader(nc)),
		done: make(chan struct{}),
	}
	c.out = newOutq(s.cfg.MaxOutbound, &s.outbound, func() { s.startWriter(c) })
	c.st.established = s.cfg.Now()
	c.st.lastCxid.Store(-1)
	c.st.lastZxid.Store(-1)
	s.reqs.open(id)
	if ip.IsValid() {
		c.auth = []jute.Id{{Scheme: "ip", ID: ip.String()}}
	}
	if s.cfg.SkipACL {
		c.auth = append(c.auth, jute.Id{Scheme: "super"})
	}
	return c
}

func (c *conn) sessionID() int64 { return c.session.Load() }

// close tears the connection down at once; queued frames are discarded.
// The reads that waited for its writes fail with it; its writes end when
// the replica reports them (their replies go nowhere).
func (c *conn) close() {
	first := false
	c.closeOnce.Do(func() {
		first = true
		close(c.done)
		c.out.close()
		c.nc.Close()
		c.srv.removeConn(c)
	})
	if first {
		for _, req := range c.srv.reqs.close(c.id) {
			req.fail(net.ErrClosed)
		}
		// A parked reader has no goroutine to see the socket close; its
		// role is now this goroutine's, and all that is left of it is the
		// buffer (finishReading on a closed socket). No goroutine each: a
		// burst of closes would leave their descriptors behind.
		if c.srv.idle.unpark(c) {
			c.br.drop()
		}
	}
}

// send queues a frame, and closes the connection if the client has fallen
// too far behind to take it.
func (c *conn) send(frame []byte) { c.sendOwned(frame, nil) }

// sendOwned is send for a frame in a pooled buffer, owner (nil: none).
func (c *conn) sendOwned(frame []byte, owner *[]byte) {
	c.srv.metrics.responseBytes.Add(int64(len(frame)))
	c.sent(c.out.pushOwned(frame, owner))
}

// reply queues the reply to a request, in a pooled buffer owner (nil:
// none). Unlike an event it never closes the connection (outq.pushReply).
func (c *conn) reply(frame []byte, owner *[]byte) {
	c.srv.metrics.responseBytes.Add(int64(len(frame)))
	c.sent(c.out.pushReply(frame, owner))
}

// sent accounts for a frame queued, or closes a connection that overflowed.
func (c *conn) sent(res pushResult) {
	switch res {
	case overflow:
		c.srv.log.Warn("client is not reading; closing its connection",
			"remote", c.nc.RemoteAddr(), "session", sessionHex(c.sessionID()), "queued_limit", c.srv.cfg.MaxOutbound)
		c.close()
	case pushed:
		c.st.sent.Add(1)
		c.srv.stats.sent.Add(1)
	}
}

func (c *conn) serve() {
	if c.sec != nil {
		if err := c.startTLS(); err != nil {
			c.tlsFailed(err)
			c.br.drop()
			c.close()
			return
		}
	}
	err := c.handshakeWithin(c.srv.cfg.HandshakeTimeout)
	if err == nil {
		// A session that is to be parked is parked as soon as it is idle:
		// a burst of new sessions then never holds a goroutine each, whose
		// descriptors the runtime would keep (idlepoll_linux.go).
		err = c.readLoop(parkable(c))
	}
	if err != errRested {
		c.finishReading(err)
	}
}

// finishReading ends the connection after its reader stopped with err.
func (c *conn) finishReading(err error) {
	defer c.close()
	defer c.br.drop()
	c.ended(err)
}

// readLoop reads and handles requests until one ends the connection, or
// until the reader rests (errRested: a fresh goroutine reads on); with
// handOver, as soon as the socket has nothing more (rest.go).
func (c *conn) readLoop(handOver bool) error {
	for {
		// Before anything that may wait, and so before a hand-over
		// (which needs an empty buffer), the reader lets go of out.
		if c.holding && !c.mayHold() {
			c.flush(true)
		}
		ok, waited := c.out.waitBelow(c.srv.cfg.OutboundPause, c.srv.cfg.MaxOutboundTotal, c.done)
		if ok && c.queuedRead {
			var w bool
			ok, w = c.waitReadsBehind()
			waited = waited || w
		}
		if !ok {
			c.flush(false)
			return net.ErrClosed
		}
		if waited {
			c.touched = 0 // time passed since the frames buffered arrived
		}
		if c.br.buffered() == 0 {
			if handOver {
				return c.handOver()
			}
			rest, err := c.await()
			if rest {
				return c.handOver()
			}
			if err != nil {
				return err
			}
		}
		frame, err := c.readFrame()
		if err == nil {
			err = c.handle(frame)
		}
		if err != nil {
			c.flush(false)
			return err
		}
	}
}

// waitReadsBehind blocks while the connection has as many reads waiting
// behind its writes as the server lets wait. Their replies are queued all
// at once when the writes are answered, past the pause mark if they are
// large, and are never refused (outq.pushReply): this bounds them to
// about MaxOutbound (maxReadsBehind replies of at most MaxFrame each).
// Each read answered queues its reply, whose write wakes the reader.
// It reports ok false if the connection closes first, and whether it
// waited.
func (c *conn) waitReadsBehind() (ok, waited bool) {
	for c.srv.reqs.readsBehind(c.id) >= c.srv.maxReadsBehind {
		waited = true
		select {
		case <-c.out.space:
		case <-c.done:
			return false, waited
		}
	}
	return true, waited
}

func (c *conn) tlsFailed(err error) {
	level := slog.LevelWarn
	if errors.Is(err, io.EOF) {
		level = slog.LevelDebug // a port probe: connected and closed
	}
	c.srv.log.Log(context.Background(), level, "closing client connection: TLS failed", "remote", c.nc.RemoteAddr(), "err", err)
}

// ended finishes a connection whose reader stopped with err.
func (c *conn) ended(err error) {
	switch {
	case errors.Is(err, errFinishing):
		// Wait for the writer to flush and close; it bounds the wait with
		// its write deadline. A client that half-closed its side after
		// sending (nc, zkServer.sh status, a four-letter word from
		// Python) ends the read at once: the reply must still be
		// written before the deferred close discards it.
		_, _ = io.Copy(io.Discard, c.br)
		<-c.done
	case errors.Is(err, errHandshakeTimeout):
		c.srv.log.Info("closing client connection: no handshake in time", "remote", c.nc.RemoteAddr(),
			"timeout", c.srv.cfg.HandshakeTimeout)
	case errors.Is(err, io.EOF), isClosedErr(err), errors.Is(err, errTLSOnPlaintext):
	case errors.Is(err, jute.ErrFrameTooLarge), errors.Is(err, jute.ErrBadLength):
		c.srv.log.Warn("closing client connection: bad frame length", "remote", c.nc.RemoteAddr(),
			"session", sessionHex(c.sessionID()), "err", err)
		c.linger()
	default:
		c.srv.log.Info("closing client connection", "remote", c.nc.RemoteAddr(),
			"session", sessionHex(c.sessionID()), "err", err)
	}
}

// write drains the outbound queue; c.out starts it when a frame is queued
// and no writer runs. It closes the connection once a write fails or the
// last frame is written, unless the reader lingers over the socket.
func (c *conn) write() {
	c.wrote(writeLoop(c.wire, c.out, c.srv.cfg.WriteTimeout, 0))
}

// wrote ends a writeLoop that returned err.
func (c *conn) wrote(err error) {
	if errors.Is(err, errWriterIdle) || errors.Is(err, errWriterMore) {
		return
	}
	if err != nil && !isClosedErr(err) {
		c.srv.log.Debug("write to client", "remote", c.nc.RemoteAddr(), "err", err)
	}
	if !c.lingering.Load() {
		c.close()
	}
}

// Lingering bounds what linger reads from a client after giving up on it.
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 4 << 20
)

// linger ends a connection whose client may still be sending, such as the
// rest of an oversized frame. Closing a socket with unread data makes the
// kernel reset it, and the client then sees a failed write instead of an
// orderly close; so send FIN first and read what is in flight, within a
// bound, before the caller closes.
func (c *conn) linger() {
	c.lingering.Store(true)
	c.out.close() // the writer stops and leaves the socket to us
	if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.CopyN(io.Discard, c.br, lingerBytes)
}

func isClosedErr(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF)
}

// maxKeptFrame is the largest frame buffer a connection keeps between
// frames.
const maxKeptFrame = 4 << 10

func (c *conn) readFrame() ([]byte, error) {
	frame, inPlace, err := c.br.next(c.buf, c.srv.cfg.MaxFrame)
	switch {
	case inPlace: // the frame buffer stays as it was
	case cap(frame) > maxKeptFrame:
		// A large frame's buffer is not kept for an idle connection: the
		// next frame gets its own (decoded records never alias it).
		c.buf = nil
	default:
		c.buf = frame
	}
	if err == nil {
		c.st.received.Add(1)
		c.srv.stats.received.Add(1)
		c.srv.metrics.bytesReceived.Add(int64(len(frame)) + 4)
	}
	return frame, err
}

// errHandshakeTimeout ends a connection that did not finish its handshake
// within Config.HandshakeTimeout.
var errHandshakeTimeout = errors.New("server: no handshake in time")

// handshakeWithin is handshake under a read deadline: a socket that sends
// nothing, or part of a handshake, is closed when it passes, as Apache's
// connection expirer closes connections without a session. The deadline
// is lifted once the handshake is read; an established session's silence
// is bounded by its own timeout instead.
func (c *conn) handshakeWithin(d time.Duration) error {
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	err := c.handshake()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", errHandshakeTimeout, err)
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	return err
}

// handshake reads the first frame: a four-letter word or a ConnectRequest.
func (c *conn) handshake() error {
	head, err := c.br.Peek(4)
	if err != nil {
		return err
	}
	if _, isTLS := c.wire.(*tls.Conn); !isTLS && looksLikeTLS(head) {
		c.srv.log.Warn("closing client connection: a TLS client on a plaintext port (use secureClientPort, or client.portUnification=true)",
			"remote", c.nc.RemoteAddr())
		return errTLSOnPlaintext
	}
	if cmd := string(head); isFourLetterWord(cmd) {
		_, _ = c.br.Discard(4)
		c.st.received.Add(1)
		c.st.fourLetter.Store(true)
		if cmd == "stmk" {
			// stmk carries the new trace mask as an 8-byte long.
			var mask [8]byte
			if _, err := io.ReadFull(c.br, mask[:]); err != nil {
				return err
			}
			c.srv.traceMask.Store(int64(binary.BigEndian.Uint64(mask[:])))
		}
		c.out.finish([]byte(c.srv.fourLetter(cmd)))
		return errFinishing
	}
	frame, err := c.readFrame()
	if err != nil {
		return err
	}
	var req jute.ConnectRequest
	r := jute.NewReader(frame)
	req.Decode(r)
	if r.Err() != nil {
		return fmt.Errorf("malformed connect request: %w", r.Err())
	}
	return c.connect(&req)
}

// connect opens a new session or reattaches an existing one.
// Ref: paper section 4.4 (a client never sees state go backwards).
func (c *conn) connect(req *jute.ConnectRequest) error {
	s := c.srv
	if last := s.rep.LastZxid(); req.LastZxidSeen > last {
		return fmt.Errorf("refusing session: client has seen zxid %#x, ours is %#x; it must try another server",
			req.LastZxidSeen, last)
	}
	timeout := session.Negotiate(req.TimeOut, s.cfg.MinSessionTimeout, s.cfg.MaxSessionTimeout)
	c.timeout.Store(timeout)
	s.mu.RLock()
	ro := s.readOnly()
	c.ro.Store(ro)
	s.mu.RUnlock()
	if ro {
		return c.connectReadOnly(req, timeout)
	}
	if req.SessionID == 0 {
		return c.createSession(req, timeout)
	}
	resp := &jute.ConnectResponse{
		TimeOut: timeout, SessionID: req.SessionID, Passwd: req.Passwd, HasReadOnly: req.HasReadOnly,
	}
	known, valid, owner := s.checkSession(req.SessionID, req.Passwd)
	if known && !valid {
		return c.refuseSession(req)
	}
	if s.cfg.Ensemble.enabled() && owner != s.cfg.ServerID {
		// The session moved here, or this server has not applied its
		// creation yet: the ensemble records the move (setOwner) before
		// the client is answered, as Apache's followers revalidate a
		// session with the leader. The server it left then refuses its
		// old connection's writes (SessionMoved) and closes it; two
		// moves apply in the order they happened; and once the move is
		// applied here, so is the session's creation, so the password
		// is checked then (complete).
		c.session.Store(req.SessionID)
		s.attach(req.SessionID, c)
		return c.submit(&request{conn: c, op: txn.OpSetOwner, connect: resp},
			txn.Request{SessionID: req.SessionID, Op: txn.OpSetOwner})
	}
	if !valid {
		return c.refuseSession(req)
	}
	c.session.Store(req.SessionID)
	s.attach(req.SessionID, c)
	c.send(connectFrame(resp))
	return nil
}

// refuseSession answers a reattach of a session that is unknown, expired
// or has another password: a zero timeout and password tell the client
// its session is gone.
func (c *conn) refuseSession(req *jute.ConnectRequest) error {
	c.srv.log.Info("refusing to reattach session: unknown, expired or wrong password",
		"session", sessionHex(req.SessionID), "remote", c.nc.RemoteAddr())
	c.out.finish(connectFrame(&jute.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}))
	return errFinishing
}

func (c *conn) createSession(req *jute.ConnectRequest, timeout int32) error {
	s := c.srv
	sid := s.newSessionID()
	passwd := make([]byte, 16)
	_, _ = rand.Read(passwd)
	c.session.Store(sid)
	s.attach(sid, c)
	p := &request{conn: c, op: jute.OpCreateSession, connect: &jute.ConnectResponse{
		TimeOut: timeout, SessionID: sid, Passwd: passwd, HasReadOnly: req.HasReadOnly,
	}}
	return c.submit(p, txn.Request{
		SessionID: sid,
		Op:        jute.OpCreateSession,
		Record:    &txn.CreateSession{TimeoutMs: timeout, Password: passwd},
	})
}

func connectFrame(resp *jute.ConnectResponse) []byte {
	return encodeFrame(nil, resp)
}

// handle runs one request. It returns an error only when the connection
// must close: a malformed header, an unknown opcode, a failed auth.
func (c *conn) handle(frame []byte) error {
	r := jute.NewReader(frame)
	var h jute.RequestHeader
	h.Decode(r)
	if r.Err() != nil {
		return fmt.Errorf("malformed request header: %w", r.Err())
	}
	body := frame[r.Offset():]
	c.st.lastOp.Store(int32(h.Type))
	if answersItself(h.Type) {
		c.hold()
	} else {
		c.flush(false)
	}
	if !c.acquire() {
		return net.ErrClosed
	}
	if c.touched != c.br.fills {
		// Once per socket read (and after any wait): the requests that
		// came in one read extend the session to the same deadline.
		c.touched = c.br.fills
		c.srv.touch(c.sessionID())
	}
	req := c.newRequest(h, c.br.at)
	switch h.Type {
	case jute.OpAuth:
		return c.authenticate(req, body)
	}
	if h.Type != jute.OpSASL && !c.enforceAuth(req) {
		return errFinishing
	}
	switch h.Type {
	case jute.OpPing, jute.OpCloseSession, jute.OpWhoAmI:
		return c.dispatch(req)
	}
	rec, err := jute.DecodeRequest(h.Type, body)
	req.rec = rec
	switch {
	case h.Type == jute.OpDeleteContainer:
		// Server-internal; Apache answers a client that sends it so.
		req.complete(c.srv.rep.LastZxid(), jute.BadArguments, nil)
		return nil
	case errors.Is(err, jute.ErrUnknownOp):
		// Apache answers Unimplemented, then closes the connection; the
		// session lives on for the client to reattach.
		c.srv.log.Warn("unknown request type; closing the connection", "op", int32(h.Type),
			"remote", c.nc.RemoteAddr(), "session", sessionHex(c.sessionID()))
		req.complete(-1, jute.Unimplemented, nil)
		c.out.finish(nil)
		return errFinishing
	case err != nil:
		// The frame was whole, so the stream is still in step: Apache
		// answers MarshallingError and goes on reading.
		c.srv.log.Warn("malformed request", "op", h.Type, "remote", c.nc.RemoteAddr(), "err", err)
		req.complete(c.srv.rep.LastZxid(), jute.MarshallingError, nil)
		return nil
	case h.Type == jute.OpSASL:
		if !c.waitWrites() {
			req.fail(net.ErrClosed)
			return net.ErrClosed
		}
		return c.saslStep(req, rec.(*jute.SASLRequest))
	}
	return c.dispatch(req)
}

// dispatch sends a write to the log, and answers a read now or queues it
// behind its session's writes in flight.
func (c *conn) dispatch(req *request) error {
	if c.ro.Load() && isWrite(req.op) {
		return c.readOnlyWrite(req)
	}
	if isWrite(req.op) {
		err := c.submit(req, txn.Request{SessionID: c.sessionID(), Cxid: req.xid, Op: req.op, Record: req.rec, Auth: c.authIDs()})
		if err == nil && req.op == jute.OpSync && !c.waitWrites() {
			// A sync completes after the writes applied with it, so the
			// session's later requests wait for its reply (FIFO).
			return net.ErrClosed
		}
		return err
	}
	// FIFO: after the session's earlier writes, and before its later
	// ones are applied here (Core.writeDone answers it at the right point).
	now, err := c.srv.core.read(req)
	c.queuedRead = !now && err == nil
	if now {
		// Answered here, on the reader, and never registered: nothing
		// else holds it, so the next request reuses it (a read answered
		// at once then costs no allocation of its own).
		c.spare = req
	}
	return err
}

// submit sends a write (or sync, or a handshake's session txn) to the
// replica. It ends in onApply; if it cannot be submitted, it fails here
// and the connection closes.
func (c *conn) submit(req *request, t txn.Request) error { return c.srv.core.submit(req, t) }

// waitWrites blocks until the session's earlier writes are answered
// (DESIGN decision 6). It reports false if the connection closed first.
func (c *conn) waitWrites() bool {
	ch := c.srv.reqs.drained(c.id)
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-c.done:
		return false
	}
}

// acquire takes a token of the global outstanding limit, blocking (and so
// not reading this socket) while the server is at the limit. The request
// read next holds it (request.token) and gives it back when it ends.
func (c *conn) acquire() bool {
	// A closed connection stops here: its reader must not go on through
	// requests still buffered (a slow consumer's thousands of reads).
	select {
	case <-c.done:
		c.dropToken()
		return false
	default:
	}
	if c.token {
		c.token = false
		return true
	}
	if c.srv.tryToken() {
		return true
	}
	c.flush(false) // held replies go out while the reader waits
	c.touched = 0  // the session is touched when the wait is over
	return c.srv.waitToken(c.done)
}

// takeToken takes a token of the global outstanding limit, waiting while
// the server is at the limit (which the throttle metric counts) until
// stop closes. It reports whether it got one.
func (s *Server) takeToken(stop <-chan struct{}) bool {
	return s.tryToken() || s.waitToken(stop)
}

// tryToken takes a token if one is free, without waiting.
func (s *Server) tryToken() bool {
	select {
	case s.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

// waitToken is takeToken's wait, counted by the throttle metric.
func (s *Server) waitToken(stop <-chan struct{}) bool {
	s.metrics.throttleWaits.Inc()
	select {
	case s.tokens <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

// dropToken gives back the token the poller took for the reader, if the
// reader has not used it.
func (c *conn) dropToken() {
	if c.token {
		c.token = false
		<-c.srv.tokens
	}
}

func (c *conn) authIDs() []jute.Id {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return c.auth
}

// authenticate handles an auth packet (xid -4). A failure is answered with
// AuthFailed and the connection is closed, as Apache does.
func (c *conn) authenticate(req *request, body []byte) error {
	var pkt jute.AuthPacket
	if err := jute.Unmarshal(body, &pkt); err != nil {
		err = fmt.Errorf("malformed auth packet: %w", err)
		req.fail(err)
		return err
	}
	req.start = time.Time{} // auth packets are not in the latency stats
	ids, err := acl.Authenticate(pkt.Scheme, pkt.Auth, c.srv.cfg.SuperDigest)
	if err != nil {
		c.srv.log.Warn("authentication failed", "scheme", pkt.Scheme, "remote", c.nc.RemoteAddr())
		hdr := jute.ReplyHeader{Xid: req.xid, Err: jute.AuthFailed}
		req.completeFrame(encodeFrame(&hdr, nil), 0, true)
		return errFinishing
	}
	c.addAuth(ids)
	req.complete(0, jute.OK, nil)
	return nil
}

// addAuth adds identities the connection does not have yet: Apache keeps
// them as a set, so authenticating twice changes nothing.
func (c *conn) addAuth(ids []jute.Id) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	var added []jute.Id
	for _, id := range ids {
		if !slices.Contains(c.auth, id) && !slices.Contains(added, id) {
			added = append(added, id)
		}
	}
	if len(added) > 0 {
		// Copy on write: prep and reads may still hold the old slice.
		c.auth = append(slices.Clip(c.auth), added...)
	}
}

func sessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }
