package digestmd5

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
)

// RFC 2831 section 4's examples: IMAP and ACAP logins of chris/secret.
var rfc2831Vectors = []struct {
	nonce, cnonce, uri, response, rspauth string
}{
	{"OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk", "imap/elwood.innosoft.com", "d388dad90d4bbd760a152321f2143af7", "ea40f60335c427b5527b84dbabcdfffd"},
	{"OA9BSXrbuRhWay", "OA9BSuZWMSpW8m", "acap/elwood.innosoft.com", "6084c6db3fede7352c551284490fd0fc", "2f0b3d7c3c2e486600ef710726aa2eae"},
}

func chrisPassword(user string) (string, bool) { return "secret", user == "chris" }

// rfcServer is a server that has sent the RFC example's challenge.
func rfcServer(nonce, uri string) *Server {
	service, host, _ := strings.Cut(uri, "/")
	s := NewServer(service, host, chrisPassword, rand.Reader)
	s.realm, s.nonce, s.step = "elwood.innosoft.com", nonce, 1
	return s
}

func TestDigestMD5RFC2831Vectors(t *testing.T) {
	for _, v := range rfc2831Vectors {
		k := digestKey{user: "chris", realm: "elwood.innosoft.com", password: "secret", nonce: v.nonce,
			cnonce: v.cnonce, nc: "00000001", uri: v.uri}
		if got := k.response("AUTHENTICATE:"); got != v.response {
			t.Errorf("%s: response = %s, want %s", v.uri, got, v.response)
		}
		if got := k.response(":"); got != v.rspauth {
			t.Errorf("%s: rspauth = %s, want %s", v.uri, got, v.rspauth)
		}
		// The server accepts the RFC's digest-response as sent on the wire.
		s := rfcServer(v.nonce, v.uri)
		token := `charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="` + v.nonce +
			`",nc=00000001,cnonce="` + v.cnonce + `",digest-uri="` + v.uri + `",response=` + v.response + `,qop=auth`
		got, err := s.Step([]byte(token))
		if err != nil || string(got) != "rspauth="+v.rspauth || !s.Complete() || s.User() != "chris" {
			t.Errorf("%s: server Step = %q, %v; complete %v user %q", v.uri, got, err, s.Complete(), s.User())
		}
	}
}

// exchange runs a client against a server and returns the server.
func exchange(t *testing.T, user, password string, users map[string]string) (*Server, error) {
	t.Helper()
	lookup := func(u string) (string, bool) { p, ok := users[u]; return p, ok }
	s := NewServer(Service, Host, lookup, rand.Reader)
	c := NewClient(user, password, Service, Host, rand.Reader)
	var challenge []byte
	for !c.Complete() {
		tok, err := c.Step(challenge)
		if err != nil {
			return s, err
		}
		if c.Complete() {
			break
		}
		if challenge, err = s.Step(tok); err != nil {
			return s, err
		}
	}
	return s, nil
}

func TestDigestMD5Exchange(t *testing.T) {
	users := map[string]string{"bob": "bob's secret", "jösé": "pässwörd"}
	for user, pw := range users {
		s, err := exchange(t, user, pw, users)
		if err != nil || !s.Complete() || s.User() != user || s.AuthzID() != user {
			t.Errorf("%s: err %v, complete %v, user %q authz %q", user, err, s.Complete(), s.User(), s.AuthzID())
		}
	}
	for _, tc := range []struct{ user, pw string }{{"bob", "wrong"}, {"alice", "bob's secret"}} {
		s, err := exchange(t, tc.user, tc.pw, users)
		if !errors.Is(err, ErrFailed) || s.Complete() {
			t.Errorf("%s/%s: err %v, complete %v; want ErrFailed", tc.user, tc.pw, err, s.Complete())
		}
	}
}

