package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// adminDo sends a request to the AdminServer and returns the status and
// body.
func adminDo(t *testing.T, method, url, auth string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// The snapshot command's stream, posted to restore, brings the data back;
// restore needs ALL on / as in Apache, and a body that is not a snapshot
// gets 400 and changes nothing.
func TestAdminRestore(t *testing.T) {
	srv, adminPort := adminTestServer(t, `admin.rateLimiterIntervalInMS=1
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
`)
	base := fmt.Sprintf("http://127.0.0.1:%d/commands/", adminPort)
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := zk.Connect(cctx, srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Create(ctx, "/app", []byte("v1"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	// Only admin (and the super user) may have ALL on the root.
	if _, err := c.SetACL(ctx, "/", zk.DigestACL(zk.PermAll, "admin", "pw"), -1); err != nil {
		t.Fatal(err)
	}
	status, snap := adminDo(t, "GET", base+"snapshot", "digest super:test", nil)
	if status != http.StatusOK || len(snap) == 0 {
		t.Fatalf("snapshot: %d %s", status, snap)
	}
	if _, err := c.Set(ctx, "/app", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	get := func() string {
		t.Helper()
		var d []byte
		deadline := time.Now().Add(10 * time.Second)
		for {
			if d, _, err = c.Get(ctx, "/app"); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond) // the client reconnects after a restore
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(d)
	}

	for _, tc := range []struct {
		auth   string
		status int
		msg    string
	}{
		{"", http.StatusUnauthorized, "Auth info is missing"},
		{"digest bob:pw", http.StatusForbidden, "Not authorized"},
	} {
		if s, b := adminDo(t, "POST", base+"restore", tc.auth, snap); s != tc.status || !strings.Contains(string(b), tc.msg) {
			t.Errorf("restore with %q: %d %s", tc.auth, s, b)
		}
	}
	if s, b := adminDo(t, "GET", base+"restore", "digest super:test", nil); s != http.StatusMethodNotAllowed {
		t.Errorf("GET restore: %d %s", s, b)
	}
	s, b := adminDo(t, "POST", base+"restore", "digest super:test", []byte("this is not a snapshot"))
	if s != http.StatusBadRequest || !strings.Contains(string(b), "not a valid snapshot") {
		t.Errorf("garbage: %d %s", s, b)
	}
	if d := get(); d != "v2" {
		t.Errorf("a refused restore changed /app to %q", d)
	}

	// The refused restore took the rate limiter's token: the next is
	// allowed 1 ms later (admin.rateLimiterIntervalInMS=1).
	for deadline := time.Now().Add(5 * time.Second); ; {
		if s, b = adminDo(t, "POST", base+"rest", "digest super:test", snap); s != http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
	}
	var resp struct {
		Command  string  `json:"command"`
		Error    *string `json:"error"`
		LastZxid int64   `json:"last_zxid"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || s != http.StatusOK || resp.Command != "restore" || resp.Error != nil || resp.LastZxid == 0 {
		t.Fatalf("restore: %d %s (%v)", s, b, err)
	}
	if d := get(); d != "v1" {
		t.Errorf("after restore /app is %q", d)
	}
}

// admin.restore.enabled=false disables restore: Apache's 503.
func TestAdminRestoreDisabled(t *testing.T) {
	_, adminPort := adminTestServer(t, `admin.restore.enabled=false
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
`)
	s, b := adminDo(t, "POST", fmt.Sprintf("http://127.0.0.1:%d/commands/restore", adminPort), "digest super:test", []byte("x"))
	if s != http.StatusServiceUnavailable || !strings.Contains(string(b), `"command": "restore"`) {
		t.Errorf("%d %s", s, b)
	}
}
