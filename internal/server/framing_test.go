package server

import (
	"bytes"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// frameTarget is a server with a known jute.maxbuffer.
type frameTarget struct {
	target
	maxFrame int
}

// frameTargets returns Zoo at the default limit and at a small one, and
// Apache (at its default) if configured.
func frameTargets(t *testing.T) []frameTarget {
	var out []frameTarget
	for _, tg := range targets(t) {
		out = append(out, frameTarget{tg, jute.DefaultMaxBuffer})
	}
	small := startServer(t, func(c *Config) { c.MaxFrame = 4096 })
	return append(out, frameTarget{target{name: "zoo-maxframe-4096", addr: small.addr, zoo: small}, 4096})
}

// A frame whose length is negative or above jute.maxbuffer closes that one
// connection, without a reply; the session lives on, and so does
// everyone else's. Ref: Apache NIOServerCnxn.readLength ("Len error").
func TestFrameLengthLimits(t *testing.T) {
	for _, tg := range frameTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			bystander := newSession(t, tg.addr)
			root := testRoot(t, bystander)
			bystander.mustCall(jute.OpGetData, &jute.PathWatch{Path: root, Watch: true}, nil, jute.OK)
			for _, tc := range []struct {
				name      string
				handshake bool // send the bad frame after a handshake
				bad       []byte
			}{
				{"over the limit", true, append(frameHeader(int32(tg.maxFrame)+1), make([]byte, 64)...)},
				{"far over the limit", true, frameHeader(0x7fffffff)},
				{"negative", true, frameHeader(-1)},
				{"most negative", true, append(frameHeader(-0x80000000), 1, 2, 3)},
				{"connect request over the limit", false, frameHeader(int32(tg.maxFrame) + 1)},
				{"negative connect request", false, frameHeader(-5)},
			} {
				t.Run(tc.name, func(t *testing.T) {
					defer bystander.bind(t)()
					victim := dialRaw(t, tg.addr)
					eph := root + "/victim"
					if tc.handshake {
						victim.handshake(connectReq(30000))
						victim.create(eph, nil, jute.FlagEphemeral)
					}
					victim.writeRaw(tc.bad)
					victim.expectClosedSilently()

					// Others keep working: a write, and the bystander's watch,
					// which fires before the write's reply.
					xid := bystander.send(jute.OpSetData, &jute.SetDataRequest{Path: root, Data: []byte(tc.name), Version: -1})
					ev := bystander.readReply()
					if ev.hdr.Xid != jute.XidNotification || ev.event(t).Path != root {
						t.Fatalf("bystander got %v, want its data watch on %s", ev, root)
					}
					if r := bystander.readReply(); r.hdr.Xid != xid || r.hdr.Err != jute.OK {
						t.Fatalf("setData answered %v", r)
					}
					bystander.mustCall(jute.OpGetData, &jute.PathWatch{Path: root, Watch: true}, nil, jute.OK)

					if !tc.handshake {
						return
					}
					// The closed connection's session survives: reattach.
					back := dialRaw(t, tg.addr)
					back.handshake(victim.reattachReq())
					if stat, ok := back.exists(eph); !ok || stat.EphemeralOwner != victim.sid {
						t.Fatalf("ephemeral after reattach: exists %v, owner %#x, want %#x", ok, stat.EphemeralOwner, victim.sid)
					}
					back.mustCall(jute.OpDelete, &jute.PathVersion{Path: eph, Version: -1}, nil, jute.OK)
				})
			}
		})
	}
}

// A frame exactly jute.maxbuffer long is accepted (the check is len >
// maxBuffer). Bytes after a request's record are ignored, as Apache's
// deserializers ignore them, so a padded getData is an ordinary getData.
func TestFrameAtTheLimit(t *testing.T) {
	for _, tg := range frameTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			c.create(root+"/n", []byte("padded"), jute.FlagPersistent)
			xid, frame := c.request(jute.OpGetData, &jute.PathWatch{Path: root + "/n"})
			pad := tg.maxFrame - (len(frame) - 4)
			frame = append(frame, make([]byte, pad)...)
			copy(frame, frameHeader(int32(tg.maxFrame)))
			c.writeRaw(frame)
			r := c.readReply()
			if r.hdr.Xid != xid || r.hdr.Err != jute.OK {
				t.Fatalf("padded getData answered %v", r)
			}
			var resp jute.GetDataResponse
			r.decode(t, &resp)
			if string(resp.Data) != "padded" {
				t.Fatalf("data %q", resp.Data)
			}
			c.getData("/") // still in step
		})
	}
}

