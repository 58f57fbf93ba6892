package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/zoohq/zoo/internal/bufpool"
	"github.com/zoohq/zoo/internal/rawsock"
)

const (
	readBufSize  = 64 << 10
	writeBufSize = 64 << 10

	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// Why a link's writer stopped, besides an I/O error.
var (
	errReaderDone  = errors.New("peer: reader stopped")
	errReplaced    = errors.New("peer: replaced by a new connection from the peer")
	errAddrChanged = errors.New("peer: peer address changed")
	errRemoved     = errors.New("peer: removed from the membership")
)

// acceptLoop accepts connections until the listener closes. A failing
// Accept (out of file descriptors, say) is retried with a growing delay
// rather than spinning.
func (t *Transport) acceptLoop() {
	var delay time.Duration
	for {
		c, err := t.cfg.Listener.Accept()
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				t.log.Error("peer: listener closed under the transport", "err", err)
				return
			}
			delay = min(max(2*delay, acceptBackoffMin), acceptBackoffMax)
			t.log.Warn("peer: accept failed", "err", err, "retry", delay)
			if !sleep(t.ctx, delay, nil) {
				return
			}
			continue
		}
		delay = 0
		select {
		case t.handshakes <- struct{}{}:
		default:
			t.log.Warn("peer: too many connections in handshake, closing", "remote", c.RemoteAddr())
			c.Close()
			continue
		}
		if !t.goFunc(func() { t.serveConn(c) }) {
			<-t.handshakes
			c.Close()
			return
		}
	}
}

// serveConn runs the acceptor's side of the handshake, then hands a link to
// its peer goroutine or serves a stream.
func (t *Transport) serveConn(c net.Conn) {
	if !t.trackConn(c) {
		<-t.handshakes
		c.Close()
		return
	}
	h, ok := t.acceptHandshake(c)
	<-t.handshakes
	if ok && h.typ == connStream {
		t.serveStream(h.from, c)
	}
	t.untrackConn(c)
	if ok && h.typ == connLink {
		t.handoff(h.from, c)
		return
	}
	c.Close()
}

func (t *Transport) acceptHandshake(c net.Conn) (hello, bool) {
	remote := c.RemoteAddr()
	if err := c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)); err != nil {
		return hello{}, false
	}
	h, err := readHello(c)
	if err != nil {
		t.log.Warn("peer: bad handshake, closing connection", "remote", remote, "err", err)
		return hello{}, false
	}
	st := t.checkHello(h)
	if st == ackOK || st == ackUnknownPeer {
		t.heard(h.from, h.flags&flagEstablished != 0)
	}
	if _, err := c.Write([]byte{byte(st), t.flags()}); err != nil {
		t.log.Warn("peer: handshake reply failed", "remote", remote, "from", h.from, "err", err)
		return hello{}, false
	}
	if st == ackAuthRequired {
		t.log.Error("peer: refused a quorum peer that does not authenticate with SASL (quorum.auth.serverRequireSasl=true)",
			"remote", remote, "from", h.from)
		return hello{}, false
	}
	if st == ackWrongDirection {
		// A smaller peer's nudge (awaitLoop): we dial it ourselves.
		t.log.Debug("peer: refused a link dialed the wrong way; dialing it ourselves",
			"remote", remote, "from", h.from, "reason", st)
		return hello{}, false
	}
	if st != ackOK {
		t.log.Warn("peer: rejected connection; check the server list of both servers",
			"remote", remote, "from", h.from, "to", h.to, "type", h.typ, "reason", st)
		return hello{}, false
	}
	if t.cfg.Auth != nil && !t.authAccept(c, h) {
		return hello{}, false
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return hello{}, false
	}
	return h, true
}

