package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// Core is the server's request path between its client connections and
// the replica, without sockets, goroutines or a wall clock, as raft's
// RawNode is raft without Node's goroutine: the registry of requests in
// flight (registry.go), the watch registry, the reads (read.go), the
// encoding of replies and watch events, and the consumption of the
// replica's events (Apply). It
// reaches connections only through Endpoint, and the replica through
// CoreReplica. The Server wires it to real connections and the replica's
// loop; internal/sim wires it to simulated connections and replica cores,
// so that the simulator's checks cover this code.
//
// Core has no lock of its own: its registries are leaves (see the
// package's lock order), and it is called from the goroutines that call
// the Server's code today, the connection readers and the replica's loop.
type Core struct {
	cfg     CoreConfig
	log     *slog.Logger
	reqs    *registry
	watches *watch.Registry
	tokens  chan struct{} // nil: requests hold no throttling token
	metrics *serverMetrics
	// audit records an answered write (the Server's audit log); nil: none.
	audit func(*request, *txn.Result)
}

// Endpoint is a client connection as the request path sees it: the
// Server's conn, or the simulator's. Its methods are called from the
// replica's loop, with the state locked, so they must not block or call
// back into the replica.
type Endpoint interface {
	// ID is the connection's id, unique in its server; it is also its
	// watcher id.
	ID() uint64
	// SessionID is the session attached to the connection, 0 if none.
	SessionID() int64
	// AuthIDs are the identities the connection authenticated as, for the
	// ACL check of watch events and reads.
	AuthIDs() []jute.Id
	// Send queues a frame (a reply or a watch event) for the client, in
	// order; a connection too far behind may close instead.
	Send(frame []byte)
	// Finish queues a last frame (none if nil); the connection closes
	// once it is written.
	Finish(frame []byte)
	// Close breaks the connection at once: the client sees
	// ConnectionLoss. It must end the connection in the Core
	// (Core.Closed) once.
	Close()
	// Replied is told of each reply once it is queued: xid and zxid for
	// the connection's statistics, start (zero if not timed) and now, the
	// reply's time, for latency.
	Replied(xid int32, zxid int64, start, now time.Time)
}

// CoreReplica is what the request path needs of the replica.
type CoreReplica interface {
	// Propose hands a write to the log under tag; the replica's event
	// with that tag (Applied, Synced or Dropped) reaches Core.Apply.
	Propose(t txn.Request, tag uint64) error
	// Read calls f with the state locked and the last applied zxid.
	Read(f func(st *txn.State, zxid int64))
	// LastZxid is the last applied zxid.
	LastZxid() int64
}

// CoreConfig is what a Core needs.
type CoreConfig struct {
	Logger  *slog.Logger
	Replica CoreReplica
	// Conn returns the open connection with the given id, or nil.
	Conn func(id uint64) Endpoint
	// Moved records that a session, live in the replicated state with
	// this timeout, moved here (its setOwner applied), and reports false
	// if the expiry tracker is closing it.
	Moved func(sid int64, timeoutMs int32) bool
	// Now is the clock of latency metrics.
	Now func() time.Time
}

// NewCore returns a request path whose requests hold no throttling
// token: the simulator's.
func NewCore(cfg CoreConfig) *Core {
	return newCore(cfg, newRegistry(), new(watch.Registry), nil, newServerMetrics(nil))
}

func newCore(cfg CoreConfig, reqs *registry, w *watch.Registry, tokens chan struct{}, m *serverMetrics) *Core {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Core{cfg: cfg, log: cfg.Logger, reqs: reqs, watches: w, tokens: tokens, metrics: m}
}

// Open starts tracking a connection's requests.
func (k *Core) Open(ep Endpoint) { k.reqs.open(ep.ID()) }

// Closed ends a connection: the reads that waited for its writes fail,
// its watches go. Its writes end with their events, their replies going
// nowhere.
func (k *Core) Closed(ep Endpoint) {
	for _, req := range k.reqs.close(ep.ID()) {
		req.fail(net.ErrClosed)
	}
	k.watches.RemoveWatcher(watch.Watcher(ep.ID()))
}

