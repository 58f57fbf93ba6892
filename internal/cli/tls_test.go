package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
	zooserver "github.com/zoohq/zoo/internal/server"
)

// startTLSZoo runs an in-process Zoo server whose port needs TLS with a
// client certificate signed by ca.
func startTLSZoo(t *testing.T, ca *authtest.CA) string {
	t.Helper()
	srv, err := zooserver.New(zooserver.Config{Logger: slog.New(slog.DiscardHandler), TickTime: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "server"}}).TLS()
	sec := &zooserver.Secure{X509: true, TLS: &tls.Config{Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, sec) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	})
	return ln.Addr().String()
}

// TestClientConfigurationTLS: -client-configuration with Apache's client
// keys (zookeeper.client.secure, a PKCS12 key store, a PEM trust store)
// connects over TLS with a client certificate; without it the TLS port
// gives no session; a security key the client cannot honour is refused.
func TestClientConfigurationTLS(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "ca")
	addr := startTLSZoo(t, ca)
	client := ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "cli"}})
	conf := "zookeeper.client.secure=true\n" +
		"zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n" +
		"zookeeper.ssl.keyStore.location=" + authtest.WriteFile(t, dir, "cli.p12", client.PKCS12(t, "pw")) + "\n" +
		"zookeeper.ssl.keyStore.password=pw\n" +
		"zookeeper.ssl.trustStore.location=" + authtest.WriteFile(t, dir, "ca.pem", ca.PEM()) + "\n"
	confPath := authtest.WriteFile(t, dir, "client.properties", []byte(conf))

	out, errOut, st := run(t, "", "-server", addr, "-timeout", "5000", "-client-configuration", confPath, "create", "/tls", "over-tls")
	if st != 0 {
		t.Fatalf("create over TLS: status %d: %s%s", st, out, errOut)
	}
	out, errOut, st = run(t, "", "-server", addr, "-timeout", "5000", "-client-configuration", confPath, "getAcl", "/tls")
	if st != 0 || !strings.Contains(out, "world") {
		t.Fatalf("getAcl: status %d: %s%s", st, out, errOut)
	}
	if _, _, st := run(t, "", "-server", addr, "-timeout", "2000", "get", "/tls"); st == 0 {
		t.Fatal("a plaintext zoo cli got through the TLS port")
	}
	bad := authtest.WriteFile(t, dir, "sasl.properties", []byte(conf+"zookeeper.sasl.client=true\n"))
	_, errOut, st = run(t, "", "-server", addr, "-client-configuration", bad, "get", "/tls")
	if st == 0 || !strings.Contains(errOut, "zookeeper.sasl.client") {
		t.Fatalf("an unprovided SASL setting: status %d: %s", st, errOut)
	}
}
