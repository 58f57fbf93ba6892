package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of the transport. Test for them with errors.Is.
var (
	// ErrClosed is returned by SendStream once the transport is closed.
	ErrClosed = errors.New("peer: transport closed")
	// ErrUnknownPeer is returned by SendStream for an id not among the peers.
	ErrUnknownPeer = errors.New("peer: unknown peer")
	// ErrRejected means the remote server refused the handshake; the error
	// text says why (wrong id, unknown peer, streams not accepted, ...).
	ErrRejected = errors.New("peer: handshake rejected")
	// ErrRemote wraps the error text of a receiver's OnStream.
	ErrRemote = errors.New("peer: remote stream handler failed")
	// ErrCorrupt marks a frame that failed its CRC or has a zero length.
	ErrCorrupt = errors.New("peer: corrupt frame")
	// ErrFrameTooLarge marks a frame longer than MaxFrame.
	ErrFrameTooLarge = errors.New("peer: frame too large")
	// ErrBadHandshake marks a connection that did not open with a hello.
	ErrBadHandshake = errors.New("peer: bad handshake")
)

// Message is what a link carries: a kind the replica layer chooses (1-255;
// 0 is the transport's heartbeat) and an opaque payload.
type Message struct {
	Kind uint8
	Data []byte
	// Buf, if not nil, is the bufpool buffer Data is in. A message sent
	// with one gives it to the transport, which puts it back once Data is
	// written: the sender must not touch Data after Send. A message
	// received with one lets the handler put it back once nothing refers
	// to Data; a handler that keeps Data must not.
	Buf *[]byte
}

// Config assembles a Transport. Zero fields take the defaults named below.
type Config struct {
	// ID is this server's id (server.N of zoo.cfg); nonzero.
	ID uint64
	// Listener is the bound quorum-port listener. The Transport owns it and
	// closes it on Close.
	Listener net.Listener
	// Peers maps the other servers' ids to their quorum addresses
	// ("host:port"). An entry for ID itself is ignored.
	Peers map[uint64]string
	// Handler receives every message, from that peer's reader goroutine,
	// in arrival order per peer. It must not block long: the peer's link
	// reads nothing meanwhile. It must not call Close. m.Data is the
	// handler's to keep (see Message.Buf).
	Handler func(from uint64, m Message)
	// OnStream receives a stream opened by SendStream: the header and a
	// reader of the body, which returns io.EOF at its end and an error if
	// the stream broke. Its error is sent back to the sender as text. It
	// runs on its own goroutine per stream. Nil refuses streams.
	OnStream func(from uint64, header []byte, r io.Reader) error
	// Logger gets connection events and failures; nil discards them.
	Logger *slog.Logger
	// QueueSize bounds each peer's outbound queue, in messages (4096).
	QueueSize int
	// MaxFrame is the largest payload sent or accepted (64 MiB). A larger
	// incoming frame closes the connection; Send refuses a larger message.
	MaxFrame int
	// Dial opens a connection; nil uses a net.Dialer with a 5s timeout.
	// Tests wrap the returned conn to inject faults.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Backoff bounds the dialer's reconnect delay, which doubles from Min
	// to Max with jitter (50ms, 2s).
	Backoff struct{ Min, Max time.Duration }
	// HeartbeatInterval: a link on which nothing was sent for this long gets
	// a heartbeat frame (1s).
	HeartbeatInterval time.Duration
	// IdleTimeout: a link on which nothing arrived for this long is closed
	// (5s). It must exceed HeartbeatInterval comfortably.
	IdleTimeout time.Duration
	// WriteTimeout: a write that makes no progress for this long fails and
	// closes the connection, so a peer that stopped reading is cut off
	// rather than blocking the writer forever (10s).
	WriteTimeout time.Duration
	// HandshakeTimeout bounds the hello and its answer (5s).
	HandshakeTimeout time.Duration
	// StreamTimeout: a stream receiver that gets nothing for this long
	// gives up on the stream (30s).
	StreamTimeout time.Duration
	// Established tells the handshakes whether this server is a member of
	// a running ensemble (see Survey); nil is never.
	Established func() bool
	// Auth, if not nil, authenticates every connection with SASL (see
	// auth.go).
	Auth *Auth
	// Admit, if not nil, is asked about a link from a server that is not
	// among the peers, after the hello (and before quorum SASL, which
	// still runs); true lets it in. An admitted server is a peer for as
	// long as its link lasts: Send reaches it over that link, the only
	// way back to a server whose address this one does not know (doc.go,
	// "Who may connect"). Nil refuses every server not among the peers.
	// It is called from handshake goroutines and must not block.
	Admit func(from uint64) bool
}

