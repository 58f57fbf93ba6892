package server

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// ioTimeout bounds every read and write of the raw client: a test that hits
// it has found a server that wedged or stayed silent.
const ioTimeout = 10 * time.Second

// rawClient is a minimal client that speaks the wire protocol with no
// cleverness: it writes exactly the bytes a test gives it and hands back
// whole frames, so tests see every reply, notification and close.
type rawClient struct {
	t   testing.TB
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
	xid int32

	sid     int64
	passwd  []byte
	timeout int32
}

// dialRaw opens a TCP connection and nothing more.
func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return wrapRaw(t, nc)
}

// dialSmallBuffer is dialRaw with a small socket receive buffer, set before
// connecting so the TCP window stays small: a client that does not read
// then pushes back on the server quickly.
func dialSmallBuffer(t testing.TB, addr string) *rawClient {
	t.Helper()
	d := net.Dialer{Timeout: ioTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return wrapRaw(t, nc)
}

func wrapRaw(t testing.TB, nc net.Conn) *rawClient {
	c := &rawClient{t: t, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
	t.Cleanup(func() { _ = nc.Close() })
	return c
}

// bind makes c report failures to t (a subtest using a client that its
// parent made) until the returned function restores the previous test.
func (c *rawClient) bind(t testing.TB) (restore func()) {
	prev := c.t
	c.t = t
	return func() { c.t = prev }
}

// connectReq is a ConnectRequest as current clients send it.
func connectReq(timeoutMs int32) jute.ConnectRequest {
	return jute.ConnectRequest{TimeOut: timeoutMs, Passwd: make([]byte, 16), HasReadOnly: true}
}

// newSession dials addr and opens a new session.
func newSession(t testing.TB, addr string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.handshake(connectReq(30000))
	return c
}

// handshake sends req, reads the ConnectResponse and fails the test unless
// the server granted a session.
func (c *rawClient) handshake(req jute.ConnectRequest) jute.ConnectResponse {
	c.t.Helper()
	resp, _, err := c.tryHandshake(req)
	if err != nil {
		c.t.Fatalf("handshake: %v", err)
	}
	if resp.TimeOut <= 0 || resp.SessionID == 0 {
		c.t.Fatalf("handshake refused: %+v", resp)
	}
	return resp
}

// tryHandshake sends req and returns the decoded response and the size of
// its frame body.
func (c *rawClient) tryHandshake(req jute.ConnectRequest) (jute.ConnectResponse, int, error) {
	c.writeFrame(&req)
	frame, err := c.readFrame()
	if err != nil {
		return jute.ConnectResponse{}, 0, err
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(frame, &resp); err != nil {
		return resp, len(frame), fmt.Errorf("decode connect response %x: %w", frame, err)
	}
	c.sid, c.passwd, c.timeout = resp.SessionID, resp.Passwd, resp.TimeOut
	return resp, len(frame), nil
}

// reattachReq asks to resume c's session on another connection.
func (c *rawClient) reattachReq() jute.ConnectRequest {
	req := connectReq(c.timeout)
	req.SessionID, req.Passwd = c.sid, c.passwd
	return req
}

// writeRaw writes b as it is.
func (c *rawClient) writeRaw(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// writeFrame writes one frame holding recs.
func (c *rawClient) writeFrame(recs ...jute.Record) {
	c.t.Helper()
	c.writeRaw(jute.AppendFrame(nil, recs...))
}

// nextXid returns the next request xid, skipping the special ones.
func (c *rawClient) nextXid() int32 {
	c.xid++
	return c.xid
}

// request encodes a request frame; rec may be nil.
func (c *rawClient) request(op jute.Op, rec jute.Record) (xid int32, frame []byte) {
	xid = c.nextXid()
	if op == jute.OpPing {
		xid = jute.XidPing
	}
	return xid, appendRequest(nil, xid, op, rec)
}

// requestFrame is request without the xid.
func (c *rawClient) requestFrame(op jute.Op, rec jute.Record) []byte {
	_, frame := c.request(op, rec)
	return frame
}

func appendRequest(dst []byte, xid int32, op jute.Op, rec jute.Record) []byte {
	return jute.AppendFrame(dst, &jute.RequestHeader{Xid: xid, Type: op}, rec)
}

// send writes one request and returns its xid without waiting.
func (c *rawClient) send(op jute.Op, rec jute.Record) int32 {
	c.t.Helper()
	xid, frame := c.request(op, rec)
	c.writeRaw(frame)
	return xid
}

// readFrame reads one frame, waiting at most ioTimeout.
func (c *rawClient) readFrame() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	frame, err := jute.ReadFrame(c.br, c.buf, 16<<20)
	c.buf = frame
	return frame, err
}

// reply is one decoded reply or notification frame.
type reply struct {
	hdr  jute.ReplyHeader
	body []byte
}

func (r reply) String() string {
	return fmt.Sprintf("{xid %d zxid %d err %v body %s}", r.hdr.Xid, r.hdr.Zxid, r.hdr.Err, hex.EncodeToString(r.body))
}

// decode decodes the body into rec, failing the test if it does not fit.
func (r reply) decode(t testing.TB, rec jute.Record) {
	t.Helper()
	if err := jute.Unmarshal(r.body, rec); err != nil {
		t.Fatalf("decode %T from reply %v: %v", rec, r, err)
	}
}

// event decodes a notification.
func (r reply) event(t testing.TB) jute.WatcherEvent {
	t.Helper()
	var ev jute.WatcherEvent
	r.decode(t, &ev)
	return ev
}

// readReply reads the next frame as a reply header and body.
func (c *rawClient) readReply() reply {
	c.t.Helper()
	r, err := c.tryReadReply()
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return r
}

func (c *rawClient) tryReadReply() (reply, error) {
	frame, err := c.readFrame()
	if err != nil {
		return reply{}, err
	}
	rd := jute.NewReader(frame)
	var r reply
	r.hdr.Decode(rd)
	if rd.Err() != nil {
		return reply{}, fmt.Errorf("reply header %x: %w", frame, rd.Err())
	}
	r.body = append([]byte(nil), frame[rd.Offset():]...)
	return r, nil
}

// call sends a request and reads its reply, failing on anything else in
// between (a notification included: tests that expect one read it
// themselves). If resp is not nil and the reply is OK, the body is decoded
// into it.
func (c *rawClient) call(op jute.Op, rec, resp jute.Record) jute.ReplyHeader {
	c.t.Helper()
	xid := c.send(op, rec)
	r := c.readReply()
	if r.hdr.Xid != xid {
		c.t.Fatalf("%v: got reply %v, want xid %d", op, r, xid)
	}
	if resp != nil && r.hdr.Err == jute.OK {
		r.decode(c.t, resp)
	}
	return r.hdr
}

// mustCall is call that fails the test unless the reply's error is want.
func (c *rawClient) mustCall(op jute.Op, rec, resp jute.Record, want jute.Code) jute.ReplyHeader {
	c.t.Helper()
	h := c.call(op, rec, resp)
	if h.Err != want {
		c.t.Fatalf("%v %+v: error %v, want %v", op, rec, h.Err, want)
	}
	return h
}

// create makes a persistent node (or another kind, by flags).
func (c *rawClient) create(path string, data []byte, flags int32) {
	c.t.Helper()
	c.mustCall(jute.OpCreate, createReq(path, data, flags), nil, jute.OK)
}

func createReq(path string, data []byte, flags int32) *jute.CreateRequest {
	return &jute.CreateRequest{Path: path, Data: data, ACL: openACL(), Flags: flags}
}

func openACL() []jute.ACL {
	return []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
}

// getData reads a node's data, failing unless it exists.
func (c *rawClient) getData(path string) []byte {
	c.t.Helper()
	var resp jute.GetDataResponse
	c.mustCall(jute.OpGetData, &jute.PathWatch{Path: path}, &resp, jute.OK)
	return resp.Data
}

// exists reports whether path exists, with its stat.
func (c *rawClient) exists(path string) (jute.Stat, bool) {
	c.t.Helper()
	var resp jute.StatResponse
	h := c.call(jute.OpExists, &jute.PathWatch{Path: path}, &resp)
	switch h.Err {
	case jute.OK:
		return resp.Stat, true
	case jute.NoNode:
		return jute.Stat{}, false
	}
	c.t.Fatalf("exists %s: %v", path, h.Err)
	return jute.Stat{}, false
}

// expectClosed reads until the server closes the connection and fails the
// test if that takes longer than ioTimeout. It returns the frames that
// arrived first.
func (c *rawClient) expectClosed() []reply {
	c.t.Helper()
	var got []reply
	for {
		r, err := c.tryReadReply()
		if err == nil {
			got = append(got, r)
			continue
		}
		if !isClosed(err) {
			c.t.Fatalf("want the server to close the connection; got %v after %v", err, got)
		}
		return got
	}
}

// expectClosedSilently is expectClosed for a connection that must get no
// frame at all before the close; it fails as soon as one arrives.
func (c *rawClient) expectClosedSilently() {
	c.t.Helper()
	r, err := c.tryReadReply()
	switch {
	case err == nil:
		c.t.Fatalf("want a close without a reply; got %v", r)
	case !isClosed(err):
		c.t.Fatalf("want the server to close the connection; got %v", err)
	}
}

// isClosed reports whether a read error means the peer closed the
// connection (as opposed to a timeout).
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// close closes the client's side.
func (c *rawClient) close() { _ = c.nc.Close() }

// testRoot creates a fresh persistent node for the test and returns its
// path, so tests never collide on a shared (Apache) server.
func testRoot(t testing.TB, c *rawClient) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	root := "/" + name + "-" + hex.EncodeToString(b[:])
	c.create(root, nil, jute.FlagPersistent)
	return root
}

// frameHeader returns a 4-byte big-endian length prefix.
func frameHeader(n int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(n))
}

// fourLetter sends a four-letter word to addr and returns the whole answer,
// which ends when the server closes the connection.
func fourLetter(t testing.TB, addr, word string) string {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.close()
	c.writeRaw([]byte(word))
	_ = c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	out, err := io.ReadAll(c.nc)
	if err != nil && !isClosed(err) {
		t.Fatalf("%s: %v after %q", word, err, out)
	}
	return string(out)
}
