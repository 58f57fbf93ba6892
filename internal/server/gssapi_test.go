package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// gssapiTargets starts Zoo and, where it runs, Apache 3.8 with the
// principal zookeeper/localhost from the KDC, and returns them with the
// JAAS file (Server and Client sections) the Java side uses.
func gssapiTargets(t *testing.T, k *zktest.KDC) ([]target, string) {
	t.Helper()
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
	return ts, jaas
}

// TestSASLGSSAPIJavaClient: zkCli.sh logging in with Krb5LoginModule
// (a keytab) authenticates with SASL GSSAPI to Zoo and to Apache 3.8
// given the same realm, and gets the sasl id client@EXAMPLE.COM.
func TestSASLGSSAPIJavaClient(t *testing.T) {
	k := startKDC(t)
	ts, jaas := gssapiTargets(t, k)
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

// kazooGSSAPIScript follows kazoo's SASL GSSAPI test setup: a client with
// sasl_options mechanism GSSAPI creates a node only its sasl id may read
// and reads it; a client without SASL is refused it.
const kazooGSSAPIScript = `
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import make_acl

hosts, principal = sys.argv[1], sys.argv[2]
zk = KazooClient(hosts=hosts, timeout=10, sasl_options={
    "mechanism": "GSSAPI", "service": "zookeeper", "principal": principal})
zk.start(timeout=30)
zk.create("/krb", b"secret", acl=[make_acl("sasl", principal, all=True)])
print("read", zk.get("/krb")[0].decode())
print("acl", zk.get_acls("/krb")[0][0].id.id)
zk.stop()
zk.close()

anon = KazooClient(hosts=hosts, timeout=10)
anon.start(timeout=30)
try:
    anon.get("/krb")
    print("anonymous read")
except NoAuthError:
    print("anonymous NoAuthError")
anon.stop()
anon.close()
`

// Ref: issue 10: kazoo (pure-sasl over python3-kerberos) with sasl
// mechanism GSSAPI, its ticket from a client keytab, gets the sasl id
// client@EXAMPLE.COM from Zoo and from Apache 3.8.
func TestSASLGSSAPIKazoo(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import kazoo, puresasl, kerberos").Run(); err != nil {
		t.Skip("kazoo or its GSSAPI support not installed (Debian python3-kazoo python3-pure-sasl, which brings python3-kerberos)")
	}
	k := startKDC(t)
	ts, _ := gssapiTargets(t, k)
	script := filepath.Join(t.TempDir(), "kazoo_gssapi.py")
	if err := os.WriteFile(script, []byte(kazooGSSAPIScript), 0o644); err != nil {
		t.Fatal(err)
	}
	principal := "client@" + zktest.Realm
	for _, tg := range ts {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			// The client asks for a ticket to zookeeper/<host it dials>.
			_, port, _ := net.SplitHostPort(tg.addr)
			cmd := exec.CommandContext(ctx, python, script, "localhost:"+port, principal)
			cmd.Env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_CLIENT_KTNAME="+k.Keytab("client"),
				"KRB5CCNAME=FILE:"+filepath.Join(t.TempDir(), "ccache"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("kazoo: %v\n%s", err, out)
			}
			for _, want := range []string{"read secret", "acl " + principal, "anonymous NoAuthError"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("kazoo output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
