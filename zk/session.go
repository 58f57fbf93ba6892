package zk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// State is the state of a Client's session.
type State int32

// Session states. A Client starts Connecting, and moves between
// Connected (or ConnectedReadOnly), Disconnected and Connecting as
// connections come and go; the session survives that. Expired, AuthFailed
// and Closed are final: the Client is dead and every call fails.
const (
	StateConnecting        State = iota + 1 // looking for a server
	StateConnected                          // connected, session established
	StateConnectedReadOnly                  // connected to a read-only server (WithReadOnly)
	StateDisconnected                       // a connection was lost; the client moves to Connecting at once
	StateExpired                            // the server expired the session (final)
	StateAuthFailed                         // a server rejected the credentials (final)
	StateClosed                             // Close was called (final)
)

var stateNames = map[State]string{
	StateConnecting: "Connecting", StateConnected: "Connected",
	StateConnectedReadOnly: "ConnectedReadOnly", StateDisconnected: "Disconnected",
	StateExpired: "Expired", StateAuthFailed: "AuthFailed", StateClosed: "Closed",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// setWatchesMax bounds the paths of one setWatches request, as the Java
// client does (ZOOKEEPER-706), well under the server's frame limit.
const setWatchesMax = 128 << 10

// Client is a ZooKeeper session. It is safe for concurrent use. Create it
// with Connect and end it with Close.
type Client struct {
	cfg     config
	hosts   HostProvider
	chroot  string
	log     *slog.Logger
	watches *registry
	disp    *dispatcher
	slots   chan struct{} // in-flight calls (WithMaxInFlight)
	wake    chan struct{} // capacity 1: the writer has calls to send

	life   context.Context // cancelled when the session goroutine must stop
	stop   context.CancelFunc
	runEnd chan struct{} // closed when the session goroutine has exited

	lastZxid atomic.Int64 // highest zxid seen in a reply

	mu        sync.Mutex
	state     State
	queue     []*call // accepted, not yet sent
	cur       *conn   // the live connection, nil between connections
	xid       int32
	sessionID int64
	password  []byte
	timeout   time.Duration // negotiated
	seenRW    bool          // a read-write server accepted the session
	auth      []authInfo    // replayed on every connection
	closing   bool
	endErr    error         // why the session ended; nil while alive
	done      chan struct{} // closed when the session ends
	connected chan struct{} // closed at the first Connected
	lastErr   error         // the last connection failure, for Connect's error
}

// Connect starts a session with the servers in connect, a comma-separated
// list of host:port pairs (port 2181 if omitted) optionally followed by a
// chroot path, as in "zk1:2181,zk2:2181,zk3:2181/app". Every path the
// client uses is then relative to the chroot.
//
// Connect tries the servers in random order until one establishes the
// session and accepts the credentials of WithAuth, and returns the Client.
// If ctx ends first, Connect gives up and returns ctx's error (with the
// last connection failure). The Client then keeps its session alive on
// its own, moving to another server when one fails, until Close or
// session expiry.
func Connect(ctx context.Context, connect string, opts ...Option) (*Client, error) {
	hosts, chroot, err := parseConnectString(connect)
	if err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.sessionTimeout < time.Millisecond || cfg.maxFrame <= 0 || cfg.dialer == nil {
		return nil, fmt.Errorf("zk: connect: %w: session timeout %v, frame limit %d, dialer set %v",
			ErrBadArguments, cfg.sessionTimeout, cfg.maxFrame, cfg.dialer != nil)
	}
	c := &Client{
		cfg:       cfg,
		hosts:     newHostProvider(cfg, hosts),
		chroot:    chroot,
		log:       cfg.logger,
		disp:      newDispatcher(),
		slots:     make(chan struct{}, cfg.maxInFlight),
		wake:      make(chan struct{}, 1),
		runEnd:    make(chan struct{}),
		sessionID: cfg.sessionID,
		password:  cfg.password,
		seenRW:    cfg.sessionID != 0,
		auth:      cfg.auth,
		done:      make(chan struct{}),
		connected: make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.password == nil {
		c.password = make([]byte, 16)
	}
	c.watches = newRegistry(c.clientPath)
	c.life, c.stop = context.WithCancel(context.Background())
	c.notify(StateConnecting)
	go c.run()

	select {
	case <-c.connected:
		return c, nil
	case <-c.done:
		err := c.Err()
		_ = c.Close()
		return nil, fmt.Errorf("zk: connect %s: %w", connect, err)
	case <-ctx.Done():
		c.mu.Lock()
		last := c.lastErr
		c.mu.Unlock()
		_ = c.Close()
		if last != nil {
			return nil, fmt.Errorf("zk: connect %s: %w (last error: %v)", connect, ctx.Err(), last)
		}
		return nil, fmt.Errorf("zk: connect %s: %w", connect, ctx.Err())
	}
}

// State returns the session's current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Done returns a channel that is closed when the session ends: it expired,
// its credentials were rejected, or Close was called. Err says which.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil while the session is alive, and after it has ended
// ErrSessionExpired, ErrAuthFailed or ErrClosed.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

// SessionID returns the session's id, 0 before it is established.
func (c *Client) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SessionPassword returns the session's password; with SessionID it lets
// another Client reattach to the session (WithSession).
func (c *Client) SessionPassword() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.password...)
}

