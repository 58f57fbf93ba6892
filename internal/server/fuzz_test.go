package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// One server serves every input of a fuzz process: starting a server per
// input would cost more than the input. TestMain stops it.
var fuzzSrv struct {
	once sync.Once
	ts   *testServer
}

func fuzzServer(t *testing.T) *testServer {
	fuzzSrv.once.Do(func() {
		cfg := baseConfig()
		cfg.Logger = slog.New(slog.DiscardHandler)
		// Sessions of past inputs expire within a second, so they do
		// not pile up, and expiry runs alongside the inputs.
		cfg.TickTime = 100 * time.Millisecond
		cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 1000, 1000
		cfg.ContainerCheck = 100 * time.Millisecond
		// SASL on, so sasl requests run the DIGEST-MD5 exchange.
		cfg.SASL = &SASLConfig{Users: map[string]string{"bob": "pw"}}
		fuzzSrv.ts = newTestServer(t, cfg)
	})
	if fuzzSrv.ts == nil {
		t.Fatal("fuzz server failed to start")
	}
	return fuzzSrv.ts
}

func stopFuzzServer() {
	if ts := fuzzSrv.ts; ts != nil {
		if err := ts.shutdown(10 * time.Second); err != nil {
			panic(err)
		}
	}
}

// FuzzServerFrames writes arbitrary bytes after a valid handshake. Whatever
// they are, the server may answer or close that connection, but it must
// never crash, wedge the connection, or stop serving others.
func FuzzServerFrames(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ts := fuzzServer(t)
		c := newSession(t, ts.addr)
		// The server may close the connection before it has read all of
		// the input (after a bad length, say); a write cut short by that
		// close is fine.
		_ = c.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
		if _, err := c.nc.Write(in); err != nil && !isClosed(err) {
			t.Fatalf("write: %v", err)
		}
		// Half-close: the server reads our bytes, then EOF, and must close
		// the connection; a connection it keeps open is wedged.
		_ = c.nc.(interface{ CloseWrite() error }).CloseWrite()
		drainUntilClosed(t, c)
		c.close()
		checkServing(t, ts.addr)
	})
}

// drainUntilClosed reads whatever the server sends until it closes the
// connection; every frame must at least carry a reply header.
func drainUntilClosed(t *testing.T, c *rawClient) {
	t.Helper()
	for {
		_, err := c.tryReadReply()
		if err == nil {
			continue
		}
		if isClosed(err) {
			return
		}
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("server kept a half-closed connection open for %v", ioTimeout)
		}
		t.Fatalf("reading replies: %v", err)
	}
}

// checkServing asserts the server still answers a four-letter word and a
// fresh session's read.
func checkServing(t testing.TB, addr string) {
	t.Helper()
	if got := fourLetter(t, addr, "ruok"); got != "imok" {
		t.Fatalf("ruok answered %q", got)
	}
	// The fuzzer may have set an ACL on "/" that denies reads: NoAuth is
	// an answer too.
	c := newSession(t, addr)
	defer c.close()
	if h := c.call(jute.OpGetData, &jute.PathWatch{Path: "/"}, nil); h.Err != jute.OK && h.Err != jute.NoAuth {
		t.Fatalf("getData /: %v", h.Err)
	}
}

