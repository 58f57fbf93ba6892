package admin

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zoohq/zoo/internal/server/fourlw"
)

// fakeSource is a fourlw.Source with set answers.
type fakeSource struct {
	notServing bool
	stats      fourlw.Stats
	watches    fourlw.WatchSummary
}

func (f *fakeSource) Serving() bool                     { return !f.notServing }
func (f *fakeSource) Stats() fourlw.Stats               { return f.stats }
func (f *fakeSource) Connections() []fourlw.Conn        { return nil }
func (f *fakeSource) Conf() fourlw.Conf                 { return fourlw.Conf{} }
func (f *fakeSource) Env() []fourlw.KV                  { return []fourlw.KV{{Key: "go.version", Value: "go1"}} }
func (f *fakeSource) Monitor() fourlw.Monitor           { return fourlw.Monitor{} }
func (f *fakeSource) DataWatches() []fourlw.Watch       { return nil }
func (f *fakeSource) WatchSummary() fourlw.WatchSummary { return f.watches }
func (f *fakeSource) Dump() fourlw.Dump                 { return fourlw.Dump{} }
func (f *fakeSource) TraceMask() int64                  { return 306 }
func (f *fakeSource) ResetConnectionStats()             {}
func (f *fakeSource) ResetServerStats()                 {}
func (f *fakeSource) DigestLog() []fourlw.ZxidDigest    { return nil }

// While the server is not serving, the commands Apache marks
// serverRequired answer Apache's "not currently serving" error with 200;
// the others (environment, get_trace_mask, monitor, set_trace_mask,
// system_properties, zabstate) still answer.
func TestNotServing(t *testing.T) {
	src := &fakeSource{notServing: true, stats: fourlw.Stats{Version: "3.9.2-zoo", Mode: fourlw.ModeStandalone}}
	hs := httptest.NewServer(Handler(Config{Source: src}))
	defer hs.Close()
	for _, c := range commands() {
		status, got := get(t, "GET", hs.URL+"/commands/"+c.names[0], nil)
		if c.serverRequired {
			if status != http.StatusOK || got["error"] != "This ZooKeeper instance is not currently serving requests" {
				t.Errorf("%s: %d %v", c.names[0], status, got)
			}
			continue
		}
		if status != http.StatusOK || got["command"] != c.names[0] {
			t.Errorf("%s: %d %v", c.names[0], status, got)
		}
	}
}

// On an ensemble member, leader, voting_view, zabstate and observers
// describe the ensemble with Apache's keys.
func TestEnsembleCommands(t *testing.T) {
	src := &fakeSource{stats: fourlw.Stats{Version: "3.9.2-zoo", Mode: fourlw.ModeFollower}}
	ens := Ensemble{MyID: 2, LeaderID: 1, LeaderAddr: "10.0.0.1:2888", Voting: true,
		QuorumAddr: "10.0.0.2:2888", ElectionAddr: "10.0.0.2:3888", ClientAddr: "10.0.0.2:2181",
		LastZxid: 0x20, Term: 3, ObserverCount: 1,
		Members: []Member{
			{ID: 1, QuorumAddr: "10.0.0.1:2888", ElectionAddr: "10.0.0.1:3888", ClientAddr: "10.0.0.1:2181"},
			{ID: 2, QuorumAddr: "10.0.0.2:2888", ElectionAddr: "10.0.0.2:3888", ClientAddr: "10.0.0.2:2181"},
			{ID: 4, QuorumAddr: "10.0.0.4:2888", ElectionAddr: "10.0.0.4:3888", Observer: true},
		}}
	hs := httptest.NewServer(Handler(Config{Source: src, Ensemble: func() Ensemble { return ens }}))
	defer hs.Close()
	_, got := get(t, "GET", hs.URL+"/commands/leader", nil)
	if got["is_leader"] != false || got["leader_id"] != 1.0 || got["leader_ip"] != "10.0.0.1:2888" || got["error"] != nil {
		t.Errorf("leader: %v", got)
	}
	_, got = get(t, "GET", hs.URL+"/commands/voting_view", nil)
	view, _ := got["current_config"].(map[string]any)
	one, _ := view["1"].(map[string]any)
	if len(view) != 2 || one["learner_type"] != "participant" || one["client_address"] != "10.0.0.1:2181" {
		t.Errorf("voting_view: %v", got)
	}
	_, got = get(t, "GET", hs.URL+"/commands/zabstate", nil)
	if got["myid"] != 2.0 || got["voting"] != true || got["zabstate"] != "broadcast" || got["last_zxid"] != "0x20" || got["zab_epoch"] != 3.0 {
		t.Errorf("zabstate: %v", got)
	}
	_, got = get(t, "GET", hs.URL+"/commands/obsr", nil)
	if got["synced_observers"] != 1.0 {
		t.Errorf("observers: %v", got)
	}
}

// watch_summary reports the server's counts under Apache's keys.
func TestWatchSummary(t *testing.T) {
	src := &fakeSource{stats: fourlw.Stats{Mode: fourlw.ModeStandalone},
		watches: fourlw.WatchSummary{Connections: 3, Paths: 10_000_000, Total: 10_000_002}}
	hs := httptest.NewServer(Handler(Config{Source: src}))
	defer hs.Close()
	_, got := get(t, "GET", hs.URL+"/commands/wchs", nil)
	if got["num_connections"] != 3.0 || got["num_paths"] != 1e7 || got["num_total_watches"] != 10_000_002.0 {
		t.Errorf("watch_summary: %v", got)
	}
}
