package zk

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"
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
	zooAddr, stop := serveZoo(t, zooserver.Config{
		Logger:             slog.New(slog.DiscardHandler),
		SASL:               &zooserver.SASLConfig{Users: map[string]string{"bob": "bobsecret"}},
		EnforceAuthSchemes: []string{"sasl"},
	})
	t.Cleanup(stop)
	addrs := map[string]string{"zoo": zooAddr}
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

// TestSASLKerberos: WithKerberos logs in with a keytab from a KDC the test
// starts, to Zoo and Apache 3.8 with the same realm, and gets the sasl id
// of its principal.
func TestSASLKerberos(t *testing.T) {
	k, err := zktest.StartKDC(t.TempDir(), "zookeeper/localhost", "client")
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	principal := "zookeeper/localhost@" + zktest.Realm
	kt, err := keytab.Load(k.Keytab("zookeeper/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	zooAddr, stop := serveZoo(t, zooserver.Config{
		Logger: slog.New(slog.DiscardHandler),
		SASL:   &zooserver.SASLConfig{Keytab: kt, Principal: principal},
	})
	t.Cleanup(stop)
	addrs := map[string]string{"zoo": zooAddr}
	jaas := fmt.Sprintf("Server {\n com.sun.security.auth.module.Krb5LoginModule required\n useKeyTab=true keyTab=%q storeKey=true useTicketCache=false principal=%q;\n};\n",
		k.Keytab("zookeeper/localhost"), principal)
	a, err := zktest.Apache{JAAS: jaas, JVMFlags: []string{"-Djava.security.krb5.conf=" + k.Krb5Conf},
		Extra: []string{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}}.Start(t.TempDir())
	switch {
	case errors.Is(err, zktest.ErrUnavailable):
		t.Logf("Apache not run: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(a.Stop)
		addrs["apache"] = a.Addr
	}
	for name, addr := range addrs {
		t.Run(name, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(addr)
			krb := Kerberos{Krb5Conf: k.Krb5Conf, Keytab: k.Keytab("client"), Principal: "client@" + zktest.Realm}
			c, err := Connect(ctx(t), "localhost:"+port, WithKerberos(krb), WithLogger(testLogger(t)))
			must(t, "connect", err)
			defer c.Close()
			ids, err := c.WhoAmI(ctx(t))
			must(t, "whoAmI", err)
			if !slices.Contains(ids, ClientInfo{AuthScheme: "sasl", User: "client@" + zktest.Realm}) {
				t.Errorf("whoAmI = %v, want sasl client@%s", ids, zktest.Realm)

			}
			// Another client's keytab does not hold this principal's key.
			bad := krb
			bad.Keytab = k.Keytab("zookeeper/localhost")
			if _, err := Connect(ctx(t), "localhost:"+port, WithKerberos(bad), WithLogger(testLogger(t))); !errors.Is(err, ErrAuthFailed) {
				t.Errorf("connect with the wrong keytab: %v, want ErrAuthFailed", err)
			}
		})
	}
}
