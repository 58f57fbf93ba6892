package txn

import (
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// ensemble is a Reconfigurer whose three participants are all in sync.
type ensemble struct{}

func (ensemble) InProgress() bool { return false }
func (ensemble) Synced() []int64  { return []int64{1, 2, 3} }

const threeServers = "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
	"server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
	"server.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183\nversion=0"

func newReconfigHarness(t *testing.T) *harness {
	t.Helper()
	return reconfigHarness(t, PrepConfig{ReconfigEnabled: true})
}

func reconfigHarness(t *testing.T, cfg PrepConfig) *harness {
	t.Helper()
	h := newHarness(t, cfg)
	h.p.SetReconfig(ensemble{})
	if _, err := h.st.Tree.SetData(tree.ConfigPath, []byte(threeServers), -1, 1, 1); err != nil {
		t.Fatal(err)
	}
	return h
}

// Ref: issue 13, defect 3; kazoo 2.8 TestReconfig.test_no_super_auth and
// test_bad_input, which Apache 3.8 passes: its permission check comes
// after the arguments' (a malformed request gets BadArguments from anyone)
// and the quorum check. A request only Zoo refuses (server id 999, out of
// Zoo's range, which Apache would accept) gets NoAuth without the right,
// as from Apache, and BadArguments with it.
func TestReconfigChecksPermissionAfterArguments(t *testing.T) {
	super := []jute.Id{{Scheme: "super"}}
	tests := []struct {
		name    string
		auth    []jute.Id
		joining string
		leaving string
		want    jute.Code
	}{
		{"no super, bad id", nil, "server.999=0.0.0.0:1234:2345:observer;3456", "", jute.NoAuth},
		{"no super, malformed", nil, "server.4=nonsense", "", jute.BadArguments},
		{"no super, not server=spec", nil, "some thing", "", jute.BadArguments},
		{"no super, valid", nil, "", "3", jute.NoAuth},
		{"super, bad id", super, "server.999=0.0.0.0:1234:2345:observer;3456", "", jute.BadArguments},
		{"super, valid", super, "server.4=127.0.0.1:2891:3891:observer;2184", "", jute.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newReconfigHarness(t)
			_, r := h.do(Request{Op: jute.OpReconfig, Auth: tt.auth, Record: &jute.ReconfigRequest{
				JoiningServers: tt.joining, LeavingServers: tt.leaving, CurConfigID: -1,
			}})
			if r.Err != tt.want {
				t.Errorf("reconfig: %v; want %v", r.Err, tt.want)
			}
		})
	}
}

// A reconfig that leaves one participant is refused by default
// (standaloneEnabled=true), and allowed with standaloneEnabled=false, as
// Apache's PrepRequestProcessor does: "new configuration must include at
// least 2 followers", else at least 1.
func TestReconfigToOneParticipant(t *testing.T) {
	super := []jute.Id{{Scheme: "super"}}
	for _, one := range []bool{false, true} {
		h := reconfigHarness(t, PrepConfig{ReconfigEnabled: true, OneParticipant: one})
		_, r := h.do(Request{Op: jute.OpReconfig, Auth: super, Record: &jute.ReconfigRequest{
			LeavingServers: "2,3", CurConfigID: -1,
		}})
		want := jute.BadArguments
		if one {
			want = jute.OK
		}
		if r.Err != want {
			t.Errorf("OneParticipant %v: leaving 2 of 3: %v; want %v", one, r.Err, want)
		}
		if one && r.Err == jute.OK && strings.Contains(string(r.Data), "server.2=") {
			t.Errorf("the new membership still names server 2:\n%s", r.Data)
		}
	}
}