// A request whose body ends early (getData with half a path, create
// without its flags) is answered with MarshallingError to its xid. The
// frame itself was whole, so the stream is still in step and the
// connection stays usable: Apache 3.8 keeps it (FinalRequestProcessor and
// PrepRequestProcessor turn the decoding exception into the error code).
func TestTruncatedBody(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			owner := newSession(t, tg.addr)
			root := testRoot(t, owner)
			for _, tc := range []struct {
				name string
				op   jute.Op
				rec  jute.Record
				cut  func(body []byte) []byte
			}{
				{"getData with half a path", jute.OpGetData, &jute.PathWatch{Path: "/zookeeper/quota"},
					func(b []byte) []byte { return b[:8+4+8] }},
				{"getData without its watch flag", jute.OpGetData, &jute.PathWatch{Path: "/"},
					func(b []byte) []byte { return b[:len(b)-1] }},
				{"create without flags", jute.OpCreate, createReq(root+"/t", []byte("abc"), 0),
					func(b []byte) []byte { return b[:len(b)-4] }},
				{"setData with a data length past the end", jute.OpSetData,
					&jute.SetDataRequest{Path: root, Data: []byte("abc"), Version: -1},
					func(b []byte) []byte { return b[:len(b)-6] }},
				{"header only", jute.OpExists, &jute.PathWatch{Path: "/"},
					func(b []byte) []byte { return b[:8] }},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := newSession(t, tg.addr)
					xid, full := c.request(tc.op, tc.rec)
					body := tc.cut(full[4:])
					c.writeRaw(append(frameHeader(int32(len(body))), body...))
					r := c.readReply()
					if r.hdr.Xid != xid || r.hdr.Err != jute.MarshallingError || len(r.body) != 0 {
						t.Fatalf("answered %v, want xid %d MarshallingError and no body", r, xid)
					}
					// The connection is still in step.
					xid = c.send(jute.OpExists, &jute.PathWatch{Path: "/"})
					if r, err := c.tryReadReply(); err != nil || r.hdr.Xid != xid || r.hdr.Err != jute.OK {
						t.Fatalf("after the MarshallingError, exists answered %v, %v; want the connection kept", r, err)
					}
				})
			}
			if _, ok := owner.exists(root + "/t"); ok {
				t.Error("a truncated create created its node")
			}
		})
	}
}

// A frame too short to hold a request header closes the connection without
// a reply.
func TestShortHeader(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			c.writeRaw(append(frameHeader(4), 0, 0, 0, 9))
			c.expectClosedSilently()
		})
	}
}

// An opcode the server does not know is answered with Unimplemented and
// zxid -1, and then the connection closes; the session lives on. Ref:
// Apache UnimplementedRequestProcessor (sendResponse, then
// sendCloseSession, which closes the connection only).
func TestUnknownOpcode(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			owner := newSession(t, tg.addr)
			root := testRoot(t, owner)
			for _, op := range []jute.Op{999, -7, 10, 23, jute.OpNotification} {
				t.Run(op.String(), func(t *testing.T) {
					c := newSession(t, tg.addr)
					eph := root + "/" + op.String()
					c.create(eph, nil, jute.FlagEphemeral)
					xid := c.send(op, &jute.PathRequest{Path: "/"})
					r := c.readReply()
					want := jute.ReplyHeader{Xid: xid, Zxid: -1, Err: jute.Unimplemented}
					if r.hdr != want || len(r.body) != 0 {
						t.Fatalf("op %d answered %v, want %+v with no body", op, r, want)
					}
					// A ping after the reply: a server that kept the
					// connection answers it, and the test fails at once
					// instead of waiting for a close. (Apache may answer a
					// ping pipelined behind the bad op, so send it after.)
					if _, err := c.nc.Write(c.requestFrame(jute.OpPing, nil)); err != nil && !isClosed(err) {
						t.Fatal(err)
					}
					c.expectClosedSilently()
					back := dialRaw(t, tg.addr)
					back.handshake(c.reattachReq())
					if _, ok := back.exists(eph); !ok {
						t.Fatal("session lost its ephemeral")
					}
				})
			}
		})
	}
}

// deleteContainer is an opcode only the server's container manager uses; a
// client that sends it gets BadArguments and nothing is deleted.
func TestDeleteContainerFromClient(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			c.mustCall(jute.OpCreate, createReq(root+"/c", nil, jute.FlagContainer), nil, jute.OK)
			c.mustCall(jute.OpDeleteContainer, &jute.PathRequest{Path: root + "/c"}, nil, jute.BadArguments)
			if _, ok := c.exists(root + "/c"); !ok {
				t.Fatal("container deleted by a client's deleteContainer")
			}
			c.getData("/")
		})
	}
}

// Requests pipelined behind a bad frame length in the same write are never
// answered: the stream cannot be trusted past it.
func TestNothingAnsweredAfterBadLength(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			xid, ok := c.request(jute.OpGetData, &jute.PathWatch{Path: "/"})
			_, after := c.request(jute.OpGetData, &jute.PathWatch{Path: "/"})
			c.writeRaw(bytes.Join([][]byte{ok, frameHeader(-1), after}, nil))
			// The reply to the good request may or may not make it out
			// before the close (neither Apache nor Zoo sends it); nothing
			// after the bad length may be answered.
			for _, r := range c.expectClosed() {
				if r.hdr.Xid != xid {
					t.Fatalf("got %v after a bad frame length", r)
				}
			}
		})
	}
}

// A server without SASL configured still answers a sasl request as Apache
// 3.8 does: OK with a null token, and the session goes on. (A Java client
// with a JAAS section sends one right after connecting.)
func TestSASLWithoutSASL(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			var resp jute.SASLResponse
			c.mustCall(jute.OpSASL, &jute.SASLRequest{Token: []byte("token")}, &resp, jute.OK)
			if resp.Token != nil {
				t.Errorf("token %q, want null", resp.Token)
			}
			c.getData("/")
		})
	}
}
