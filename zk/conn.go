package zk

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// call is one request from the moment it is accepted until it completes.
//
// Its frame is encoded when the call is made, so the writer only patches
// in the xid. A call completes exactly once: with its reply (on the reader
// goroutine), or with an error when its connection or the session ends.
type call struct {
	op    jute.Op
	name  string // the operation, for errors
	path  string // the path as the caller gave it, for errors
	frame []byte // length, header and body; the xid is patched in on send
	resp  jute.Record

	// onReply runs on the reader goroutine when the reply arrives, before
	// the next frame is read: it registers or removes watches, so that no
	// notification can slip between a reply and its watch. claimed is
	// false if a synchronous caller gave up waiting; it may replace err.
	onReply func(err error, claimed bool) error
	// accepted runs under Client.mu when the call is queued.
	accepted func()

	xid      int32
	auth     bool // xid -4: Apache answers it as soon as it reads it, ahead of earlier requests
	answered bool // auth only: the reply came (guarded by conn.mu)
	internal bool // takes no in-flight slot (session upkeep)

	state atomic.Int32 // callWaiting, callDone or callAbandoned
	err   error
	done  chan struct{}
	async func() // run on the dispatcher goroutine after completion
}

const (
	callWaiting   int32 = iota
	callDone            // completed, or being completed by the reader
	callAbandoned       // a synchronous caller's context ended first
)

// newCall encodes a request. body may be nil (ops without a body).
func (c *Client) newCall(op jute.Op, name, path string, body, resp jute.Record) (*call, error) {
	hdr := jute.RequestHeader{Type: op}
	frame := jute.AppendFrame(nil, &hdr, body)
	if len(frame)-4 > c.cfg.maxFrame {
		return nil, &Error{Op: name, Path: path, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrRequestTooLarge, len(frame)-4, c.cfg.maxFrame)}
	}
	return &call{op: op, name: name, path: path, frame: frame, resp: resp, done: make(chan struct{})}, nil
}

// setXid patches the xid into the encoded header (after the length).
func (cl *call) setXid(xid int32) {
	cl.xid = xid
	cl.frame[4], cl.frame[5], cl.frame[6], cl.frame[7] = byte(xid>>24), byte(xid>>16), byte(xid>>8), byte(xid)
}

// complete finishes the call with err. replied says a reply arrived, so
// onReply runs. Only one goroutine completes a given call.
func (cl *call) complete(c *Client, err error, replied bool) {
	claimed := cl.state.CompareAndSwap(callWaiting, callDone)
	if replied && cl.onReply != nil {
		err = cl.onReply(err, claimed)
	}
	cl.frame = nil
	if !cl.internal {
		<-c.slots
	}
	if !claimed {
		return
	}
	cl.err = err
	close(cl.done)
	if cl.async != nil {
		c.disp.push(cl.async)
	}
}

// conn is one TCP connection to a server: a reader and a writer goroutine
// and the calls sent on it and not yet answered, in the order sent.
type conn struct {
	c           *Client
	nc          net.Conn
	addr        string
	readOnly    bool          // the server is read-only (WithReadOnly)
	readTimeout time.Duration // give up on a server silent this long (2/3 of the session timeout)
	pingEvery   time.Duration // ping after sending nothing this long (1/3)

	mu      sync.Mutex
	pending []*call

	ready bool // guarded by Client.mu: the writer may send queued calls

	dead     chan struct{} // closed by kill
	killOnce sync.Once
	err      error // why the connection died; set before dead is closed
	wg       sync.WaitGroup
}

// kill ends the connection once; the first error is kept.
func (cn *conn) kill(err error) {
	cn.killOnce.Do(func() {
		cn.err = err
		close(cn.dead)
		_ = cn.nc.Close()
	})
}

// start runs the reader and the writer. prime are the calls that must be
// sent before any queued call: credentials and watch re-registration.
func (cn *conn) start(prime []*call) {
	cn.wg.Add(2)
	go cn.readLoop()
	go cn.writeLoop(prime)
}

// pingFrame is a complete ping request; pings get replies but are not
// tracked, as in the Java client.
var pingFrame = jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})

func (cn *conn) writeLoop(prime []*call) {
	defer cn.wg.Done()
	ping := time.NewTimer(cn.pingEvery)
	defer ping.Stop()
	batch := prime
	for {
		if len(batch) > 0 {
			if err := cn.send(batch); err != nil {
				cn.kill(err)
				return
			}
			ping.Reset(cn.pingEvery)
		}
		select {
		case <-cn.c.wake:
		case <-ping.C:
			if err := cn.write(net.Buffers{pingFrame}); err != nil {
				cn.kill(err)
				return
			}
			ping.Reset(cn.pingEvery)
		case <-cn.dead:
			return
		}
		batch = cn.c.takeQueue(cn)
	}
}