// errBadRequest is a request frame the Core cannot decode.
var errBadRequest = errors.New("server: malformed request")

// Handle runs one request frame of ep (no length prefix): a write, sync
// or closeSession goes to the log; a read is answered now, or after the
// session's writes in flight. It is the part of a connection's handle
// that holds no socket: no auth, SASL or read-only mode. An error means
// the connection must close.
func (k *Core) Handle(ep Endpoint, frame []byte, start time.Time) error {
	h, rec, err := jute.DecodeRequestFrame(frame)
	if err != nil {
		return fmt.Errorf("%w: %w", errBadRequest, err)
	}
	req := &request{k: k, conn: ep, xid: h.Xid, op: h.Type, rec: rec, start: start}
	if isWrite(req.op) {
		return k.submit(req, txn.Request{SessionID: ep.SessionID(), Cxid: req.xid, Op: req.op, Record: rec, Auth: ep.AuthIDs()})
	}
	_, err = k.read(req)
	return err
}

// Connect submits a handshake's session txn (createSession, or setOwner
// for a session that moves here); its reply is resp, or a refusal if the
// session is gone.
func (k *Core) Connect(ep Endpoint, t txn.Request, resp *jute.ConnectResponse) error {
	return k.submit(&request{conn: ep, op: t.Op, connect: resp}, t)
}

// submit sends a write (or sync, or a handshake's session txn) to the
// replica. It ends in Apply; if it cannot be submitted, it fails here and
// the connection closes.
func (k *Core) submit(req *request, t txn.Request) error {
	req.k = k
	tag, ok := k.reqs.addWrite(req)
	if !ok {
		req.fail(net.ErrClosed)
		return net.ErrClosed
	}
	if err := k.cfg.Replica.Propose(t, tag); err != nil {
		// Shutdown may have taken it first (Server.failLeft).
		if req := k.reqs.take(tag); req != nil {
			req.fail(err)
		}
		return err
	}
	return nil
}

// read answers a read now, or queues it behind its session's writes in
// flight (FIFO, DESIGN decision 6): it is answered in the apply of the
// last of them, from the state that write left. now reports that it was
// answered here and is held by nothing else.
func (k *Core) read(req *request) (now bool, err error) {
	req.k = k
	wait, ok := k.reqs.addRead(req)
	if !ok {
		req.fail(net.ErrClosed)
		return false, net.ErrClosed
	}
	if wait {
		return false, nil
	}
	k.cfg.Replica.Read(req.answer)
	return true, nil
}

// writeDone records that one of ep's writes was answered and answers the
// reads that waited for it: from st at zxid when the caller holds the
// state (the apply of the write's txn, write-locked), so they see the
// session's earlier writes and none of its later ones; else from the
// replica's state.
func (k *Core) writeDone(ep Endpoint, st *txn.State, zxid int64) {
	for _, req := range k.reqs.writeDone(ep.ID()) {
		if st != nil {
			req.answer(st, zxid)
		} else {
			k.cfg.Replica.Read(req.answer)
		}
	}
}

// Apply consumes one of the replica's events, on its loop. For an
// applied txn the state is write-locked, so the events and the reply
// queued here reach every connection before any reply to a read computed
// after the change (DESIGN decision 7). Restored is the Server's.
func (k *Core) Apply(ev replica.Event) {
	switch ev.Kind {
	case replica.Applied:
		if !mutated(MutEventsAfterReply) {
			k.fire(ev.State, ev.Result.Triggers)
		}
		// The reply goes before a closed session's connection is told to
		// finish, so a closeSession is answered before the close.
		if req := k.reqs.take(ev.Tag); req != nil && req.done != nil {
			req.deliver(ev)
		} else if req != nil {
			k.applied(req, ev)
		}
		if mutated(MutEventsAfterReply) {
			k.fire(ev.State, ev.Result.Triggers)
		}
	case replica.Synced:
		if req := k.reqs.take(ev.Tag); req != nil {
			req.complete(ev.Zxid, jute.OK, &jute.PathRequest{Path: syncPath(req.rec)})
			k.writeDone(req.conn, nil, 0)
		}
	case replica.Dropped:
		if req := k.reqs.take(ev.Tag); req != nil && req.done != nil {
			req.deliver(ev)
		} else if req != nil {
			k.metrics.dropped.Inc()
			// The client sees ConnectionLoss and retries elsewhere. The
			// request was not applied here and may never be; in an
			// ensemble whose leader changed it may still apply later,
			// which is what ConnectionLoss allows. The reads behind it
			// fail with its connection.
			req.fail(errDropped)
		}
	}
}

