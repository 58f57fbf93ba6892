package peer

import (
	"bytes"
	"crypto/rand"
	"net"
	"testing"

	"github.com/zoohq/zoo/internal/auth/digestmd5"
)

// digestAuth is quorum SASL with DIGEST-MD5: the learner logs in as
// user/password, the server knows users.
func digestAuth(user, password string, users map[string]string, learnerReq, serverReq bool) *Auth {
	return &Auth{
		Learner: func() ClientMechanism {
			return digestmd5.NewClient(user, password, "zookeeper-quorum", "zk-quorum-sasl-md5", rand.Reader)
		},
		Server: func() ServerMechanism {
			return digestmd5.NewServer("zookeeper-quorum", "zk-quorum-sasl-md5", func(u string) (string, bool) {
				pw, ok := users[u]
				return pw, ok
			}, rand.Reader)
		},
		LearnerRequired: learnerReq,
		ServerRequired:  serverReq,
	}
}

var quorumUsers = map[string]string{"zkquorum": "secret"}

// withAuth gives server id its Auth from auths (nil: no quorum SASL).
func withAuth(auths map[uint64]*Auth) func(*Config) {
	return func(c *Config) { c.Auth = auths[c.ID] }
}

// TestQuorumSASL: with learnerRequireSasl and serverRequireSasl on every
// server, good credentials link all three; a server with a wrong password
// cannot link to the servers it dials, each refusal is logged on both
// sides, and the other two keep their link.
// Ref: Apache SaslQuorumAuthServer/SaslQuorumAuthLearner.
func TestQuorumSASL(t *testing.T) {
	checkLeaks(t)
	good := digestAuth("zkquorum", "secret", quorumUsers, true, true)
	nodes := mesh(t, 3, withAuth(map[uint64]*Auth{1: good, 2: good, 3: good}))
	waitConnected(t, nodes[0], nodes[1])
	waitConnected(t, nodes[0], nodes[2])
	waitConnected(t, nodes[1], nodes[2])
	nodes[2].tr.Send(1, msg(7, "hello"))
	if got := nodes[0].in.waitN(t, 3, 1); string(got[0].Data) != "hello" {
		t.Fatalf("got %q", got[0].Data)
	}
	waitFor(t, "authenticated log line", func() bool { return nodes[0].log.contains("quorum peer authenticated") })

	bad := digestAuth("zkquorum", "wrong", quorumUsers, true, true)
	nodes = mesh(t, 3, withAuth(map[uint64]*Auth{1: good, 2: good, 3: bad}))
	waitConnected(t, nodes[0], nodes[1])
	waitFor(t, "refusals logged", func() bool {
		return nodes[0].log.contains("quorum SASL authentication failed; refusing the peer") &&
			nodes[1].log.contains("quorum SASL authentication failed; refusing the peer") &&
			nodes[2].log.contains("refused our credentials")
	})
	if nodes[0].tr.Connected(3) || nodes[1].tr.Connected(3) || nodes[2].tr.Connected(1) {
		t.Fatal("a server with a wrong password linked")
	}
	nodes[1].tr.Send(1, msg(7, "still"))
	nodes[0].in.waitN(t, 2, 1)
}

// TestQuorumSASLRollingUpgrade: with enableSasl alone (nothing required)
// a wrong password and a server without SASL are logged and let in, as
// Apache's rolling-upgrade mode does; once serverRequireSasl is on, the
// server without SASL is refused before anything else.
func TestQuorumSASLRollingUpgrade(t *testing.T) {
	checkLeaks(t)
	soft := digestAuth("zkquorum", "secret", quorumUsers, false, false)
	softBad := digestAuth("zkquorum", "wrong", quorumUsers, false, false)
	nodes := mesh(t, 3, withAuth(map[uint64]*Auth{1: soft, 2: nil, 3: softBad}))
	waitConnected(t, nodes[0], nodes[1])
	waitConnected(t, nodes[0], nodes[2])
	waitConnected(t, nodes[1], nodes[2])
	waitFor(t, "warnings", func() bool {
		return nodes[0].log.contains("did not authenticate with SASL; letting it in") && // 2 dials 1 without SASL
			nodes[0].log.contains("authentication failed; letting the peer in") && // 3's wrong password
			nodes[2].log.contains("does not check SASL credentials; connecting anyway") && // 3 dials 2
			nodes[2].log.contains("refused our SASL credentials but lets us in")
	})

	required := digestAuth("zkquorum", "secret", quorumUsers, true, true)
	nodes = mesh(t, 2, withAuth(map[uint64]*Auth{1: required, 2: nil}))
	waitFor(t, "refusal", func() bool {
		return nodes[0].log.contains("refused a quorum peer that does not authenticate") &&
			nodes[1].log.contains("quorum SASL authentication required")
	})
	if nodes[0].tr.Connected(2) {
		t.Fatal("a peer without SASL linked to a server requiring it")
	}

	// learnerRequireSasl: the dialer refuses an acceptor that checks nothing.
	nodes = mesh(t, 2, withAuth(map[uint64]*Auth{1: nil, 2: digestAuth("zkquorum", "secret", quorumUsers, true, false)}))
	waitFor(t, "learner refusal", func() bool { return nodes[1].log.contains("does not run quorum SASL") })
	if nodes[1].tr.Connected(1) {
		t.Fatal("a learner requiring SASL linked to a server without it")
	}
}