// SessionTimeout returns the timeout the server granted (0 before the
// session is established).
func (c *Client) SessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// LastZxid returns the zxid of the last reply (the server's view of the
// data the client has seen); it is sent when the client reconnects.
func (c *Client) LastZxid() int64 { return c.lastZxid.Load() }

// Close ends the session. If the client is connected, the calls already
// made are sent and answered and the server is asked to close the session
// (so its ephemeral nodes go at once); calls still waiting for a
// connection fail. Then every goroutine of the Client stops, every open watch
// ends with ErrClosed and later calls fail with ErrClosed. Close may be
// called more than once, and from a callback.
//
// Close does not wait for callbacks: completions and state changes still
// queued are delivered on the callback goroutine, which then exits.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		<-c.runEnd
		return nil
	}
	c.closing = true
	var cs *call
	if c.endErr == nil && c.cur != nil && c.cur.ready {
		cs, _ = c.newCall(jute.OpCloseSession, "closeSession", "", nil, nil)
		cs.internal = true
		c.queue = append(c.queue, cs)
	}
	c.mu.Unlock()
	if cs != nil {
		c.kick()
		t := time.NewTimer(c.readTimeout())
		select {
		case <-cs.done:
		case <-t.C:
		case <-c.runEnd:
		}
		t.Stop()
	}
	c.stop()
	<-c.runEnd
	return nil
}

func (c *Client) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// readTimeout is two thirds of the session timeout.
func (c *Client) readTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.timeout
	if t == 0 {
		t = c.cfg.sessionTimeout
	}
	return t * 2 / 3
}

// kick wakes the writer.
func (c *Client) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// submit accepts a call: it takes an in-flight slot (waiting for one
// within ctx) and queues the call for the writer. It fails without
// queueing if the session has ended.
func (c *Client) submit(ctx context.Context, cl *call) error {
	if !cl.internal {
		select {
		case c.slots <- struct{}{}:
		default:
			select {
			case c.slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			case <-c.done:
				return c.Err()
			}
		}
	}
	c.mu.Lock()
	if err := c.deadErr(); err != nil {
		c.mu.Unlock()
		if !cl.internal {
			<-c.slots
		}
		return err
	}
	c.queue = append(c.queue, cl)
	if cl.accepted != nil {
		cl.accepted()
	}
	c.mu.Unlock()
	c.kick()
	return nil
}

// deadErr is the error for a call made now, nil if calls are accepted.
// Called with c.mu held.
func (c *Client) deadErr() error {
	switch {
	case c.endErr != nil:
		return c.endErr
	case c.closing:
		return ErrClosed
	}
	return nil
}

// do makes a synchronous call and waits for it within ctx. If ctx ends
// first, a call not yet sent is withdrawn; one already sent stays in
// flight (it may take effect), its result is dropped, and a watch it
// would have set is not registered.
func (c *Client) do(ctx context.Context, cl *call) error {
	// A context already done sends nothing: once queued, the writer may
	// send the call before the select below sees ctx end, and its result
	// would then be returned as if ctx had been live.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.submit(ctx, cl); err != nil {
		return err
	}
	select {
	case <-cl.done:
		return cl.err
	case <-ctx.Done():
		if cl.state.CompareAndSwap(callWaiting, callAbandoned) {
			c.withdraw(cl)
			return ctx.Err()
		}
		<-cl.done
		return cl.err
	}
}

