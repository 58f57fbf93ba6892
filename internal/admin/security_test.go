package admin

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/server/fourlw"
)

// serveFake serves cfg (with a fake, serving source) on a free port
// through https (nil: plain HTTP) and returns the server's address.
func serveFake(t *testing.T, cfg Config, https *HTTPS) string {
	t.Helper()
	if cfg.Source == nil {
		cfg.Source = &fakeSource{stats: fourlw.Stats{Version: "3.9.2-zoo", Mode: fourlw.ModeStandalone}}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := Start(https.Listen(ln), Handler(cfg), 5*time.Second)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}

// do sends one request with client and decodes the JSON answer.
func do(t *testing.T, client *http.Client, method, url, authz string) (int, map[string]any, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON: %v", method, url, resp.StatusCode, body, err)
	}
	return resp.StatusCode, m, nil
}

type pki struct {
	ca             *authtest.CA
	server, client tls.Certificate
}

func newPKI(t *testing.T) pki {
	ca := authtest.NewCA(t, "admin-ca")
	return pki{
		ca:     ca,
		server: ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "zoo"}}).TLS(),
		client: ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "ops", Organization: []string{"zoo"}}}).TLS(),
	}
}

func (p pki) serverConfig(need bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{p.server}, ClientCAs: p.ca.Pool()}
	if need {
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c
}

func (p pki) httpsClient(withCert bool) *http.Client {
	c := &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost"}
	if withCert {
		c.Certificates = []tls.Certificate{p.client}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: c}, Timeout: 10 * time.Second}
}

var plainClient = &http.Client{Timeout: 10 * time.Second}

// admin.forceHttps: the port speaks HTTPS only; a plain HTTP request gets
// no command answer.
func TestForceHTTPS(t *testing.T) {
	p := newPKI(t)
	addr := serveFake(t, Config{}, &HTTPS{Config: p.serverConfig(false)})
	status, got, err := do(t, p.httpsClient(false), "GET", "https://"+addr+"/commands/ruok", "")
	if err != nil || status != http.StatusOK || got["command"] != "ruok" {
		t.Fatalf("https ruok: %d %v %v", status, got, err)
	}
	resp, err := plainClient.Get("http://" + addr + "/commands/ruok")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `"command"`) {
			t.Fatalf("plain HTTP on a forceHttps port answered: %d %s", resp.StatusCode, body)
		}
	}
}

// admin.portUnification: HTTP and HTTPS on one port; the client
// certificate of a unified TLS connection authenticates x509.
func TestPortUnification(t *testing.T) {
	p := newPKI(t)
	sc := p.serverConfig(false)
	sc.ClientAuth = tls.VerifyClientCertIfGiven
	root := rootACL(jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: acl.SchemeX509, ID: "CN=ops,O=zoo"}})
	addr := serveFake(t, Config{Auth: &Auth{X509: true, RootACL: root}}, &HTTPS{Config: sc, Unified: true})
	for _, tc := range []struct {
		client *http.Client
		url    string
	}{{plainClient, "http://" + addr}, {p.httpsClient(false), "https://" + addr}} {
		status, got, err := do(t, tc.client, "GET", tc.url+"/commands/ruok", "")
		if err != nil || status != http.StatusOK || got["command"] != "ruok" {
			t.Errorf("%s ruok: %d %v %v", tc.url, status, got, err)
		}
	}
	for _, tc := range []struct {
		client *http.Client
		url    string
		status int
	}{{plainClient, "http://" + addr, 401}, {p.httpsClient(false), "https://" + addr, 401}, {p.httpsClient(true), "https://" + addr, 503}} {
		status, got, err := do(t, tc.client, "GET", tc.url+"/commands/snapshot", "x509")
		if err != nil || status != tc.status {
			t.Errorf("%s x509 snapshot: %d %v %v, want %d", tc.url, status, got, err, tc.status)
		}
	}
}

