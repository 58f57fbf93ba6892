package zk

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	zooserver "github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest"
)

// saslJAAS is the JAAS file of both servers of the SASL tests.
const saslJAAS = `Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_bob="bobsecret";
};
`

// saslServers starts Zoo and (when installed) Apache 3.8 with saslJAAS's
// users, the SASL provider, and SASL required of every session.
func saslServers(t *testing.T) map[string]string {
	t.Helper()
	srv, err := zooserver.New(zooserver.Config{
		Logger:             slog.New(slog.DiscardHandler),
		SASL:               &zooserver.SASLConfig{Users: map[string]string{"bob": "bobsecret"}},
		EnforceAuthSchemes: []string{"sasl"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		<-served
	})
	addrs := map[string]string{"zoo": ln.Addr().String()}
	a, err := zktest.Apache{JAAS: saslJAAS, Extra: []string{
		"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"sessionRequireClientSASLAuth=true",
	}}.Start(t.TempDir())
	switch {
	case errors.Is(err, zktest.ErrUnavailable):
		t.Logf("Apache not run: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(a.Stop)
		addrs["apache"] = a.Addr
	}
	return addrs
}

func TestSASLDigestMD5(t *testing.T) {
	for name, addr := range saslServers(t) {
		t.Run(name, func(t *testing.T) {
			c, err := Connect(ctx(t), addr, WithSASL("bob", "bobsecret"), WithLogger(testLogger(t)))
			must(t, "connect", err)
			defer c.Close()
			ids, err := c.WhoAmI(ctx(t))
			must(t, "whoAmI", err)
			if !slices.Contains(ids, ClientInfo{AuthScheme: "sasl", User: "bob"}) {
				t.Errorf("whoAmI = %v, want sasl bob", ids)
			}
			p := "/sasl-" + name
			_, _, err = c.Create(ctx(t), p, nil, Persistent, CreatorAllACL())
			must(t, "create", err)
			acl, _, err := c.GetACL(ctx(t), p)
			must(t, "getACL", err)
			if want := []ACL{{Perms: PermAll, Scheme: "sasl", ID: "bob"}}; !slices.Equal(acl, want) {
				t.Errorf("ACL = %v, want %v", acl, want)
			}
			must(t, "delete", c.Delete(ctx(t), p, -1))

			// The wrong password ends the Client at once.
			_, err = Connect(ctx(t), addr, WithSASL("bob", "guess"), WithLogger(testLogger(t)))
			if !errors.Is(err, ErrAuthFailed) {
				t.Errorf("connect with a wrong password: %v, want ErrAuthFailed", err)
			}
		})
	}
}