// Survey reports how many peers this transport has completed a handshake
// with, or been refused by (as unknown, or by a larger peer that dials
// this server itself), and whether any of them runs an established
// ensemble (or does not know this server, which means the same). A fresh
// server uses it to decide between starting an ensemble and joining one;
// SurveyTime says how long to listen.
func (t *Transport) Survey() (heard int, established bool) {
	t.surveyMu.Lock()
	defer t.surveyMu.Unlock()
	for _, e := range t.survey {
		heard++
		established = established || e
	}
	return heard, established
}

// SurveyTime is how long after Start every live peer has been heard
// from in a Survey, save for the time a handshake takes: a smaller peer
// dials in at once, and this server nudges a larger one that has not
// dialed in (it may know this server at an address it no longer has)
// within firstNudge.
func (t *Transport) SurveyTime() time.Duration { return firstNudge(t.cfg) }

// heard records what a handshake told of a peer.
func (t *Transport) heard(id uint64, established bool) {
	t.surveyMu.Lock()
	defer t.surveyMu.Unlock()
	t.survey[id] = t.survey[id] || established
}

// flags are this server's handshake flags.
func (t *Transport) flags() uint8 {
	var f uint8
	if t.cfg.Established != nil && t.cfg.Established() {
		f |= flagEstablished
	}
	if t.cfg.Auth != nil {
		f |= flagSASL
	}
	return f
}

const (
	defaultQueueSize         = 4096
	defaultMaxFrame          = 64 << 20
	defaultBackoffMin        = 50 * time.Millisecond
	defaultBackoffMax        = 2 * time.Second
	defaultHeartbeatInterval = time.Second
	defaultIdleTimeout       = 5 * time.Second
	defaultWriteTimeout      = 10 * time.Second
	defaultHandshakeTimeout  = 5 * time.Second
	defaultStreamTimeout     = 30 * time.Second
	defaultDialTimeout       = 5 * time.Second

	// maxHandshakes bounds connections accepted but not yet identified, so
	// a flood of connections cannot pile up goroutines.
	maxHandshakes = 64
)