// TestDigestMD5ClientChecksServer: a server that does not know the
// password cannot fake rspauth.
func TestDigestMD5ClientChecksServer(t *testing.T) {
	c := NewClient("bob", "pw", Service, Host, rand.Reader)
	_, _ = c.Step(nil)
	if _, err := c.Step([]byte(`realm="zk-sasl-md5",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step([]byte("rspauth=00000000000000000000000000000000")); !errors.Is(err, ErrFailed) || c.Complete() {
		t.Errorf("forged rspauth: err %v complete %v", err, c.Complete())
	}
}

func TestDigestMD5ServerRejects(t *testing.T) {
	users := func(u string) (string, bool) { return "pw", u == "bob" }
	// A good response to build bad ones from.
	good := func(s *Server) string {
		c := NewClient("bob", "pw", Service, Host, rand.Reader)
		_, _ = c.Step(nil)
		ch, err := s.Step(nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := c.Step(ch)
		if err != nil {
			t.Fatal(err)
		}
		return string(tok)
	}
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"garbage", func(string) string { return "\x00\xff garbage" }},
		{"wrong uri", func(s string) string { return strings.Replace(s, "zookeeper/zk-sasl-md5", "imap/zk-sasl-md5", 1) }},
		{"wrong realm", func(s string) string { return strings.Replace(s, `realm="zk-sasl-md5"`, `realm="other"`, 1) }},
		{"no realm", func(s string) string { return strings.Replace(s, `realm="zk-sasl-md5",`, "", 1) }},
		{"nonce count 2", func(s string) string { return strings.Replace(s, "nc=00000001", "nc=00000002", 1) }},
		{"qop auth-int", func(s string) string { return strings.Replace(s, "qop=auth", "qop=auth-int", 1) }},
		{"no response", func(s string) string { return s[:strings.Index(s, ",response=")] }},
		{"duplicate username", func(s string) string { return s + `,username="bob"` }},
		{"changed authzid", func(s string) string { return strings.Replace(s, `authzid="bob"`, `authzid="super"`, 1) }},
		{"bad charset", func(s string) string { return strings.Replace(s, "charset=utf-8", "charset=koi8-r", 1) }},
		{"too long", func(s string) string { return s + "," + strings.Repeat("x=y,", 1100) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(Service, Host, users, rand.Reader)
			tok := tc.edit(good(s))
			if _, err := s.Step([]byte(tok)); !errors.Is(err, ErrFailed) || s.Complete() {
				t.Errorf("Step(%q) = %v, complete %v; want ErrFailed", tok, err, s.Complete())
			}
			if _, err := s.Step(nil); !errors.Is(err, ErrFailed) {
				t.Errorf("a failed exchange went on: %v", err)
			}
		})
	}
}

func TestDigestMD5ServerOutOfOrder(t *testing.T) {
	users := func(u string) (string, bool) { return "pw", u == "bob" }
	s := NewServer(Service, Host, users, rand.Reader)
	// A response before the challenge is ignored, as Java's server does:
	// the client gets the challenge and has not authenticated.
	if ch, err := s.Step([]byte(`username="bob"`)); err != nil || !bytes.HasPrefix(ch, []byte(`realm="zk-sasl-md5",nonce=`)) || s.Complete() {
		t.Errorf("a response before the challenge: %q, %v, complete %v", ch, err, s.Complete())
	}
	s, err := exchange(t, "bob", "pw", map[string]string{"bob": "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(nil); !errors.Is(err, ErrFailed) {
		t.Errorf("a token after completion: %v", err)
	}
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives([]byte(` a = b ,, C="x\"y, z" ,d=e`))
	if err != nil || len(d) != 3 || d["a"] != "b" || d["c"] != `x"y, z` || d["d"] != "e" {
		t.Errorf("parseDirectives = %q, %v", d, err)
	}
	for _, bad := range []string{`a`, `a="b`, `=b`, `a=b c=d`, `a="b\`} {
		if _, err := parseDirectives([]byte(bad)); !errors.Is(err, ErrFailed) {
			t.Errorf("parseDirectives(%q) = %v, want ErrFailed", bad, err)
		}
	}
}

func FuzzDigestMD5Server(f *testing.F) {
	for _, v := range rfc2831Vectors {
		f.Add([]byte(`charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="` + v.nonce +
			`",nc=00000001,cnonce="` + v.cnonce + `",digest-uri="` + v.uri + `",response=` + v.response + `,qop=auth`))
	}
	f.Add([]byte(`a="\"",,b=c`))
	f.Fuzz(func(t *testing.T, token []byte) {
		s := rfcServer(rfc2831Vectors[0].nonce, rfc2831Vectors[0].uri)
		rsp, err := s.Step(token)
		if err != nil {
			if !errors.Is(err, ErrFailed) || s.Complete() {
				t.Fatalf("err %v complete %v", err, s.Complete())
			}
			return
		}
		if !s.Complete() || !bytes.HasPrefix(rsp, []byte("rspauth=")) {
			t.Fatalf("accepted %q without completing: %q", token, rsp)
		}
		c := NewClient("x", "y", "a", "b", bytes.NewReader(make([]byte, 24)))
		_, _ = c.Step(nil)
		_, _ = c.Step(token)
	})
}