// withdraw takes an abandoned call out of the queue if the writer has not
// taken it yet; otherwise the reader completes it when its reply comes.
func (c *Client) withdraw(cl *call) {
	c.mu.Lock()
	i := slices.Index(c.queue, cl)
	if i >= 0 {
		c.queue = slices.Delete(c.queue, i, i+1)
	}
	c.mu.Unlock()
	if i >= 0 && !cl.internal {
		<-c.slots
	}
}

// takeQueue hands the writer of cn the queued calls, with their xids, if
// cn is the live connection and ready for them.
func (c *Client) takeQueue(cn *conn) []*call {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != cn || !cn.ready || len(c.queue) == 0 {
		return nil
	}
	batch := c.queue
	c.queue = nil
	for _, cl := range batch {
		if cl.auth {
			continue // auth keeps its special xid
		}
		c.xid++
		if c.xid <= 0 { // skip the special negative xids after a wrap
			c.xid = 1
		}
		cl.setXid(c.xid)
	}
	return batch
}

// notify reports a state change: it records it and queues the state
// callback, in order with completions. Called with c.mu held or before
// the Client is shared.
func (c *Client) notify(s State) {
	if c.state == s {
		return
	}
	c.state = s
	if f := c.cfg.onState; f != nil {
		c.disp.push(func() { f(s) })
	}
}

// run is the session goroutine: it connects, serves a connection until it
// breaks, and reconnects, until the session ends.
func (c *Client) run() {
	defer close(c.runEnd)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !c.pause() {
			break
		}
		addr, err := c.hosts.Next(c.life)
		var cn *conn
		if err == nil {
			cn, err = c.dial(addr)
		}
		if err != nil {
			if c.life.Err() != nil {
				break
			}
			if errors.Is(err, ErrSessionExpired) {
				c.terminate(StateExpired, ErrSessionExpired)
				return
			}
			if errors.Is(err, ErrAuthFailed) || errors.Is(err, ErrSessionClosedRequireSASLAuth) {
				c.log.Warn("zk: SASL authentication failed", "server", addr, "err", err)
				c.terminate(StateAuthFailed, ErrAuthFailed)
				return
			}
			c.log.Info("zk: connection failed", "server", addr, "err", err)
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
			continue
		}
		if end := c.serve(cn); end != nil {
			return
		}
		if c.isClosing() {
			break
		}
	}
	c.terminate(StateClosed, ErrClosed)
}

// pause waits a random moment before the next attempt, so that the
// clients of a failed server do not all arrive at the next one together.
// The Java client waits up to a second; so do we, or less for short
// sessions, which need the time to reconnect.
func (c *Client) pause() bool {
	limit := min(time.Second, c.cfg.sessionTimeout/10)
	t := time.NewTimer(rand.N(limit + 1))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.life.Done():
		return false
	}
}