func (c *Config) setDefaults() {
	setDefault(&c.QueueSize, defaultQueueSize)
	setDefault(&c.MaxFrame, defaultMaxFrame)
	setDefault(&c.Backoff.Min, defaultBackoffMin)
	setDefault(&c.Backoff.Max, defaultBackoffMax)
	setDefault(&c.HeartbeatInterval, defaultHeartbeatInterval)
	setDefault(&c.IdleTimeout, defaultIdleTimeout)
	setDefault(&c.WriteTimeout, defaultWriteTimeout)
	setDefault(&c.HandshakeTimeout, defaultHandshakeTimeout)
	setDefault(&c.StreamTimeout, defaultStreamTimeout)
	if c.Backoff.Max < c.Backoff.Min {
		c.Backoff.Max = c.Backoff.Min
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Dial == nil {
		d := &net.Dialer{Timeout: defaultDialTimeout}
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}
	}
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// validate reports every problem at once.
func (c *Config) validate() error {
	var errs []error
	if c.ID == 0 {
		errs = append(errs, errors.New("peer: config: ID must be nonzero"))
	}
	if c.Listener == nil {
		errs = append(errs, errors.New("peer: config: Listener is required"))
	}
	if c.Handler == nil {
		errs = append(errs, errors.New("peer: config: Handler is required"))
	}
	if _, ok := c.Peers[0]; ok {
		errs = append(errs, errors.New("peer: config: peer id 0 is invalid"))
	}
	if c.Auth != nil && (c.Auth.Learner == nil || c.Auth.Server == nil) {
		errs = append(errs, errors.New("peer: config: Auth needs both Learner and Server"))
	}
	if c.IdleTimeout <= c.HeartbeatInterval {
		errs = append(errs, fmt.Errorf("peer: config: IdleTimeout %v must exceed HeartbeatInterval %v",
			c.IdleTimeout, c.HeartbeatInterval))
	}
	return errors.Join(errs...)
}

// Transport connects this server to its peers. It is safe for concurrent use.
type Transport struct {
	cfg Config
	log *slog.Logger

	// ctx is cancelled by Close; every peer's context derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	handshakes chan struct{} // semaphore of connections in handshake
	wg         sync.WaitGroup
	closeOnce  sync.Once
	closeErr   error

	mu      sync.RWMutex
	closed  bool
	started bool
	peers   map[uint64]*peer
	// conns holds accepted connections that no peer goroutine owns: those
	// in handshake and stream connections. Close closes them.
	conns map[net.Conn]struct{}

	surveyMu sync.Mutex
	survey   map[uint64]bool // peers heard from: whether established
}

// peer is the state of one remote server. Its goroutine (runPeer) owns the
// link; Send only touches queue.
type peer struct {
	id     uint64
	dials  bool   // we dial this peer: our id is the larger
	addr   string // guarded by Transport.mu
	queue  chan Message
	ctx    context.Context // cancelled when the peer is removed or on Close
	cancel context.CancelFunc
	// leaving is closed when the peer is removed: the link sends what is
	// queued, then ends (within leaveGrace).
	leaving chan struct{}
	// kick wakes the dialer when the address changed, so it redials the new
	// address now instead of after its backoff or the old link's death.
	kick chan struct{}
	// dialed is the address the dialer's current link went to. Only the
	// peer goroutine touches it: a kick that comes after the dialer had
	// already read the new address ends no link to that address.
	dialed string

	// incoming hands an accepted link to the peer goroutine. Capacity 1,
	// filled only under mu after draining it, so handing off never blocks.
	mu       sync.Mutex
	incoming chan net.Conn
	gone     bool // guarded by mu: the goroutine exited; refuse handoffs

	connected atomic.Bool
	dropping  atomic.Bool // the queue was full at the last Send

	// admitted (guarded by Transport.mu) marks a peer let in by
	// Config.Admit rather than named by Config.Peers or SetPeers: it has
	// no address, and it is forgotten when its link ends, unless a
	// membership change names it meanwhile.
	admitted bool
}

// New checks cfg and builds a Transport. Nothing runs until Start.
func New(cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{
		cfg:        cfg,
		log:        cfg.Logger.With("server", cfg.ID),
		ctx:        ctx,
		cancel:     cancel,
		handshakes: make(chan struct{}, maxHandshakes),
		peers:      make(map[uint64]*peer),
		conns:      make(map[net.Conn]struct{}),
		survey:     make(map[uint64]bool),
	}
	for id, addr := range cfg.Peers {
		if id != cfg.ID {
			t.peers[id] = t.newPeer(id, addr)
		}
	}
	t.cfg.Peers = nil // SetPeers replaces it; do not keep the caller's map
	return t, nil
}

func (t *Transport) newPeer(id uint64, addr string) *peer {
	ctx, cancel := context.WithCancel(t.ctx)
	return &peer{
		id:       id,
		dials:    t.cfg.ID > id,
		addr:     addr,
		queue:    make(chan Message, t.cfg.QueueSize),
		ctx:      ctx,
		cancel:   cancel,
		kick:     make(chan struct{}, 1),
		incoming: make(chan net.Conn, 1),
		leaving:  make(chan struct{}),
	}
}

// Start starts the accept loop and one goroutine per peer. Later calls do
// nothing, and so does a call after Close.
func (t *Transport) Start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.started {
		return
	}
	t.started = true
	t.goLocked(t.acceptLoop)
	for _, p := range t.peers {
		t.startPeerLocked(p)
	}
}

