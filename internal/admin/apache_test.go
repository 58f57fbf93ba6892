package admin

import (
	"errors"
	"net/http"
	"testing"

	"github.com/zoohq/zoo/internal/zktest"
)

// The same requests to Zoo's AdminServer and to Apache 3.8's (the oracle,
// run live) get the same status codes and, for every command Apache 3.8
// has, at least Apache's top-level keys. Skipped only when Apache cannot
// run here (no java, no Debian zookeeper or libservlet-api-java).
func TestAgainstApache(t *testing.T) {
	ap, err := zktest.Apache{AdminServer: true}.Start(t.TempDir())
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ap.Stop()
	zoo, clientAddr, _ := startZoo(t)
	// The same small workload on both: a session with an ephemeral and
	// a watch, so dump and the watch commands have something to show.
	for _, addr := range []string{clientAddr, ap.Addr} {
		s := dialSession(t, addr)
		s.create(t, "/adm", "x")
		s.get(t, "/adm")
	}
	for _, c := range commands() {
		for _, name := range c.names {
			if name == "snapshot" || name == "snap" || name == "restore" || name == "rest" {
				continue // 3.9 additions Apache 3.8 answers as unknown (tested on their own)
			}
			t.Run(name, func(t *testing.T) {
				aStatus, aResp := get(t, "GET", ap.AdminURL+"/"+name, nil)
				zStatus, zResp := get(t, "GET", zoo+"/"+name, nil)
				if aStatus != zStatus {
					t.Errorf("status: Apache %d, Zoo %d", aStatus, zStatus)
				}
				if aResp["command"] != zResp["command"] {
					t.Errorf("command: Apache %v, Zoo %v", aResp["command"], zResp["command"])
				}
				if (aResp["error"] == nil) != (zResp["error"] == nil) {
					t.Errorf("error: Apache %v, Zoo %v", aResp["error"], zResp["error"])
				}
				if c.names[0] == "monitor" || c.names[0] == "system_properties" {
					return // see TestCommandsMatchApache
				}
				for k := range aResp {
					if _, ok := zResp[k]; !ok && !notInZoo[c.names[0]+"."+k] {
						t.Errorf("key %q missing; Apache answers %v", k, aResp[k])
					}
				}
			})
		}
	}
	for _, path := range []string{"/nosuch", "/set_trace_mask", "/stmk?traceMask=x"} {
		aStatus, aResp := get(t, "GET", ap.AdminURL+path, nil)
		zStatus, zResp := get(t, "GET", zoo+path, nil)
		if aStatus != zStatus || aResp["error"] != zResp["error"] {
			t.Errorf("%s: Apache %d %v, Zoo %d %v", path, aStatus, aResp["error"], zStatus, zResp["error"])
		}
	}
	// Apache 3.8 has no POST commands: both refuse the method.
	aStatus, _ := get(t, "POST", ap.AdminURL+"/ruok", nil)
	if zStatus, _ := get(t, "POST", zoo+"/ruok", nil); aStatus != zStatus || zStatus != http.StatusMethodNotAllowed {
		t.Errorf("POST ruok: Apache %d, Zoo %d", aStatus, zStatus)
	}
}