// dial connects to addr and performs the handshake: a ConnectRequest with
// the session id, password and last zxid, answered by the server's
// ConnectResponse. It fails with ErrSessionExpired if the server says the
// session is gone.
func (c *Client) dial(addr string) (*conn, error) {
	c.mu.Lock()
	req := jute.ConnectRequest{
		LastZxidSeen: c.lastZxid.Load(),
		TimeOut:      int32(c.cfg.sessionTimeout / time.Millisecond),
		Passwd:       c.password,
		ReadOnly:     c.cfg.readOnly,
		HasReadOnly:  true,
	}
	if c.seenRW { // a session from a read-only server is not valid elsewhere
		req.SessionID = c.sessionID
	}
	timeout := c.cfg.sessionTimeout
	if c.timeout > 0 {
		timeout = c.timeout
	}
	c.mu.Unlock()
	timeout /= time.Duration(max(c.hosts.Len(), 1))

	ctx, cancel := context.WithTimeout(c.life, timeout)
	defer cancel()
	nc, err := c.cfg.dialer(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if c.cfg.tls != nil {
		if nc, err = startTLS(ctx, nc, addr, c.cfg.tls); err != nil {
			return nil, err
		}
	}
	// Closing the socket is what interrupts a handshake read when the
	// timeout passes or the Client closes.
	abort := context.AfterFunc(ctx, func() { _ = nc.Close() })
	resp, err := handshake(nc, &req, c.cfg.maxFrame)
	if !abort() {
		err = fmt.Errorf("handshake with %s: %w", addr, context.Cause(ctx))
	}
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	if resp.TimeOut <= 0 {
		_ = nc.Close()
		return nil, ErrSessionExpired
	}
	if c.cfg.sasl != nil {
		dl, _ := ctx.Deadline()
		host, _, _ := net.SplitHostPort(addr)
		if err := saslLogin(nc, c.cfg.sasl, host, c.cfg.maxFrame, dl); err != nil {
			_ = nc.Close()
			return nil, err
		}
	}

	negotiated := time.Duration(resp.TimeOut) * time.Millisecond
	c.mu.Lock()
	fresh := c.sessionID != resp.SessionID
	c.sessionID, c.password, c.timeout = resp.SessionID, resp.Passwd, negotiated
	c.seenRW = c.seenRW || !resp.ReadOnly
	c.mu.Unlock()
	c.log.Info("zk: session established", "server", addr, "session", fmt.Sprintf("0x%x", resp.SessionID),
		"timeout", negotiated, "readOnly", resp.ReadOnly, "new", fresh)
	cn := &conn{
		c:           c,
		nc:          nc,
		addr:        addr,
		readTimeout: negotiated * 2 / 3,
		pingEvery:   negotiated / 3,
		dead:        make(chan struct{}),
	}
	cn.readOnly = resp.ReadOnly
	return cn, nil
}

func handshake(nc io.ReadWriter, req *jute.ConnectRequest, maxFrame int) (*jute.ConnectResponse, error) {
	if _, err := nc.Write(jute.AppendFrame(nil, req)); err != nil {
		return nil, err
	}
	frame, err := jute.ReadFrame(nc, nil, maxFrame)
	if err != nil {
		return nil, err
	}
	var resp jute.ConnectResponse
	if err := jute.UnmarshalPrefix(frame, &resp); err != nil {
		// Apache 3.8 in read-only mode without local sessions answers a
		// new session with a bare reply header carrying NotReadOnly.
		var h jute.ReplyHeader
		if len(frame) == jute.ReplyHeaderSize && jute.Unmarshal(frame, &h) == nil && h.Err != jute.OK {
			return nil, fmt.Errorf("server refused the session: %w", Code(h.Err))
		}
		return nil, fmt.Errorf("%w: connect response: %v", ErrProtocol, err)
	}
	return &resp, nil
}

// serve runs an established connection until it breaks or the Client
// closes, then fails the calls it leaves unanswered. It returns the end
// of the session, if the session ended.
func (c *Client) serve(cn *conn) (end error) {
	// Persistent watches learn the session is back before any event
	// from this connection reaches them.
	if cn.readOnly {
		c.watches.session(StateConnectedReadOnly)
	} else {
		c.watches.session(StateConnected)
	}
	c.mu.Lock()
	c.cur = cn
	auths := c.primeCalls()
	c.mu.Unlock()
	cn.start(append(auths, c.setWatchesCalls()...))

	// Report Connected only once the server has accepted the credentials,
	// so that Connect fails, rather than succeeds, on bad ones.
	if err := c.awaitAll(cn, auths); err != nil {
		cn.kill(err) // a no-op if the connection died first
	} else {
		c.mu.Lock()
		cn.ready = true
		if cn.readOnly {
			c.notify(StateConnectedReadOnly)
		} else {
			c.notify(StateConnected)
		}
		select {
		case <-c.connected:
		default:
			close(c.connected)
		}
		c.mu.Unlock()
		c.kick()
	}
	select {
	case <-cn.dead:
	case <-c.life.Done():
		cn.kill(ErrClosed)
	}
	cn.wg.Wait()
	c.watches.session(StateDisconnected)

	cause := cn.err
	var failWith error
	switch {
	case errors.Is(cause, ErrAuthFailed):
		failWith = ErrAuthFailed
	case c.isClosing():
		failWith = ErrClosed
	default:
		failWith = ErrConnectionLoss
		c.log.Warn("zk: connection lost", "server", cn.addr, "err", cause)
	}
	// Fail what was sent, then what was queued while this connection was
	// serving: in the order of the calls, as the Java client does.
	for _, cl := range cn.takePending() {
		if cl.auth && cl.answered {
			cl.complete(c, cl.err, true)
		} else {
			cl.complete(c, failWith, false)
		}
	}
	c.mu.Lock()
	c.cur = nil
	var queued []*call
	if cn.ready || failWith != ErrConnectionLoss {
		queued, c.queue = c.queue, nil
	}
	c.lastErr = cause
	c.mu.Unlock()
	for _, cl := range queued {
		cl.complete(c, failWith, false)
	}
	if failWith == ErrAuthFailed {
		c.terminate(StateAuthFailed, ErrAuthFailed)
		return ErrAuthFailed
	}
	if failWith == ErrClosed {
		return nil // run terminates
	}
	c.mu.Lock()
	if cn.ready {
		c.notify(StateDisconnected)
	}
	c.notify(StateConnecting)
	c.mu.Unlock()
	return nil
}

// awaitAll waits for calls to complete successfully on cn.
func (c *Client) awaitAll(cn *conn, calls []*call) error {
	for _, cl := range calls {
		select {
		case <-cl.done:
			if cl.err != nil {
				return fmt.Errorf("%s: %w", cl.name, cl.err)
			}
		case <-cn.dead:
			return cn.err
		case <-c.life.Done():
			return ErrClosed
		}
	}
	return nil
}

// primeCalls are the auth requests that open every connection. Called
// with c.mu held.
func (c *Client) primeCalls() []*call {
	var calls []*call
	for _, a := range c.auth {
		cl := c.authCall(a)
		cl.internal = true
		calls = append(calls, cl)
	}
	return calls
}

func (c *Client) authCall(a authInfo) *call {
	// An auth packet is small; only a huge credential could exceed the
	// frame limit, and then the server drops the connection as it would.
	frame := jute.AppendFrame(nil,
		&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth},
		&jute.AuthPacket{Scheme: a.scheme, Auth: a.auth})
	return &call{op: jute.OpAuth, name: "auth", frame: frame, xid: jute.XidAuth, auth: true, done: make(chan struct{})}
}

