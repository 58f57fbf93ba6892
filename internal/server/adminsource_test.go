package server

import (
	"strings"
	"testing"
)

// parseMembership reads /zookeeper/config's lines, as reconfig writes them.
func TestParseMembership(t *testing.T) {
	got := parseMembership("server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181\n" +
		"server.2=10.0.0.2:2888:3888:observer\nversion=100000003\nbogus\nserver.x=a:1:2\n" +
		"server.3=[::1]:2890:3890:participant;[::1]:2183\n")
	if len(got) != 3 {
		t.Fatalf("members %+v", got)
	}
	if m := got[0]; m.ID != 1 || m.QuorumAddr != "10.0.0.1:2888" || m.ElectionAddr != "10.0.0.1:3888" ||
		m.ClientAddr != "10.0.0.1:2181" || m.Observer {
		t.Errorf("server.1 %+v", m)
	}
	if m := got[1]; m.ID != 2 || !m.Observer || m.ClientAddr != "" {
		t.Errorf("server.2 %+v", m)
	}
	if m := got[2]; m.QuorumAddr != "[::1]:2890" || m.ElectionAddr != "[::1]:3890" || m.ClientAddr != "[::1]:2183" {
		t.Errorf("server.3 %+v", m)
	}
}

// The membership text comes from the replicated tree: whatever it holds,
// parsing it never panics and yields only lines naming a server.
func FuzzParseMembership(f *testing.F) {
	f.Add("server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181\nversion=1")
	f.Add("server.2=[::1]:2888:3888:observer")
	f.Add("server.=::\nserver.-1=a:b:c;")
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range parseMembership(text) {
			i := strings.LastIndex(m.QuorumAddr, ":")
			if i < 0 || !strings.Contains(text, m.QuorumAddr[:i]) || !strings.Contains(text, m.QuorumAddr[i+1:]) {
				t.Fatalf("member %+v not from %q", m, text)
			}
		}
	})
}