func (t *Transport) checkHello(h hello) ackStatus {
	switch {
	case h.version != protoVersion:
		return ackBadVersion
	case h.typ != connLink && h.typ != connStream:
		return ackBadType
	case h.to != t.cfg.ID:
		return ackWrongID
	case h.from == 0 || h.from == t.cfg.ID:
		return ackUnknownPeer
	case h.typ == connStream && t.cfg.OnStream == nil:
		return ackNoStreams
	case t.cfg.Auth != nil && t.cfg.Auth.ServerRequired && h.flags&flagSASL == 0:
		return ackAuthRequired
	}
	t.mu.RLock()
	p, known := t.peers[h.from]
	t.mu.RUnlock()
	switch {
	case !known && !t.admits(h.from):
		// A stream too: a raft snapshot from a server we would not
		// take messages from must not reach raft either.
		return ackUnknownPeer
	case h.typ == connStream:
		return ackOK
	case known && p.dials:
		// We dial it ourselves: a second link would race ours. A
		// server we do not know, smaller or not, we never dial, so we
		// may take its link whichever way it points.
		return ackWrongDirection
	}
	return ackOK
}

// admits asks Config.Admit about a server not among the peers, unless
// maxAdmitted of them are linked already.
func (t *Transport) admits(id uint64) bool {
	if t.cfg.Admit == nil {
		return false
	}
	t.mu.RLock()
	full := t.admittedLocked() >= maxAdmitted
	t.mu.RUnlock()
	if full {
		t.log.Warn("peer: too many servers outside the membership linked; refusing another", "from", id, "max", maxAdmitted)
		return false
	}
	return t.cfg.Admit(id)
}

// maxAdmitted bounds the admitted peers, each a goroutine and a queue:
// an ensemble has a few servers outside a member's list at a time (the
// leader, members added since its log ends), not hundreds.
const maxAdmitted = 32

// admittedLocked counts the admitted peers; t.mu must be held.
func (t *Transport) admittedLocked() int {
	n := 0
	for _, p := range t.peers {
		if p.admitted {
			n++
		}
	}
	return n
}

// handoff gives an accepted link to its peer's goroutine, replacing any
// link not yet picked up. The peer may have been removed meanwhile. A
// link from a server not among the peers that Config.Admit lets in makes
// it an admitted peer, whose goroutine starts with that link.
func (t *Transport) handoff(from uint64, c net.Conn) {
	t.mu.RLock()
	p := t.peers[from]
	t.mu.RUnlock()
	if p == nil && t.admit(from, c) {
		return
	}
	if p == nil {
		c.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		c.Close()
		return
	}
	select {
	case old := <-p.incoming:
		old.Close()
	default:
	}
	p.incoming <- c
}