// setWatchesCalls re-registers the client's watches on a new connection,
// relative to the last zxid seen, so that the server fires those whose
// nodes changed meanwhile. setWatches2 is used only when there are
// persistent watches, so that servers before 3.6 are still served.
func (c *Client) setWatchesCalls() []*call {
	lists := c.watches.snapshot()
	rel := c.lastZxid.Load()
	var calls []*call
	var cur [numKinds][]string
	size := 0
	flush := func() {
		persistent := len(cur[kindPersistent])+len(cur[kindRecursive]) > 0
		var body jute.Record
		op := jute.OpSetWatches
		if persistent {
			op = jute.OpSetWatches2
			body = &jute.SetWatches2{RelativeZxid: rel, DataWatches: cur[kindData], ExistWatches: cur[kindExist],
				ChildWatches: cur[kindChild], PersistentWatches: cur[kindPersistent], PersistentRecursiveWatches: cur[kindRecursive]}
		} else {
			body = &jute.SetWatches{RelativeZxid: rel, DataWatches: cur[kindData], ExistWatches: cur[kindExist],
				ChildWatches: cur[kindChild]}
		}
		frame := jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidSetWatches, Type: op}, body)
		cl := &call{op: op, name: op.String(), frame: frame, xid: jute.XidSetWatches, internal: true, done: make(chan struct{})}
		cl.onReply = func(err error, _ bool) error {
			if err != nil {
				c.log.Warn("zk: re-registering watches failed", "err", err)
			}
			return err
		}
		calls = append(calls, cl)
		cur, size = [numKinds][]string{}, 0
	}
	for k := range lists {
		for _, p := range lists[k] {
			cur[k] = append(cur[k], p)
			size += len(p)
			if size >= setWatchesMax {
				flush()
			}
		}
	}
	if size > 0 {
		flush()
	}
	return calls
}

// terminate ends the session: calls still queued fail with err, every
// watch ends with err, and the state becomes final.
func (c *Client) terminate(s State, err error) {
	c.mu.Lock()
	if c.endErr != nil {
		c.mu.Unlock()
		return
	}
	c.endErr = err
	queued := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, cl := range queued {
		cl.complete(c, err, false)
	}
	c.watches.endAll(err)
	c.mu.Lock()
	c.notify(s)
	c.mu.Unlock()
	switch s {
	case StateExpired:
		c.log.Warn("zk: session expired", "session", fmt.Sprintf("0x%x", c.SessionID()))
	case StateAuthFailed:
		c.log.Warn("zk: authentication failed", "session", fmt.Sprintf("0x%x", c.SessionID()))
	}
	close(c.done)
	c.disp.stop()
	c.stop()
}