// fire delivers the watch events of a change. As in Apache, a watcher
// without READ on the node gets no event, though its one-time watch is
// used up. One encoded frame serves every watcher of the same event.
func (k *Core) fire(st *txn.State, triggers []txn.Trigger) {
	var eps []Endpoint
	for _, t := range triggers {
		ds := k.watches.Trigger(t.Path, t.Type, 0)
		if len(ds) == 0 {
			continue
		}
		acls := t.ACL
		if t.Type != jute.EventNodeDeleted {
			acls, _, _ = st.Tree.ACL(t.Path)
		}
		eps = eps[:0]
		for _, d := range ds {
			if ep := k.cfg.Conn(uint64(d.Watcher)); ep != nil {
				eps = append(eps, ep)
			}
		}
		frame := eventFrame(t.Type, t.Path)
		for _, ep := range eps {
			if acl.Check(acls, jute.PermRead, ep.AuthIDs()) || mutated(MutEventsIgnoreACL) {
				ep.Send(frame)
			}
		}
	}
}

// applied answers a write whose txn was applied.
func (k *Core) applied(req *request, ev replica.Event) {
	c := req.conn
	if mutated(MutReadsBeforeWrite) {
		k.writeDone(c, ev.State, ev.Zxid)
	} else {
		defer k.writeDone(c, ev.State, ev.Zxid)
	}
	if req.op == txn.OpSetOwner && !k.movedHere(ev, req.connect) {
		// The session is gone (or never was, or the password is
		// wrong): a zero timeout and password say so.
		k.log.Info("refusing to reattach session: unknown, expired or wrong password",
			"session", sessionHex(req.connect.SessionID), "err", ev.Result.Err)
		req.completeFrame(connectFrame(&jute.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.connect.HasReadOnly}), ev.Zxid, true)
		return
	}
	if req.connect != nil {
		if rc, ok := c.(*conn); ok {
			rc.st.lastOp.Store(int32(jute.OpCreateSession))
		}
		req.completeFrame(connectFrame(req.connect), ev.Zxid, false)
		return
	}
	code, resp := writeReply(req.op, ev.Result)
	now := k.now() // one clock read for the reply and its latency
	req.completeAt(now, ev.Zxid, code, resp)
	k.metrics.updateLatency.Observe(msSince(req.start, now))
	if k.audit != nil {
		k.audit(req, ev.Result)
	}
}

// movedHere reports whether a session's move here (its setOwner, just
// applied: ev.State is the write-locked state) succeeded for a client with
// this password.
func (k *Core) movedHere(ev replica.Event, resp *jute.ConnectResponse) bool {
	if ev.Result.Err != jute.OK {
		return false
	}
	info, ok := ev.State.Sessions[resp.SessionID]
	return ok && bytes.Equal(info.Password, resp.Passwd) && k.cfg.Moved(resp.SessionID, info.TimeoutMs)
}

// now is the time on the Core's clock.
func (k *Core) now() time.Time { return k.cfg.Now() }

// sinceMs is the time since start in ms on the Core's clock.
func (k *Core) sinceMs(start time.Time) int64 { return msSince(start, k.cfg.Now()) }

// msSince is the time from start to now in ms; 0 for a zero start.
func msSince(start, now time.Time) int64 {
	if start.IsZero() {
		return 0
	}
	return now.Sub(start).Milliseconds()
}
