package zk

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// fakeServer is a scripted server for wire-level tests: the test accepts
// each connection, reads its requests and writes the replies it chooses.
type fakeServer struct {
	t     *testing.T
	ln    net.Listener
	conns chan *fakeConn
}

type fakeConn struct {
	t   *testing.T
	nc  net.Conn
	req jute.ConnectRequest
}

func newFakeServer(t *testing.T) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, ln: ln, conns: make(chan *fakeConn, 8)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(f.conns)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			fc := &fakeConn{t: t, nc: nc}
			frame, err := jute.ReadFrame(nc, nil, jute.MaxFrame)
			if err != nil {
				_ = nc.Close()
				continue
			}
			if err := jute.UnmarshalPrefix(frame, &fc.req); err != nil {
				_ = nc.Close()
				continue
			}
			f.conns <- fc
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		for fc := range f.conns {
			_ = fc.nc.Close()
		}
	})
	return f
}

// accept returns the next connection, its handshake read but not answered.
func (f *fakeServer) accept() *fakeConn {
	f.t.Helper()
	select {
	case fc := <-f.conns:
		f.t.Cleanup(func() { _ = fc.nc.Close() })
		return fc
	case <-time.After(20 * time.Second):
		f.t.Fatal("no connection")
	}
	return nil
}

// welcome answers the handshake with session id and timeout.
func (fc *fakeConn) welcome(id int64, timeout int32) {
	fc.write(&jute.ConnectResponse{TimeOut: timeout, SessionID: id, Passwd: bytes.Repeat([]byte{7}, 16), HasReadOnly: true})
}

func (fc *fakeConn) write(recs ...jute.Record) {
	fc.t.Helper()
	if _, err := fc.nc.Write(jute.AppendFrame(nil, recs...)); err != nil {
		fc.t.Errorf("fake server write: %v", err)
	}
}

// next reads the next request that is not a ping.
func (fc *fakeConn) next() (jute.RequestHeader, jute.Record) {
	fc.t.Helper()
	for {
		_ = fc.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		frame, err := jute.ReadFrame(fc.nc, nil, jute.MaxFrame)
		if err != nil {
			fc.t.Fatalf("fake server read: %v", err)
		}
		h, rec, err := jute.DecodeRequestFrame(frame)
		if err != nil {
			fc.t.Fatalf("fake server decode: %v", err)
		}
		if h.Type != jute.OpPing {
			return h, rec
		}
		fc.write(&jute.ReplyHeader{Xid: jute.XidPing, Zxid: 1})
	}
}

func (fc *fakeConn) reply(xid int32, zxid int64, code jute.Code, body jute.Record) {
	fc.t.Helper()
	fc.write(&jute.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}, body)
}

func fakeClient(t *testing.T, f *fakeServer, opts ...Option) (*Client, *fakeConn) {
	t.Helper()
	type result struct {
		c   *Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := Connect(context.Background(), f.ln.Addr().String(), append([]Option{WithLogger(testLogger(t))}, opts...)...)
		done <- result{c, err}
	}()
	fc := f.accept()
	fc.welcome(0x42, 10000)
	r := <-done
	if r.err != nil {
		t.Fatalf("connect: %v", r.err)
	}
	t.Cleanup(func() { _ = r.c.Close() })
	return r.c, fc
}

