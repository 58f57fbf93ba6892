package main

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/auth/authtest"
	"github.com/zoohq/zoo/internal/config"
)

// admin.forceHttps with admin.needClientAuth, from zoo.cfg: the AdminServer
// serves HTTPS with the ssl.quorum.* stores, requires a client
// certificate, and the protected snapshot command authenticates the
// superDigest user, streams a snapshot and is rate limited.
func TestAdminHTTPSFromZooCfg(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t, "admin-ca")
	key := authtest.WriteFile(t, dir, "key.pem", ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "zoo"}}).PEM(t))
	trust := authtest.WriteFile(t, dir, "ca.pem", ca.PEM())
	_, adminPort := adminTestServer(t, fmt.Sprintf(`admin.forceHttps=true
admin.needClientAuth=true
ssl.quorum.keyStore.location=%s
ssl.quorum.trustStore.location=%s
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
`, key, trust))
	url := fmt.Sprintf("https://127.0.0.1:%d/commands/", adminPort)
	client := func(cert bool) *http.Client {
		c := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}
		if cert {
			c.Certificates = []tls.Certificate{ca.Issue(t, authtest.Options{Subject: pkix.Name{CommonName: "ops"}}).TLS()}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: c}, Timeout: 10 * time.Second}
	}
	if resp, err := client(false).Get(url + "ruok"); err == nil {
		resp.Body.Close()
		t.Fatalf("no client certificate: served %s", resp.Status)
	}
	c := client(true)
	for _, tc := range []struct {
		authz  string
		status int
		want   string
	}{
		{"", 401, "Auth info is missing"},
		{"sasl super", 401, "Not authenticated"},
		{"digest super:test", 200, ""}, // the snapshot, streamed
		// One per admin.rateLimiterIntervalInMS (5 minutes by default).
		{"digest super:test", 429, `"command": "snapshot"`},
	} {
		req, _ := http.NewRequest("GET", url+"snapshot", nil)
		if tc.authz != "" {
			req.Header.Set("Authorization", tc.authz)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.status == 200 && (resp.Header.Get("Content-Type") != "application/octet-stream" || len(body) == 0) {
			t.Errorf("snapshot: %s %s", resp.Header, body)
		}
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%q: %s %s", tc.authz, resp.Status, body)
		}
	}
}

// admin.snapshot.enabled=false disables the snapshot command: Apache's 503
// even for the super user.
func TestAdminSnapshotDisabled(t *testing.T) {
	_, adminPort := adminTestServer(t, `admin.snapshot.enabled=false
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
`)
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/commands/snapshot", adminPort), nil)
	req.Header.Set("Authorization", "digest super:test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"command": "snapshot"`) {
		t.Errorf("%s %s", resp.Status, body)
	}
}

// admin.needClientAuth without HTTPS, or a flag that is not a boolean, is
// refused at its line rather than served weaker than asked.
func TestAdminTLSFlagsRefused(t *testing.T) {
	for _, text := range []string{"admin.needClientAuth=true\n", "admin.forceHttps=yes\n"} {
		cfg, srv := loadServer(t, fmt.Sprintf("clientPort=%d\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n%s", freePort(t), freePort(t), text))
		_, err := startAdmin(slog.New(slog.DiscardHandler), cfg, srv)
		var p *config.Problem
		if !errors.As(err, &p) || !strings.Contains(err.Error(), "zoo.cfg:") {
			t.Errorf("%q: %v, want a problem at its line", text, err)
		}
	}
}