// admit makes from, a server not among the peers, an admitted peer with
// c as its link, if Config.Admit lets it in. It reports whether it took
// c; false leaves c to the caller (from may have become a peer meanwhile).
func (t *Transport) admit(from uint64, c net.Conn) bool {
	if !t.admits(from) { // before t.mu: Admit is the caller's code
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.peers[from] != nil || t.admittedLocked() >= maxAdmitted {
		return false
	}
	p := t.newPeer(from, "")
	p.admitted = true
	p.dials = false // no address; it dialed us, whichever id is larger
	p.incoming <- c // a new peer's empty channel: never blocks
	t.peers[from] = p
	t.log.Info("peer: admitted a server that is not in the membership", "peer", from, "remote", c.RemoteAddr())
	t.startPeerLocked(p)
	return true
}

// runPeer owns p's link until p is removed or the transport closes.
func (t *Transport) runPeer(p *peer) {
	defer func() {
		p.mu.Lock()
		p.gone = true
		select {
		case c := <-p.incoming:
			c.Close()
		default:
		}
		p.mu.Unlock()
	}()
	if p.dials {
		t.dialLoop(p)
		return
	}
	t.awaitLoop(p)
}

// awaitLoop runs the links a larger peer opens. When none has come for a
// while it dials the peer itself (nudge): the peer may be a server whose
// log predates the reconfig that added this one, which does not know our
// address and admits our link (Config.Admit); a peer that knows us
// refuses it (wrong direction) and goes on dialing us itself. An
// admitted peer ends with its link, unless a membership change named it
// meanwhile.
func (t *Transport) awaitLoop(p *peer) {
	b := backoff{min: firstNudge(t.cfg), max: nudgeBackoffs * t.cfg.Backoff.Max}
	for {
		wait := time.NewTimer(b.next())
		var c net.Conn
		select {
		case c = <-p.incoming:
		case <-wait.C:
			c = t.nudge(p)
		case <-p.ctx.Done():
			wait.Stop()
			return
		}
		wait.Stop()
		if c != nil {
			b.reset()
		}
		for c != nil {
			c = t.runLink(p, c)
		}
		if t.forgetAdmitted(p) {
			return
		}
	}
}

// nudgeBackoffs: a smaller peer that was not dialed in nudges ever more
// slowly, up to this many of the dialers' longest backoff apart.
const nudgeBackoffs = 4

// firstNudge bounds the wait for the first nudge: two of the dialers'
// shortest backoffs, time for a larger peer that knows us to dial in. A
// nudge that comes too soon costs one refused handshake; one that comes
// late leaves a server rebuilt at a new address, whose peers dial its old
// one, unheard by its join survey (SurveyTime).
func firstNudge(cfg Config) time.Duration { return 2 * cfg.Backoff.Min }

// nudge dials a larger peer that has not dialed in, and returns the link
// or nil.
func (t *Transport) nudge(p *peer) net.Conn {
	addr := t.peerAddr(p)
	if addr == "" {
		return nil // an admitted peer, or one only ever dialing in
	}
	c, err := t.dialConn(p.ctx, p.id, addr, connLink)
	if err != nil {
		t.log.Debug("peer: nudge refused", "peer", p.id, "addr", addr, "err", err)
		return nil
	}
	t.log.Info("peer: a larger peer that did not dial in took our link", "peer", p.id, "addr", addr)
	return c
}

// forgetAdmitted drops p, whose link ended, if it is still an admitted
// peer, and reports whether it did.
func (t *Transport) forgetAdmitted(p *peer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !p.admitted {
		return false
	}
	if t.peers[p.id] == p {
		delete(t.peers, p.id)
	}
	p.cancel()
	t.log.Info("peer: admitted server's link ended; forgetting it", "peer", p.id)
	return true
}

// dialLoop keeps a link to a smaller-id peer up, redialing with backoff.
func (t *Transport) dialLoop(p *peer) {
	b := backoff{min: t.cfg.Backoff.Min, max: t.cfg.Backoff.Max}
	var dl dialLog
	for {
		select {
		case <-p.kick: // the address read below is the newest
		default:
		}
		addr := t.peerAddr(p)
		c, err := t.dialConn(p.ctx, p.id, addr, connLink)
		switch {
		case err == nil:
			dl = dialLog{}
			b.reset()
			p.dialed = addr
			t.runLink(p, c)
		case p.ctx.Err() != nil:
			return
		default:
			if level, ok := dl.failed(time.Now(), err); ok {
				t.log.Log(context.Background(), level, "peer: cannot connect", "peer", p.id, "addr", addr,
					"err", err, "failing_for", dl.failingFor().Round(time.Second))
			}
		}
		if !sleep(p.ctx, b.next(), p.kick) {
			return
		}
	}
}

// dialLogInterval is how often a peer that stays unreachable is logged
// again.
const dialLogInterval = time.Minute

// dialLog decides which failed dials of one peer are logged: the first of
// a run, then one a minute while it lasts (rate-limited, so a member that
// is down for a day does not flood the log, yet stays visible). A refusal
// by the peer or a host name that does not resolve is a misconfiguration
// and is logged as a warning; a peer that is merely down, as info.
type dialLog struct {
	since, last time.Time
}

func (d *dialLog) failed(now time.Time, err error) (slog.Level, bool) {
	if d.since.IsZero() {
		d.since = now
	}
	if !d.last.IsZero() && now.Sub(d.last) < dialLogInterval {
		return 0, false
	}
	d.last = now
	var dnsErr *net.DNSError
	if errors.Is(err, ErrRejected) || errors.Is(err, ErrAuth) || errors.As(err, &dnsErr) {
		return slog.LevelWarn, true
	}
	return slog.LevelInfo, true
}

func (d *dialLog) failingFor() time.Duration { return d.last.Sub(d.since) }

// dialConn dials addr and runs the dialer's side of the handshake.
func (t *Transport) dialConn(ctx context.Context, to uint64, addr string, typ connType) (net.Conn, error) {
	c, err := t.cfg.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("peer: dial %d at %s: %w", to, addr, err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	err = t.clientHandshake(c, to, typ)
	if !stop() {
		c.Close()
		return nil, ctx.Err()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("peer: handshake with %d at %s: %w", to, addr, err)
	}
	return c, nil
}

func (t *Transport) clientHandshake(c net.Conn, to uint64, typ connType) error {
	if err := c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout)); err != nil {
		return err
	}
	h := hello{version: protoVersion, typ: typ, from: t.cfg.ID, to: to, flags: t.flags()}
	if _, err := c.Write(h.append(make([]byte, 0, helloLen))); err != nil {
		return err
	}
	var ack [ackLen]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return err
	}
	st := ackStatus(ack[0])
	switch st {
	case ackOK:
		t.heard(to, ack[1]&flagEstablished != 0)
	case ackUnknownPeer:
		// A server that does not know us runs with a membership we
		// are not in: an ensemble we may only join.
		t.heard(to, true)
	case ackWrongDirection:
		// A larger peer that refused our nudge knows us and runs; if
		// it has not dialed us, it may know us at an address we no
		// longer have (we were rebuilt elsewhere): what it runs
		// still tells a joining server whether to wait to be added.
		t.heard(to, ack[1]&flagEstablished != 0)
	}
	if st != ackOK {
		return fmt.Errorf("%w: %s", ErrRejected, st)
	}
	if t.cfg.Auth != nil {
		if err := t.authDial(c, to, ack[1]); err != nil {
			return err
		}
	}
	return c.SetDeadline(time.Time{})
}