// fuzzSeeds are request streams, valid and broken, as a client would write
// them after the handshake.
func fuzzSeeds() [][]byte {
	req := func(xid int32, op jute.Op, rec jute.Record) []byte { return appendRequest(nil, xid, op, rec) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	create := createReq("/f", []byte("data"), jute.FlagPersistent)
	multi := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Op: jute.OpCreate, Record: createReq("/m", nil, jute.FlagEphemeral)},
		{Op: jute.OpSetData, Record: &jute.SetDataRequest{Path: "/m", Data: []byte("x"), Version: -1}},
		{Op: jute.OpCheck, Record: &jute.PathVersion{Path: "/m", Version: 1}},
		{Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/m", Version: -1}},
	}}
	multiRead := &jute.MultiRequest{Ops: []jute.MultiOp{
		{Op: jute.OpGetData, Record: &jute.PathWatch{Path: "/"}},
		{Op: jute.OpGetChildren, Record: &jute.PathWatch{Path: "/", Watch: true}},
	}}
	getData := req(1, jute.OpGetData, &jute.PathWatch{Path: "/", Watch: true})
	valid := [][]byte{
		getData,
		req(jute.XidPing, jute.OpPing, nil),
		cat(req(1, jute.OpSASL, &jute.SASLRequest{Token: []byte{}}), req(2, jute.OpSASL, &jute.SASLRequest{Token: []byte(
			`charset=utf-8,username="bob",realm="zk-sasl-md5",nonce="x",nc=00000001,cnonce="y",digest-uri="zookeeper/zk-sasl-md5",maxbuf=65536,response=0123456789abcdef0123456789abcdef,qop=auth`)})),
		cat(req(1, jute.OpCreate, create), req(2, jute.OpSetData, &jute.SetDataRequest{Path: "/f", Data: []byte("y"), Version: -1}),
			req(3, jute.OpGetData, &jute.PathWatch{Path: "/f"}), req(4, jute.OpDelete, &jute.PathVersion{Path: "/f", Version: -1})),
		req(1, jute.OpCreate2, createReq("/s-", nil, jute.FlagEphemeralSequential)),
		req(1, jute.OpCreateContainer, createReq("/c", nil, jute.FlagContainer)),
		req(1, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/t", ACL: openACL(), Flags: jute.FlagPersistentWithTTL, TTL: 1000}),
		req(1, jute.OpExists, &jute.PathWatch{Path: "/zookeeper", Watch: true}),
		req(1, jute.OpGetChildren2, &jute.PathWatch{Path: "/", Watch: true}),
		req(1, jute.OpGetACL, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpSetACL, &jute.SetACLRequest{Path: "/", ACL: openACL(), Version: -1}),
		req(1, jute.OpSync, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpMulti, multi),
		req(1, jute.OpMultiRead, multiRead),
		req(1, jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpGetEphemerals, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}),
		req(1, jute.OpRemoveWatches, &jute.WatchTypeRequest{Path: "/", Type: jute.WatcherAny}),
		req(1, jute.OpCheckWatches, &jute.WatchTypeRequest{Path: "/", Type: jute.WatcherData}),
		req(jute.XidSetWatches, jute.OpSetWatches, &jute.SetWatches{DataWatches: []string{"/"}, ChildWatches: []string{"/x"}}),
		req(jute.XidSetWatches, jute.OpSetWatches2, &jute.SetWatches2{PersistentWatches: []string{"/"}}),
		req(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}),
		req(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "nosuch", Auth: []byte("x")}),
		req(1, jute.OpWhoAmI, nil),
		req(1, jute.OpReconfig, &jute.ReconfigRequest{CurConfigID: -1}),
		cat(req(1, jute.OpCreate, createReq("/e", nil, jute.FlagEphemeral)), req(2, jute.OpCloseSession, nil), getData),
	}
	broken := [][]byte{
		{},
		frameHeader(-1),
		frameHeader(jute.DefaultMaxBuffer + 1),
		frameHeader(0),
		cat(frameHeader(4), []byte{0, 0, 0, 1}),
		getData[:len(getData)-3],
		cat(frameHeader(10), []byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0}),
		req(1, 999, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpDeleteContainer, &jute.PathRequest{Path: "/"}),
		req(1, jute.OpCreateSession, nil),
		req(1, jute.OpNotification, nil),
		req(1, jute.OpSASL, &jute.SASLRequest{Token: []byte("x")}),
		req(1, jute.OpMulti, multiRead),
		req(1, jute.OpMultiRead, multi),
		req(1, jute.OpGetData, &jute.PathWatch{Path: "no/slash"}),
		req(1, jute.OpCreate, createReq("/bad\x00path", nil, 0)),
		req(1, jute.OpCreate, createReq("/f", nil, 99)),
		req(1, jute.OpCreate, &jute.CreateRequest{Path: "/f", ACL: nil}),
		cat(req(1, jute.OpGetData, &jute.PathWatch{Path: "/"}), []byte("trailing")),
	}
	// A getData whose string length claims more than the frame holds.
	lie := bytes.Clone(getData)
	binary.BigEndian.PutUint32(lie[12:], 1000)
	broken = append(broken, lie)
	return append(valid, broken...)
}
