package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zoohq/zoo/internal/zktest"
)

// startKDC starts an MIT KDC with the server's and a client's principals,
// or skips the test if the MIT tools are not installed.
func startKDC(t *testing.T) *zktest.KDC {
	t.Helper()
	k, err := zktest.StartKDC(t.TempDir(), "zookeeper/localhost", "client")
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

// TestSASLGSSAPIJavaClient: zkCli.sh logging in with Krb5LoginModule
// (a keytab) authenticates with SASL GSSAPI to Zoo and to Apache 3.8
// given the same realm, and gets the sasl id client@EXAMPLE.COM.
func TestSASLGSSAPIJavaClient(t *testing.T) {
	k := startKDC(t)
	jaas := filepath.Join(t.TempDir(), "jaas.conf")
	principal := "zookeeper/localhost@" + zktest.Realm
	err := os.WriteFile(jaas, []byte(fmt.Sprintf(`Server {
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true keyTab="%s" storeKey=true useTicketCache=false
  principal="%s";
};
Client {
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true keyTab="%s" storeKey=true useTicketCache=false
  principal="client@%s";
};
`, k.Keytab("zookeeper/localhost"), principal, k.Keytab("client"), zktest.Realm)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	kt, err := keytab.Load(k.Keytab("zookeeper/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	z := startServer(t, func(c *Config) { c.SASL = &SASLConfig{Keytab: kt, Principal: principal} })
	ts := []target{{name: "zoo", addr: z.addr}}
	a, err := zktest.Apache{JAAS: "", JVMFlags: []string{"-Djava.security.auth.login.config=" + jaas, "-Djava.security.krb5.conf=" + k.Krb5Conf},
		Extra: []string{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}}.Start(t.TempDir())
	switch {
	case errors.Is(err, zktest.ErrUnavailable):
		t.Logf("Apache not run: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(a.Stop)
		ts = append(ts, target{name: "apache", addr: a.Addr})
	}
	flags := "-Djava.security.auth.login.config=" + jaas + " -Djava.security.krb5.conf=" + k.Krb5Conf + " -Dzookeeper.sasl.client=true"
	for _, tg := range ts {
		t.Run(tg.name, func(t *testing.T) {
			// The client asks for a ticket to zookeeper/<host it dials>.
			_, port, _ := net.SplitHostPort(tg.addr)
			out := zkCli(t, "localhost:"+port, flags, "whoami")
			if !strings.Contains(out, "sasl: client@"+zktest.Realm) {
				t.Errorf("whoami:\n%s\nwant sasl: client@%s", out, zktest.Realm)
			}
		})
	}
}