// runLink runs one link until it fails, p goes away, or the peer dials in
// again; in the last case it returns the new connection. The reader is
// stopped before runLink returns, so one peer's messages are never handled
// by two goroutines at once.
func (t *Transport) runLink(p *peer, c net.Conn) (next net.Conn) {
	rdone := make(chan struct{})
	var rerr error
	if !t.goFunc(func() { defer close(rdone); rerr = t.readLoop(p, c) }) {
		c.Close()
		return nil
	}
	p.connected.Store(true)
	t.log.Info("peer: link up", "peer", p.id, "remote", c.RemoteAddr())
	next, werr := t.writeLoop(p, c, rdone)
	p.connected.Store(false)
	if werr == errRemoved {
		t.lingerClose(c, rdone)
	}
	c.Close()
	<-rdone
	if werr == errReaderDone {
		werr = rerr
	}
	t.logLinkDown(p.id, werr)
	return next
}

// lingerClose ends a link to a removed peer after its last frames:
// it closes the write half and waits, at most leaveGrace, for the peer to
// close its own. Closing outright, with the peer's heartbeats unread,
// makes the kernel answer with a reset, and a reset discards what the
// peer has not read yet: the frames just flushed, which tell it that it
// was removed.
func (t *Transport) lingerClose(c net.Conn, rdone <-chan struct{}) {
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	tm := time.NewTimer(leaveGrace)
	defer tm.Stop()
	select {
	case <-rdone:
	case <-tm.C:
	case <-t.ctx.Done():
	}
}

func (t *Transport) logLinkDown(id uint64, err error) {
	var ne net.Error
	level := slog.LevelInfo
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, net.ErrClosed):
		level = slog.LevelDebug
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrFrameTooLarge),
		errors.As(err, &ne) && ne.Timeout():
		level = slog.LevelWarn
	}
	t.log.Log(context.Background(), level, "peer: link down", "peer", id, "err", err)
}

