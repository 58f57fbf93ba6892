package server

import (
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/digestmd5"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/zktest"
)

// saslJAAS is the JAAS file both Zoo's and Apache's servers log in with.
const saslJAAS = `Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_bob="bobsecret"
    user_admin="adminsecret";
};
`

// saslTargets returns a Zoo server and, when Java and Apache 3.8 are
// installed, an Apache server, both with saslJAAS's users, the SASL
// provider, superUser=admin, and SASL enforced when enforce is set.
func saslTargets(t *testing.T, enforce bool) []target {
	t.Helper()
	return saslTargetsWith(t, enforce, false)
}

// saslTargetsWith is saslTargets, with allowSaslFailedClients if
// allowFailed.
func saslTargetsWith(t *testing.T, enforce, allowFailed bool) []target {
	t.Helper()
	j, err := auth.ParseJAAS("jaas.conf", []byte(saslJAAS))
	if err != nil {
		t.Fatal(err)
	}
	z := startServer(t, func(c *Config) {
		c.SASL = &SASLConfig{Users: j.Section(auth.SectionServer).DigestUsers(), SuperUser: "admin", AllowFailed: allowFailed}
		if enforce {
			c.EnforceAuthSchemes = []string{"sasl"}
		}
	})
	ts := []target{{name: "zoo", addr: z.addr, zoo: z}}
	a := zktest.Apache{JAAS: saslJAAS, JVMFlags: []string{"-Dzookeeper.superUser=admin"},
		Extra: []string{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}}
	if enforce {
		a.Extra = append(a.Extra, "sessionRequireClientSASLAuth=true")
	}
	if allowFailed {
		a.Extra = append(a.Extra, "allowSaslFailedClients=true")
	}
	srv, err := a.Start(t.TempDir())
	switch {
	case errors.Is(err, zktest.ErrUnavailable):
		t.Logf("Apache not run: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(srv.Stop)
		ts = append(ts, target{name: "apache", addr: srv.Addr})
	}
	return ts
}

// saslLogin runs a DIGEST-MD5 exchange as user; it returns the code of
// the first failed step, or OK.
func (c *rawClient) saslLogin(user, password string) jute.Code {
	c.t.Helper()
	cl := digestmd5.NewClient(user, password, digestmd5.Service, digestmd5.Host, rand.Reader)
	var challenge []byte
	for {
		tok, err := cl.Step(challenge)
		if err != nil {
			c.t.Fatalf("client step: %v", err)
		}
		if cl.Complete() {
			return jute.OK
		}
		var resp jute.SASLResponse
		if h := c.call(jute.OpSASL, &jute.SASLRequest{Token: tok}, &resp); h.Err != jute.OK {
			return h.Err
		}
		challenge = resp.Token
	}
}

func (c *rawClient) whoAmI() []jute.ClientInfo {
	c.t.Helper()
	var resp jute.WhoAmIResponse
	c.mustCall(jute.OpWhoAmI, nil, &resp, jute.OK)
	return resp.ClientInfo
}

func TestSASLDigestMD5(t *testing.T) {
	for _, tg := range saslTargets(t, false) {
		t.Run(tg.name, func(t *testing.T) {
			// Java's server ignores an initial token and sends its
			// challenge.
			var ch jute.SASLResponse
			newSession(t, tg.addr).mustCall(jute.OpSASL, &jute.SASLRequest{Token: []byte("\x00garbage")}, &ch, jute.OK)
			if !strings.HasPrefix(string(ch.Token), `realm="zk-sasl-md5",nonce="`) || !strings.HasSuffix(string(ch.Token), `",charset=utf-8,algorithm=md5-sess`) {
				t.Errorf("challenge %q", ch.Token)
			}
			bob := newSession(t, tg.addr)
			if code := bob.saslLogin("bob", "bobsecret"); code != jute.OK {
				t.Fatalf("login: %v", code)
			}
			// In the order of Apache's set of ids.
			if got, want := bob.whoAmI(), []jute.ClientInfo{{AuthScheme: "sasl", User: "bob"}, {AuthScheme: "ip", User: "127.0.0.1"}}; !slices.Equal(got, want) {
				t.Errorf("whoAmI = %v, want %v", got, want)
			}
			// A node only bob may read, by sasl ACL and by auth expansion.
			root := testRoot(t, bob)
			for i, a := range []jute.ACL{
				{Perms: jute.PermAll, ID: jute.Id{Scheme: "sasl", ID: "bob"}},
				{Perms: jute.PermAll, ID: jute.Id{Scheme: "auth", ID: ""}},
			} {
				p := root + "/" + string(rune('a'+i))
				bob.mustCall(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: []jute.ACL{a}}, &jute.CreateResponse{}, jute.OK)
				var acls jute.GetACLResponse
				bob.mustCall(jute.OpGetACL, &jute.PathRequest{Path: p}, &acls, jute.OK)
				if want := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "sasl", ID: "bob"}}}; !slices.Equal(acls.ACL, want) {
					t.Errorf("ACL of %s = %v, want %v", p, acls.ACL, want)
				}
				bob.getData(p)
				other := newSession(t, tg.addr)
				other.mustCall(jute.OpGetData, &jute.PathWatch{Path: p}, nil, jute.NoAuth)
				admin := newSession(t, tg.addr)
				if code := admin.saslLogin("admin", "adminsecret"); code != jute.OK {
					t.Fatalf("admin login: %v", code)
				}
				admin.getData(p) // superUser=admin
			}
			bob.mustCall(jute.OpCreate, &jute.CreateRequest{Path: root + "/bad", ACL: []jute.ACL{
				{Perms: jute.PermAll, ID: jute.Id{Scheme: "sasl", ID: "a/b/c@R"}}}}, nil, jute.InvalidACL)
		})
	}
}

