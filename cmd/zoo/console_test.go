package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The AdminServer's port serves the console under /console/, redirects /
// there, and still answers the commands.
func TestConsoleServed(t *testing.T) {
	_, adminPort := adminTestServer(t, "")
	base := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Errorf("/: %s %s", resp.Status, resp.Header.Get("Location"))
	}
	if page := httpGet(t, base+"/console/"); !strings.Contains(page, "<title>Zoo console</title>") {
		t.Errorf("console page: %.200s", page)
	}
	if me := httpGet(t, base+"/console/api/me"); !strings.Contains(me, `"tree":true`) {
		t.Errorf("me: %s", me)
	}
	if ens := httpGet(t, base+"/console/api/ensemble"); !strings.Contains(ens, `"standalone":true`) {
		t.Errorf("ensemble: %s", ens)
	}
	if ruok := httpGet(t, base+"/commands/ruok"); !strings.Contains(ruok, `"command": "ruok"`) {
		t.Errorf("ruok: %s", ruok)
	}
}