// writeLoop sends p's queued messages, and heartbeats when there are none,
// until something ends the link.
func (t *Transport) writeLoop(p *peer, c net.Conn, rdone <-chan struct{}) (net.Conn, error) {
	bw := bufio.NewWriterSize(timedConn{Conn: c, write: t.cfg.WriteTimeout}, writeBufSize)
	hb := time.NewTimer(t.cfg.HeartbeatInterval)
	defer hb.Stop()
	var kick <-chan struct{}
	if p.dials {
		kick = p.kick
	}
	for {
		select {
		case m := <-p.queue:
			if err := t.writeBatch(bw, p.queue, m); err != nil {
				return nil, err
			}
		case <-hb.C:
			if err := t.writeBatch(bw, nil, Message{Kind: kindHeartbeat}); err != nil {
				return nil, err
			}
		case <-rdone:
			return nil, errReaderDone
		case nc := <-p.incoming:
			return nc, errReplaced
		case <-kick:
			// SetPeers sets the address, then kicks: a dialer that read
			// the address in between already dialed the new one.
			if t.peerAddr(p) != p.dialed {
				return nil, errAddrChanged
			}
		case <-p.leaving:
			if err := t.flushQueue(bw, p.queue); err != nil {
				return nil, err
			}
			p.cancel() // removed: no redial
			return nil, errRemoved
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
		hb.Reset(t.cfg.HeartbeatInterval)
	}
}

// flushQueue writes whatever is queued, without waiting for more.
func (t *Transport) flushQueue(bw *bufio.Writer, q <-chan Message) error {
	for {
		select {
		case m := <-q:
			if err := t.writeBatch(bw, q, m); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// writeBatch writes m and whatever else is queued (at most QueueSize
// messages, so a busy queue still gets flushed), then flushes: one syscall
// for many small raft messages.
func (t *Transport) writeBatch(bw *bufio.Writer, q <-chan Message, m Message) error {
	for i := 1; ; i++ {
		err := writeFrame(bw, m.Kind, m.Data)
		bufpool.Put(m.Buf) // written to the socket or copied to bw: not read again
		if err != nil {
			return err
		}
		if i >= t.cfg.QueueSize {
			break
		}
		var more bool
		select {
		case m, more = <-q:
		default:
		}
		if !more {
			break
		}
	}
	return bw.Flush()
}

// timedConn renews a deadline before every read and every write of at most
// ioChunk bytes. The timeouts thus mean "no progress for this long", not
// "this frame took too long": a peer that stops reading is cut off, but a
// 64 MiB frame on a slow, live link is not.
//
// Its reads and writes of a plain TCP socket are raw system calls
// (internal/rawsock): a follower under load reads a frame or more per
// call, and each call through the net package risked a thread hand-off.
type timedConn struct {
	net.Conn
	read, write time.Duration // 0: no deadline
	r           io.Reader     // Conn's reader (rawsock.Reader); nil: Conn
}

// timedReader is a timedConn that reads through rawsock.
func timedReader(c net.Conn, read time.Duration) timedConn {
	return timedConn{Conn: c, read: read, r: rawsock.Reader(c)}
}

const ioChunk = 256 << 10

func (c timedConn) Read(p []byte) (int, error) {
	if c.read > 0 {
		if err := c.SetReadDeadline(time.Now().Add(c.read)); err != nil {
			return 0, err
		}
	}
	if c.r == nil {
		return c.Conn.Read(p)
	}
	return c.r.Read(p)
}

func (c timedConn) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		chunk := p[:min(len(p), ioChunk)]
		if c.write > 0 {
			if err := c.SetWriteDeadline(time.Now().Add(c.write)); err != nil {
				return n, err
			}
		}
		m, err := rawsock.Write(c.Conn, chunk)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// readLoop delivers p's messages until the connection fails. The peer's
// heartbeats keep the idle deadline from expiring on a quiet, healthy link.
func (t *Transport) readLoop(p *peer, c net.Conn) error {
	tc := timedReader(c, t.cfg.IdleTimeout)
	fr := newFrameReader(bufio.NewReaderSize(tc, readBufSize), t.cfg.MaxFrame)
	for {
		kind, data, buf, err := fr.next(nil)
		if err != nil {
			return err
		}
		if kind != kindHeartbeat {
			t.cfg.Handler(p.id, Message{Kind: kind, Data: data, Buf: buf})
		}
	}
}

// backoff is an exponential delay with jitter, so that servers restarted
// together do not redial in lockstep.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) reset() { b.cur = 0 }

// next returns a delay in [cur/2, cur) and doubles cur up to max.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	}
	d := b.cur/2 + rand.N(b.cur/2+1)
	b.cur = min(2*b.cur, b.max)
	return d
}