// goLocked runs f on a goroutine that Close waits for. t.mu must be held,
// which orders every wg.Add before Close's wg.Wait.
func (t *Transport) goLocked(f func()) bool {
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

func (t *Transport) goFunc(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.goLocked(f)
}

func (t *Transport) startPeerLocked(p *peer) {
	t.goLocked(func() { t.runPeer(p) })
}

// Send queues m for the peer and returns at once. It returns false, and m is
// dropped, if the peer is unknown, its queue is full, m is too large or of
// the reserved kind 0, or the transport is closed: raft should then report
// the peer unreachable. m.Data must not be modified after Send.
func (t *Transport) Send(to uint64, m Message) bool {
	if m.Kind == kindHeartbeat || len(m.Data) > t.cfg.MaxFrame {
		t.log.Error("peer: refusing to send message", "peer", to, "kind", m.Kind, "bytes", len(m.Data))
		return false
	}
	t.mu.RLock()
	p := t.peers[to]
	closed := t.closed
	t.mu.RUnlock()
	if closed || p == nil {
		return false
	}
	select {
	case p.queue <- m:
		if p.dropping.Load() {
			p.dropping.Store(false)
		}
		return true
	default:
		// Log the first drop only: a down peer would otherwise flood the log.
		if !p.dropping.Swap(true) {
			t.log.Warn("peer: send queue full, dropping messages", "peer", to, "queue", t.cfg.QueueSize)
		}
		return false
	}
}

// SetPeers replaces the peer set after a membership change: new peers are
// added (and connected), removed ones have their link closed and their queue
// dropped, and a changed address makes the dialer redial.
func (t *Transport) SetPeers(peers map[uint64]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for id, p := range t.peers {
		if _, ok := peers[id]; !ok && !p.admitted { // an admitted peer ends with its link
			// What was queued before the removal still goes out: raft's
			// last messages to a member being removed tell it that the
			// change removing it committed, and without them it never
			// applies that change (nor answers the client that asked
			// for it). The link ends once they are written, or after
			// leaveGrace if it cannot write them.
			close(p.leaving)
			time.AfterFunc(leaveGrace, p.cancel)
			delete(t.peers, id)
			t.log.Info("peer: removed", "peer", id)
		}
	}
	for id, addr := range peers {
		if id == 0 || id == t.cfg.ID {
			continue
		}
		if p, ok := t.peers[id]; ok && p.admitted {
			if !t.adoptLocked(p, addr) {
				continue
			}
		} else if ok {
			if p.addr != addr {
				t.log.Info("peer: address changed", "peer", id, "old", p.addr, "new", addr)
				p.addr = addr
				select {
				case p.kick <- struct{}{}:
				default:
				}
			}
			continue
		}
		p := t.newPeer(id, addr)
		t.peers[id] = p
		t.log.Info("peer: added", "peer", id, "addr", addr)
		if t.started {
			t.startPeerLocked(p)
		}
	}
}

// adoptLocked makes an admitted peer that a membership change now names
// a peer like any other, and reports whether the caller must replace it.
// A larger peer is adopted as it is: it dials us, as it does. A smaller
// one we would dial ourselves; it is dropped, link and all, so that a new
// peer that dials it takes its place, and the rule that the larger id
// dials holds again.
func (t *Transport) adoptLocked(p *peer, addr string) (replace bool) {
	if t.cfg.ID > p.id {
		p.cancel()
		delete(t.peers, p.id)
		t.log.Info("peer: admitted server joins the membership; dialing it from now on", "peer", p.id, "addr", addr)
		return true
	}
	p.admitted = false
	p.addr = addr
	t.log.Info("peer: admitted server joins the membership", "peer", p.id, "addr", addr)
	return false
}

// leaveGrace bounds how long a removed peer's link may take to send what
// was queued for it.
const leaveGrace = 2 * time.Second

// Connected reports whether a live link to id exists.
func (t *Transport) Connected(id uint64) bool {
	t.mu.RLock()
	p := t.peers[id]
	t.mu.RUnlock()
	return p != nil && p.connected.Load()
}

// Addr is the listener's address.
func (t *Transport) Addr() net.Addr { return t.cfg.Listener.Addr() }

// Close closes the listener and every connection and waits for every
// goroutine the transport started. It is idempotent; it returns the error of
// closing the listener. It must not be called from Handler or OnStream.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		conns := make([]net.Conn, 0, len(t.conns))
		for c := range t.conns {
			conns = append(conns, c)
		}
		t.mu.Unlock()

		t.cancel() // peers close their links and stop dialing
		if err := t.cfg.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			t.closeErr = fmt.Errorf("peer: close listener: %w", err)
		}
		for _, c := range conns {
			c.Close()
		}
		t.wg.Wait()
	})
	return t.closeErr
}

// peerAddr reads p's address, which SetPeers may change.
func (t *Transport) peerAddr(p *peer) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return p.addr
}

// trackConn records an accepted connection that Close must close. It
// refuses once the transport is closed.
func (t *Transport) trackConn(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *Transport) untrackConn(c net.Conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

// sleep waits d or until ctx is done, reporting whether to go on.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-wake:
		return true
	case <-ctx.Done():
		return false
	}
}
