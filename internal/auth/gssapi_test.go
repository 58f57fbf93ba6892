package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/zoohq/zoo/internal/zktest"
)

// gssFixture is a realm with the server's keytab and a logged-in client.
type gssFixture struct {
	serverKT *keytab.Keytab
	cl       *client.Client
}

func newGSSFixture(t *testing.T) gssFixture {
	t.Helper()
	k, err := zktest.StartKDC(t.TempDir(), "zookeeper/localhost", "client")
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	skt, err := keytab.Load(k.Keytab("zookeeper/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	ckt, err := keytab.Load(k.Keytab("client"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(k.Krb5Conf)
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithKeytab("client", zktest.Realm, ckt, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Destroy)
	return gssFixture{serverKT: skt, cl: cl}
}

// apReq returns an initial GSS token for zookeeper/localhost and the
// session key, asking for mutual authentication if mutual.
func (f gssFixture) apReq(t *testing.T, mutual bool) ([]byte, types.EncryptionKey, spnego.KRB5Token) {
	t.Helper()
	tkt, key, err := f.cl.GetServiceTicket("zookeeper/localhost")
	if err != nil {
		t.Fatal(err)
	}
	gssFlags, apOpts := []int{gssapi.ContextFlagInteg}, []int(nil)
	if mutual {
		gssFlags, apOpts = append(gssFlags, gssapi.ContextFlagMutual), []int{flags.APOptionMutualRequired}
	}
	tok, err := spnego.NewKRB5TokenAPREQ(f.cl, tkt, key, gssFlags, apOpts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tok.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b, key, tok
}

// finish runs the RFC 4752 security-layer exchange from the client side.
func finish(t *testing.T, s *GSSAPIServer, offer []byte, key types.EncryptionKey) {
	t.Helper()
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(offer, true); err != nil {
		t.Fatal(err)
	}
	if ok, err := wt.Verify(key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		t.Fatalf("server's wrap token does not verify: %v", err)
	}
	if len(wt.Payload) != 4 || wt.Payload[0] != layerNone {
		t.Fatalf("offer %x, want no security layer", wt.Payload)
	}
	answer, err := gssapi.NewInitiatorWrapToken(append([]byte{layerNone, 0, 0, 0}, "client@EXAMPLE.COM"...), key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := answer.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Step(b); err != nil || out != nil {
		t.Fatalf("last step: %q, %v", out, err)
	}
	if !s.Complete() || s.User() != "client@"+zktest.Realm {
		t.Fatalf("complete %v, user %q", s.Complete(), s.User())
	}
	if _, err := s.Step(nil); !errors.Is(err, ErrGSSAPI) {
		t.Errorf("a token after completion: %v", err)
	}
}

func TestGSSAPIServer(t *testing.T) {
	f := newGSSFixture(t)
	t.Run("without mutual authentication", func(t *testing.T) {
		tok, key, _ := f.apReq(t, false)
		s := NewGSSAPIServer(f.serverKT, "zookeeper/localhost", time.Now)
		offer, err := s.Step(tok)
		if err != nil {
			t.Fatal(err)
		}
		finish(t, s, offer, key)
	})
	t.Run("mutual authentication", func(t *testing.T) {
		tok, key, req := f.apReq(t, true)
		s := NewGSSAPIServer(f.serverKT, "zookeeper/localhost", time.Now)
		rep, err := s.Step(tok)
		if err != nil {
			t.Fatal(err)
		}
		// The AP-REP decrypts with the session key and echoes the
		// authenticator's time (RFC 4120 section 3.2.4).
		var rt spnego.KRB5Token
		if err := rt.Unmarshal(rep); err != nil || !rt.IsAPRep() {
			t.Fatalf("reply is not an AP-REP token: %v", err)
		}
		plain, err := crypto.DecryptEncPart(rt.APRep.EncPart, key, keyusage.AP_REP_ENCPART)
		if err != nil {
			t.Fatal(err)
		}
		var part messages.EncAPRepPart
		if err := part.Unmarshal(plain); err != nil {
			t.Fatal(err)
		}
		if err := req.APReq.DecryptAuthenticator(key); err != nil {
			t.Fatal(err)
		}
		if a := req.APReq.Authenticator; !part.CTime.Equal(a.CTime) || part.Cusec != a.Cusec {
			t.Errorf("AP-REP time %v.%d, authenticator's %v.%d", part.CTime, part.Cusec, a.CTime, a.Cusec)
		}
		offer, err := s.Step([]byte{})
		if err != nil {
			t.Fatal(err)
		}
		finish(t, s, offer, key)
	})
	t.Run("rejects", func(t *testing.T) {
		for name, step := range map[string]func(s *GSSAPIServer) error{
			"garbage": func(s *GSSAPIServer) error { _, err := s.Step([]byte("\x60\x03garbage")); return err },
			"empty":   func(s *GSSAPIServer) error { _, err := s.Step(nil); return err },
			"wrong service principal": func(*GSSAPIServer) error {
				tok, _, _ := f.apReq(t, false)
				_, err := NewGSSAPIServer(f.serverKT, "zookeeper/otherhost", time.Now).Step(tok)
				return err
			},
			"replayed AP-REQ": func(s *GSSAPIServer) error {
				tok, _, _ := f.apReq(t, false)
				if _, err := NewGSSAPIServer(f.serverKT, "zookeeper/localhost", time.Now).Step(tok); err != nil {
					t.Fatal(err)
				}
				_, err := s.Step(tok)
				return err
			},
			"forged answer": func(s *GSSAPIServer) error {
				tok, key, _ := f.apReq(t, false)
				if _, err := s.Step(tok); err != nil {
					t.Fatalf("a fresh AP-REQ: %v", err)
				}
				other := types.EncryptionKey{KeyType: key.KeyType, KeyValue: make([]byte, len(key.KeyValue))}
				w, err := gssapi.NewInitiatorWrapToken([]byte{layerNone, 0, 0, 0}, other)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := w.Marshal()
				_, err = s.Step(b)
				return err
			},
		} {
			s := NewGSSAPIServer(f.serverKT, "zookeeper/localhost", time.Now)
			if err := step(s); !errors.Is(err, ErrGSSAPI) || s.Complete() {
				t.Errorf("%s: %v, complete %v; want ErrGSSAPI", name, err, s.Complete())
			}
		}
	})
}

func FuzzGSSAPIServer(f *testing.F) {
	f.Add([]byte("\x60\x03garbage"))
	f.Add([]byte{0x60, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01, 0x00})
	kt := keytab.New()
	f.Fuzz(func(t *testing.T, token []byte) {
		s := NewGSSAPIServer(kt, "zookeeper/localhost", time.Now)
		if _, err := s.Step(token); err == nil || !errors.Is(err, ErrGSSAPI) {
			t.Fatalf("an empty keytab accepted %x: %v", token, err)
		}
	})
}