// Ref: paper section 4.4 and programmer's guide section 3: on a new
// connection the client sends its session id, password and the last zxid
// it has seen, then re-registers its watches relative to that zxid.
func TestWireReconnect(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	c, fc := fakeClient(t, f)
	if fc.req.SessionID != 0 || fc.req.LastZxidSeen != 0 || fc.req.TimeOut != 10000 || !fc.req.HasReadOnly || fc.req.ReadOnly {
		t.Errorf("first handshake %+v", fc.req)
	}

	type got struct {
		ch  <-chan Event
		err error
	}
	res := make(chan got, 3)
	must(t, "getW", c.GetWAsync(context.Background(), "/d", func(_ []byte, _ Stat, ch <-chan Event, err error) { res <- got{ch, err} }))
	must(t, "existsW", c.ExistsWAsync(context.Background(), "/e", func(_ bool, _ Stat, ch <-chan Event, err error) { res <- got{ch, err} }))
	must(t, "childrenW", c.ChildrenWAsync(context.Background(), "/c", func(_ []string, _ Stat, ch <-chan Event, err error) { res <- got{ch, err} }))
	h, _ := fc.next()
	fc.reply(h.Xid, 90, jute.OK, &jute.GetDataResponse{Data: []byte("x")})
	h, _ = fc.next()
	fc.reply(h.Xid, 100, jute.NoNode, nil)
	h, _ = fc.next()
	fc.reply(h.Xid, 95, jute.OK, &jute.GetChildren2Response{})
	var chans []<-chan Event
	for range 3 {
		r := <-res
		must(t, "watch call", r.err)
		chans = append(chans, r.ch)
	}
	if c.LastZxid() != 95 {
		t.Errorf("last zxid %d, want the last reply's, 95", c.LastZxid())
	}
	_ = fc.nc.Close()

	fc2 := f.accept()
	if fc2.req.SessionID != 0x42 || !bytes.Equal(fc2.req.Passwd, bytes.Repeat([]byte{7}, 16)) || fc2.req.LastZxidSeen != 95 {
		t.Errorf("reconnect handshake %+v", fc2.req)
	}
	fc2.welcome(0x42, 10000)
	h, rec := fc2.next()
	sw, ok := rec.(*jute.SetWatches)
	if h.Xid != jute.XidSetWatches || !ok {
		t.Fatalf("first request after reconnect: %+v %T", h, rec)
	}
	if sw.RelativeZxid != 95 || !slices.Equal(sw.DataWatches, []string{"/d"}) ||
		!slices.Equal(sw.ExistWatches, []string{"/e"}) || !slices.Equal(sw.ChildWatches, []string{"/c"}) {
		t.Errorf("setWatches %+v", sw)
	}
	fc2.reply(jute.XidSetWatches, 95, jute.OK, nil)
	fc2.write(&jute.ReplyHeader{Xid: jute.XidNotification, Zxid: -1}, &jute.WatcherEvent{Type: int32(EventNodeCreated), State: 3, Path: "/e"})
	expectEvent(t, chans[1], EventNodeCreated, "/e")
	noEvent(t, chans[0])

	// With a persistent watch, re-registration uses setWatches2.
	wch := make(chan error, 1)
	must(t, "addWatch", c.AddWatchAsync(context.Background(), "/p", WatchPersistentRecursive, func(_ <-chan Event, err error) { wch <- err }))
	h, _ = fc2.next()
	fc2.reply(h.Xid, 96, jute.OK, nil)
	must(t, "addWatch", <-wch)
	_ = fc2.nc.Close()
	fc3 := f.accept()
	fc3.welcome(0x42, 10000)
	h, rec = fc3.next()
	sw2, ok := rec.(*jute.SetWatches2)
	if h.Type != jute.OpSetWatches2 || !ok || sw2.RelativeZxid != 96 || !slices.Equal(sw2.PersistentRecursiveWatches, []string{"/p"}) {
		t.Errorf("setWatches2 %+v %+v", h, rec)
	}
}

// Apache answers auth as soon as it reads it, ahead of replies to
// requests sent earlier. The client still completes calls in call order.
func TestWireAuthReplyOvertakes(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	c, fc := fakeClient(t, f)
	var order []string
	done := make(chan struct{})
	record := func(name string) { order = append(order, name); done <- struct{}{} }
	must(t, "get", c.GetAsync(context.Background(), "/a", func([]byte, Stat, error) { record("get1") }))
	must(t, "auth", c.AddAuthAsync(context.Background(), "digest", []byte("u:p"), func(err error) { record("auth") }))
	must(t, "get", c.GetAsync(context.Background(), "/b", func([]byte, Stat, error) { record("get2") }))
	h1, _ := fc.next()
	ha, rec := fc.next()
	if ha.Xid != jute.XidAuth || rec.(*jute.AuthPacket).Scheme != "digest" {
		t.Fatalf("second request %+v %+v", ha, rec)
	}
	h2, _ := fc.next()
	fc.reply(jute.XidAuth, 0, jute.OK, nil)
	fc.reply(h1.Xid, 5, jute.OK, &jute.GetDataResponse{})
	fc.reply(h2.Xid, 5, jute.OK, &jute.GetDataResponse{})
	for range 3 {
		<-done
	}
	if !slices.Equal(order, []string{"get1", "auth", "get2"}) {
		t.Errorf("completion order %v", order)
	}

	// The credentials are replayed on the next connection, before any
	// other request.
	_ = fc.nc.Close()
	fc2 := f.accept()
	fc2.welcome(0x42, 10000)
	h, rec := fc2.next()
	if h.Xid != jute.XidAuth || string(rec.(*jute.AuthPacket).Auth) != "u:p" {
		t.Errorf("first request after reconnect: %+v %+v", h, rec)
	}
}