// send records the batch as pending, then writes it with one writev. The
// calls are pending before a byte leaves, so a reply always finds its call.
func (cn *conn) send(batch []*call) error {
	bufs := make(net.Buffers, len(batch))
	for i, cl := range batch {
		bufs[i] = cl.frame
	}
	cn.mu.Lock()
	cn.pending = append(cn.pending, batch...)
	cn.mu.Unlock()
	return cn.write(bufs)
}

func (cn *conn) write(bufs net.Buffers) error {
	if err := cn.nc.SetWriteDeadline(time.Now().Add(cn.readTimeout)); err != nil {
		return err
	}
	_, err := bufs.WriteTo(cn.nc)
	return err
}

func (cn *conn) readLoop() {
	defer cn.wg.Done()
	buf := make([]byte, 0, 4096)
	r := jute.NewReader(nil)
	for {
		if err := cn.nc.SetReadDeadline(time.Now().Add(cn.readTimeout)); err != nil {
			cn.kill(err)
			return
		}
		frame, err := jute.ReadFrame(cn.nc, buf, cn.c.cfg.maxFrame)
		if err != nil {
			cn.kill(err)
			return
		}
		buf = frame
		if err := cn.handle(r, frame); err != nil {
			cn.kill(err)
			return
		}
	}
}

// handle processes one frame from the server.
func (cn *conn) handle(r *jute.Reader, frame []byte) error {
	r.Reset(frame)
	var h jute.ReplyHeader
	h.Decode(r)
	if r.Err() != nil {
		return fmt.Errorf("%w: reply header: %v", ErrProtocol, r.Err())
	}
	switch h.Xid {
	case jute.XidNotification:
		var ev jute.WatcherEvent
		ev.Decode(r)
		if r.Err() != nil {
			return fmt.Errorf("%w: notification: %v", ErrProtocol, r.Err())
		}
		cn.c.watches.trigger(EventType(ev.Type), ev.Path)
		return nil
	case jute.XidPing:
		return nil
	case jute.XidAuth:
		return cn.answerAuth(h.Err)
	}
	return cn.answer(&h, r)
}

// answer completes the oldest pending call with a reply. The server
// answers in order, so a reply for any other xid is a protocol error.
func (cn *conn) answer(h *jute.ReplyHeader, r *jute.Reader) error {
	cn.mu.Lock()
	ready := cn.popAnswered()
	var cl *call
	if len(cn.pending) > 0 && !cn.pending[0].auth {
		cl = cn.pending[0]
		cn.pending[0] = nil
		cn.pending = cn.pending[1:]
	}
	cn.mu.Unlock()
	cn.c.finishAnswered(ready)
	if cl == nil {
		return fmt.Errorf("%w: reply for xid %d with no request waiting", ErrProtocol, h.Xid)
	}
	if cl.xid != h.Xid {
		cl.complete(cn.c, ErrConnectionLoss, false)
		return fmt.Errorf("%w: reply for xid %d, expected %d", ErrProtocol, h.Xid, cl.xid)
	}
	if h.Zxid > 0 {
		cn.c.lastZxid.Store(h.Zxid)
	}
	err := codeErr(int32(h.Err))
	if err == nil && cl.resp != nil {
		cl.resp.Decode(r)
		if r.Err() != nil {
			err = fmt.Errorf("%w: %v reply: %v", ErrMarshallingError, cl.op, r.Err())
		}
	}
	cl.complete(cn.c, err, true)
	return nil
}

// answerAuth records the reply to the oldest unanswered auth call. Apache
// answers auth as soon as it reads it, possibly before earlier requests,
// so the call completes only when everything sent before it has: callers
// see completions in the order of their calls.
func (cn *conn) answerAuth(code jute.Code) error {
	err := codeErr(int32(code))
	cn.mu.Lock()
	for _, cl := range cn.pending {
		if cl.auth && !cl.answered {
			cl.answered, cl.err = true, err
			break
		}
	}
	ready := cn.popAnswered()
	cn.mu.Unlock()
	cn.c.finishAnswered(ready)
	if errors.Is(err, ErrAuthFailed) {
		return ErrAuthFailed // Apache closes the connection after this reply
	}
	return nil
}

// popAnswered removes the answered auth calls at the head of pending.
// Called with cn.mu held.
func (cn *conn) popAnswered() []*call {
	var ready []*call
	for len(cn.pending) > 0 && cn.pending[0].auth && cn.pending[0].answered {
		ready = append(ready, cn.pending[0])
		cn.pending[0] = nil
		cn.pending = cn.pending[1:]
	}
	return ready
}

// finishAnswered completes answered auth calls with the result recorded
// for them.
func (c *Client) finishAnswered(calls []*call) {
	for _, cl := range calls {
		cl.complete(c, cl.err, true)
	}
}

// takePending empties the pending list once the reader and writer have
// stopped.
func (cn *conn) takePending() []*call {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	p := cn.pending
	cn.pending = nil
	return p
}
