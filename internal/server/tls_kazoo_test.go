package server

import (
	"context"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

const kazooTLSScript = `
import sys
from kazoo.client import KazooClient
from kazoo.security import make_acl
addr, ca, cert = sys.argv[1], sys.argv[2], sys.argv[3]
# kazoo loads a client certificate only given both files; one PEM with
# the key and the certificate serves as both.
zk = KazooClient(hosts=addr, use_ssl=True, ca=ca, certfile=cert or None, keyfile=cert or None, timeout=5)
try:
    zk.start(timeout=10)
except Exception as e:
    print("no session:", type(e).__name__)
    sys.exit(0)
zk.create("/kazoo-tls", b"hello", acl=[make_acl("x509", "CN=client,O=Zoo", all=True)])
data, _ = zk.get("/kazoo-tls")
print("got", data.decode())
zk.stop()
`

// TestKazooOverTLS: kazoo (Debian python3-kazoo) with use_ssl and a client
// certificate gets a session over TLS and the x509 id of its subject;
// without a certificate (clientAuth need) it gets none.
func TestKazooOverTLS(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import kazoo").Run(); err != nil {
		t.Skip("kazoo not installed (Debian python3-kazoo)")
	}
	e := newTLSEnv(t)
	_, addr, _ := startTLSServer(t, &Secure{TLS: e.serverConfig(tls.RequireAndVerifyClientCert), X509: true})
	dir := t.TempDir()
	ca := authtest.WriteFile(t, dir, "ca.pem", e.ca.PEM())
	cert := authtest.WriteFile(t, dir, "client.pem", e.client.PEM(t))
	script := filepath.Join(dir, "kazoo_tls.py")
	if err := os.WriteFile(script, []byte(kazooTLSScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(cert string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, python, script, addr, ca, cert).CombinedOutput()
		if err != nil {
			t.Fatalf("kazoo: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(cert); !strings.Contains(out, "got hello") {
		t.Fatalf("kazoo over TLS with a certificate:\n%s", out)
	}
	if out := run(""); !strings.Contains(out, "no session") {
		t.Fatalf("kazoo over TLS without a certificate:\n%s", out)
	}
}