func TestSASLFailuresCloseTheConnection(t *testing.T) {
	for _, tg := range saslTargets(t, false) {
		t.Run(tg.name, func(t *testing.T) {
			for name, run := range map[string]func(c *rawClient) jute.Code{
				"wrong password": func(c *rawClient) jute.Code { return c.saslLogin("bob", "guess") },
				// Not bob's password: Apache's callback handler remembers
				// the last user it found across connections, and would
				// take eve with bob's password.
				"unknown user": func(c *rawClient) jute.Code { return c.saslLogin("eve", "evesecret") },
				"garbage response": func(c *rawClient) jute.Code {
					c.mustCall(jute.OpSASL, &jute.SASLRequest{Token: []byte{}}, &jute.SASLResponse{}, jute.OK)
					return c.call(jute.OpSASL, &jute.SASLRequest{Token: []byte(`username="bob",,=`)}, &jute.SASLResponse{}).Err
				},
				"token after success": func(c *rawClient) jute.Code {
					if code := c.saslLogin("bob", "bobsecret"); code != jute.OK {
						t.Fatalf("login: %v", code)
					}
					return c.call(jute.OpSASL, &jute.SASLRequest{Token: []byte{}}, &jute.SASLResponse{}).Err
				},
			} {
				t.Run(name, func(t *testing.T) {
					c := newSession(t, tg.addr)
					defer c.bind(t)()
					if code := run(c); code != jute.AuthFailed {
						t.Errorf("code %v, want AuthFailed", code)
					}
					c.expectClosedSilently()
				})
			}
		})
	}
}

func TestSASLEnforced(t *testing.T) {
	for _, tg := range saslTargets(t, true) {
		t.Run(tg.name, func(t *testing.T) {
			for _, op := range []jute.Op{jute.OpGetData, jute.OpCreate, jute.OpPing, jute.OpWhoAmI} {
				c := newSession(t, tg.addr)
				var rec jute.Record
				switch op {
				case jute.OpGetData:
					rec = &jute.PathWatch{Path: "/"}
				case jute.OpCreate:
					rec = createReq("/enforced", nil, 0)
				}
				if h := c.call(op, rec, nil); h.Err != jute.SessionClosedRequireSaslAuth {
					t.Errorf("%v before SASL: %v, want SessionClosedRequireSaslAuth", op, h.Err)
				}
				c.expectClosedSilently()
			}
			c := newSession(t, tg.addr)
			if code := c.saslLogin("bob", "wrong"); code != jute.SessionClosedRequireSaslAuth {
				t.Errorf("wrong password: %v, want SessionClosedRequireSaslAuth", code)
			}
			c.expectClosedSilently()
			c = newSession(t, tg.addr)
			if code := c.saslLogin("bob", "bobsecret"); code != jute.OK {
				t.Fatalf("login: %v", code)
			}
			c.getData("/")
		})
	}
}

// Many clients authenticating at once each get their own exchange.
func TestSASLConcurrentLogins(t *testing.T) {
	z := startServer(t, func(c *Config) {
		c.SASL = &SASLConfig{Users: map[string]string{"bob": "bobsecret", "admin": "adminsecret"}}
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newSession(t, z.addr)
			user, pw := "bob", "bobsecret"
			if i%2 == 1 {
				user, pw = "admin", "adminsecret"
			}
			if code := c.saslLogin(user, pw); code != jute.OK {
				t.Errorf("%s: %v", user, code)
			}
		}()
	}
	wg.Wait()
}

// allowSaslFailedClients keeps the connection of a client whose exchange
// failed: the failing step is answered OK with a null token, and the
// session goes on without a sasl id.
func TestSASLAllowFailedClients(t *testing.T) {
	for _, tg := range saslTargetsWith(t, false, true) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			var ch jute.SASLResponse
			c.mustCall(jute.OpSASL, &jute.SASLRequest{Token: []byte{}}, &ch, jute.OK)
			var resp jute.SASLResponse
			c.mustCall(jute.OpSASL, &jute.SASLRequest{Token: []byte(`username="bob",garbage`)}, &resp, jute.OK)
			if resp.Token != nil {
				t.Errorf("token %q after a failed step, want null", resp.Token)
			}
			c.getData("/")
			for _, id := range c.whoAmI() {
				if id.AuthScheme == "sasl" {
					t.Errorf("a failed client got %v", id)
				}
			}
		})
	}
}