// TestQuorumSASLGarbage: tokens out of order or garbage end that one
// connection, logged; the acceptor goes on.
func TestQuorumSASLGarbage(t *testing.T) {
	checkLeaks(t)
	required := digestAuth("zkquorum", "secret", quorumUsers, true, true)
	nodes := mesh(t, 2, withAuth(map[uint64]*Auth{1: required, 2: required}))
	waitConnected(t, nodes[0], nodes[1])
	for _, frames := range [][]struct {
		kind uint8
		data string
	}{
		{{kindSASLToken, ""}, {kindSASLToken, "username=\"x\",garbage"}},
		{{kindSASLResult, "\x00"}},
		{{kindSASLToken, ""}, {kindSASLToken, "\xff\xfe"}},
	} {
		r, st := dialRaw(t, nodes[0].tr.Addr().String(), hello{version: protoVersion, typ: connLink, from: 2, to: 1, flags: flagSASL})
		if st != ackOK {
			t.Fatalf("ack %v", st)
		}
		for _, f := range frames {
			if err := writeFrame(r, f.kind, []byte(f.data)); err != nil {
				break
			}
		}
		r.waitClosed(t)
	}
	waitFor(t, "logged", func() bool { return nodes[0].log.contains("quorum SASL authentication failed; refusing the peer") })
	nodes[1].tr.Send(1, msg(7, "alive"))
	nodes[0].in.waitN(t, 2, 1)
}

// scriptConn reads a fixed script and discards what is written.
type scriptConn struct {
	net.Conn
	r *bytes.Reader
}

func (c scriptConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c scriptConn) Write(p []byte) (int, error) { return len(p), nil }
func (c scriptConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

func saslTransport(t testing.TB, a *Auth) *Transport {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Config{ID: 1, Listener: ln, Handler: func(uint64, Message) {}, Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// FuzzQuorumSASLAccept: whatever a dialer sends, the acceptor's exchange
// ends without a panic, and lets a peer in with required SASL only after
// a real login.
func FuzzQuorumSASLAccept(f *testing.F) {
	f.Add(appendFrame(nil, kindSASLToken, nil))
	f.Add(append(appendFrame(nil, kindSASLToken, nil), appendFrame(nil, kindSASLToken, []byte(`username="zkquorum",nonce="x",cnonce="y",nc=00000001,digest-uri="zookeeper-quorum/zk-quorum-sasl-md5",response=00`))...))
	f.Add(appendFrame(nil, kindSASLResult, []byte{0}))
	f.Add([]byte{0, 0, 0, 1})
	tr := saslTransport(f, digestAuth("zkquorum", "secret", quorumUsers, true, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tr.authAccept(scriptConn{r: bytes.NewReader(data)}, hello{from: 2, flags: flagSASL}) {
			t.Fatal("let in without the password")
		}
	})
}

// FuzzQuorumSASLDial: whatever an acceptor answers, the dialer's exchange
// ends without a panic, and with learnerRequireSasl it succeeds only if
// the acceptor proved it knows the password.
func FuzzQuorumSASLDial(f *testing.F) {
	f.Add(appendFrame(nil, kindSASLResult, []byte{saslOK}))
	f.Add(appendFrame(nil, kindSASLResult, []byte{saslAllowed, 'x'}))
	f.Add(appendFrame(nil, kindSASLResult, []byte{saslRefused}))
	f.Add(append(appendFrame(nil, kindSASLToken, []byte(`realm="zk-quorum-sasl-md5",nonce="abc",charset=utf-8,algorithm=md5-sess`)),
		appendFrame(nil, kindSASLResult, []byte("\x00rspauth=0123"))...))
	tr := saslTransport(f, digestAuth("zkquorum", "secret", quorumUsers, true, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := tr.authDial(scriptConn{r: bytes.NewReader(data)}, 2, flagSASL); err == nil {
			t.Fatal("accepted an acceptor that did not prove itself")
		}
	})
}