// A reply out of order is a protocol error: the connection is dropped, the
// calls on it fail with ConnectionLoss, and the client reconnects.
func TestWireReplyOutOfOrder(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	c, fc := fakeClient(t, f)
	errs := make(chan error, 2)
	for _, p := range []string{"/a", "/b"} {
		must(t, "get", c.GetAsync(context.Background(), p, func(_ []byte, _ Stat, err error) { errs <- err }))
	}
	fc.next()
	h2, _ := fc.next()
	fc.reply(h2.Xid, 5, jute.OK, &jute.GetDataResponse{})
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrConnectionLoss) {
			t.Errorf("call: %v, want ConnectionLoss", err)
		}
	}
	fc2 := f.accept()
	if fc2.req.SessionID != 0x42 {
		t.Errorf("reconnect with session %x", fc2.req.SessionID)
	}
}

// A session the server no longer knows is answered with a zero timeout at
// the handshake: the client reports Expired (programmer's guide section 3).
func TestWireExpiredAtHandshake(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	states := newStateLog()
	c, fc := fakeClient(t, f, states.option())
	_ = fc.nc.Close()
	fc2 := f.accept()
	fc2.write(&jute.ConnectResponse{TimeOut: 0, Passwd: make([]byte, 16), HasReadOnly: true})
	<-c.Done()
	if !errors.Is(c.Err(), ErrSessionExpired) {
		t.Errorf("Err = %v", c.Err())
	}
	states.wait(t, StateExpired, 0, 10*time.Second)
}

// Frames over the limit: a request is refused before it is sent; a reply
// breaks the connection (and the call fails with ConnectionLoss).
func TestWireFrameLimit(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	c, fc := fakeClient(t, f, WithMaxFrameSize(1000))
	_, err := c.Set(context.Background(), "/a", make([]byte, 1000), -1)
	if !errors.Is(err, ErrRequestTooLarge) || !strings.Contains(err.Error(), "setData /a") {
		t.Errorf("large request: %v", err)
	}
	errc := make(chan error, 1)
	must(t, "get", c.GetAsync(context.Background(), "/a", func(_ []byte, _ Stat, err error) { errc <- err }))
	h, _ := fc.next()
	fc.reply(h.Xid, 5, jute.OK, &jute.GetDataResponse{Data: make([]byte, 2000)})
	if err := <-errc; !errors.Is(err, ErrConnectionLoss) {
		t.Errorf("large reply: %v", err)
	}
}

// setWatches requests stay well under the frame limit, however many
// watches there are (ZOOKEEPER-706): the paths are split over requests
// of about 128 KiB.
func TestSetWatchesBatches(t *testing.T) {
	t.Parallel()
	c := &Client{cfg: defaultConfig()}
	c.watches = newRegistry(func(p string) string { return p })
	long := "/" + strings.Repeat("x", 999)
	for i := range 300 {
		c.watches.add(&watch{kind: kind(i % 3), path: long + string(rune('a'+i%26)) + strings.Repeat("y", i), ch: make(chan Event, 1)})
	}
	calls := c.setWatchesCalls()
	if len(calls) < 3 {
		t.Fatalf("%d setWatches requests for ~400 KB of paths", len(calls))
	}
	total := 0
	for _, cl := range calls {
		if len(cl.frame) > setWatchesMax+2000+100 {
			t.Errorf("setWatches frame of %d bytes", len(cl.frame))
		}
		_, rec, err := jute.DecodeRequestFrame(cl.frame[4:])
		must(t, "decode", err)
		sw := rec.(*jute.SetWatches)
		total += len(sw.DataWatches) + len(sw.ExistWatches) + len(sw.ChildWatches)
	}
	if total != 300 {
		t.Errorf("%d paths re-registered, want 300", total)
	}
}

// Apache 3.8 in read-only mode without local sessions answers the
// handshake of a new session with a bare reply header (NotReadOnly); the
// client reports that code rather than a decoding error.
func TestWireHandshakeRefused(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := Connect(short, f.ln.Addr().String(), WithLogger(testLogger(t)), WithReadOnly(true))
		errc <- err
	}()
	fc := f.accept()
	fc.write(&jute.ReplyHeader{Err: jute.NotReadOnly})
	err := <-errc
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "server refused the session: zk: not a read-only call") {
		t.Errorf("connect: %v", err)
	}
}
