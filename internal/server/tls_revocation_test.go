package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zoohq/zoo/internal/auth"
	"github.com/zoohq/zoo/internal/auth/authtest"
)

// TestTLSRevokedCertificate: with ssl.crl=true a client whose certificate
// its CA's CRL lists is refused with a log line naming it, while clients
// with certificates in good standing keep being served. The CRL comes
// from the certificates' distribution point, served by the test.
func TestTLSRevokedCertificate(t *testing.T) {
	e := newTLSEnv(t)
	var crl []byte
	crlSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(crl) }))
	defer crlSrv.Close()
	dp := []string{crlSrv.URL + "/ca.crl"}
	good := e.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "good"}, CRLURLs: dp})
	revoked := e.ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "stolen"}, CRLURLs: dp})
	crl = e.ca.CRL(t, revoked)

	cfg := e.serverConfig(tls.RequireAndVerifyClientCert)
	cfg.VerifyPeerCertificate = auth.NewRevocation(false).VerifyPeerCertificate
	_, addr, log := startTLSServer(t, &Secure{TLS: cfg, X509: true})
	c, err := sessionOver(t, addr, e.clientConfig(good))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionOver(t, addr, e.clientConfig(revoked)); err == nil {
		t.Fatal("a revoked certificate got a session")
	}
	log.waitLog(t, "certificate revoked")
	log.waitLog(t, "CN=stolen")
	c.create("/still-served", nil, 0)
	if _, err := sessionOver(t, addr, e.clientConfig(good)); err != nil {
		t.Fatalf("a good certificate after a revoked one: %v", err)
	}
}