// admin.needClientAuth: a client without a certificate is refused at the
// handshake; one with a certificate signed by the trust store is served.
func TestNeedClientAuth(t *testing.T) {
	p := newPKI(t)
	addr := serveFake(t, Config{}, &HTTPS{Config: p.serverConfig(true)})
	if status, got, err := do(t, p.httpsClient(false), "GET", "https://"+addr+"/commands/ruok", ""); err == nil {
		t.Fatalf("no client certificate: served %d %v", status, got)
	}
	status, got, err := do(t, p.httpsClient(true), "GET", "https://"+addr+"/commands/ruok", "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("with a client certificate: %d %v %v", status, got, err)
	}
}

// rootACL is a settable root ACL for the auth tests.
func rootACL(acls ...jute.ACL) func() ([]jute.ACL, error) {
	return func() ([]jute.ACL, error) { return acls, nil }
}

// The protected commands authenticate as Apache 3.9: digest (with the
// super digest), ip and x509 identities need every bit of ALL on the
// root's ACL; the status codes and messages are Apache's. An authorized
// request reaches the command, which answers 503 here (no snapshot hook:
// disabled).
func TestProtectedCommandAuth(t *testing.T) {
	p := newPKI(t)
	restricted := rootACL(
		jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: acl.SchemeDigest, ID: acl.Digest("alice:secret")}},
		jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: acl.SchemeX509, ID: "CN=ops,O=zoo"}},
		jute.ACL{Perms: jute.PermRead, ID: acl.Anyone})
	split := rootACL(
		jute.ACL{Perms: jute.PermRead | jute.PermWrite, ID: jute.Id{Scheme: acl.SchemeIP, ID: "127.0.0.1"}},
		jute.ACL{Perms: jute.PermCreate | jute.PermDelete | jute.PermAdmin, ID: jute.Id{Scheme: acl.SchemeIP, ID: "127.0.0.0/8"}})
	noAdmin := rootACL(jute.ACL{Perms: jute.PermAll &^ jute.PermAdmin, ID: acl.Anyone})
	open := rootACL(jute.ACL{Perms: jute.PermAll, ID: acl.Anyone})
	const missing, notAuthn, notAuthz = "Auth info is missing for the command", "Not authenticated", "Not authorized"
	for _, tc := range []struct {
		name   string
		root   func() ([]jute.ACL, error)
		x509   bool // the x509 provider is registered
		cert   bool // the client presents its certificate
		authz  string
		status int
		msg    string
	}{
		{"no header", restricted, false, false, "", 401, missing},
		{"unknown scheme", restricted, false, false, "sasl bob", 401, notAuthn},
		{"three fields", restricted, false, false, "digest alice:secret extra", 401, notAuthn},
		{"digest without data", restricted, false, false, "digest", 401, notAuthn},
		{"digest wrong password", restricted, false, false, "digest alice:wrong", 403, notAuthz},
		{"digest user with ALL", restricted, false, false, "digest alice:secret", 503, ""},
		{"super digest", restricted, false, false, "digest super:test", 503, ""},
		{"open root, any digest", open, false, false, "digest bob:x", 503, ""},
		{"ip: every bit granted by some entry", split, false, false, "ip", 503, ""},
		{"ip: ADMIN missing", noAdmin, false, false, "ip", 403, notAuthz},
		{"ip not in the ACL", restricted, false, false, "ip", 403, notAuthz},
		{"x509 provider off", restricted, false, true, "x509", 401, notAuthn},
		{"x509 without certificate", restricted, true, false, "x509", 401, notAuthn},
		{"x509 certificate with ALL", restricted, true, true, "x509", 503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := p.serverConfig(false)
			sc.ClientAuth = tls.VerifyClientCertIfGiven
			addr := serveFake(t, Config{Auth: &Auth{SuperDigest: acl.Digest("super:test"), X509: tc.x509, RootACL: tc.root}},
				&HTTPS{Config: sc})
			status, got, err := do(t, p.httpsClient(tc.cert), "GET", "https://"+addr+"/commands/snapshot?streaming=false", tc.authz)
			if err != nil {
				t.Fatal(err)
			}
			if status != tc.status || got["command"] != "snapshot" || (tc.msg != "" && got["error"] != tc.msg) {
				t.Errorf("%d %v, want %d %q", status, got, tc.status, tc.msg)
			}
		})
	}
}
