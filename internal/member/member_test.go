package member

import (
	"errors"
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/config"
)

// apacheConfig is /zookeeper/config as Apache 3.8 showed it for the
// ensemble the reconfig observations were made on.
const apacheConfig = `server.1=127.0.0.1:52417:53297:participant
server.2=127.0.0.1:40451:53343:participant;127.0.0.1:2182
server.3=127.0.0.1:33245:41825:participant;127.0.0.1:2183
server.4=127.0.0.1:47109:49573:observer
version=100000000`

func mustParse(t *testing.T, text string) Membership {
	t.Helper()
	m, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return m
}

// Ref: Apache 3.8 QuorumMaj.toString and QuorumMaj(Properties): one
// server.N line per member, then version in hex.
func TestParseRoundTrip(t *testing.T) {
	for _, text := range []string{
		apacheConfig,
		"version=0",
		"server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=0",
		"server.1=[::1]:2888:3888:participant;[fe80::1%eth0]:2181\nversion=ff",
		"server.255=zk-1.example.com:2888:3888:observer\nversion=7fffffffffffffff",
	} {
		m := mustParse(t, text)
		if got := m.String(); got != text {
			t.Errorf("String() =\n%s\nwant\n%s", got, text)
		}
	}
}

func TestParse(t *testing.T) {
	m := mustParse(t, apacheConfig)
	if m.Version != 0x100000000 {
		t.Errorf("Version = %#x, want 0x100000000", m.Version)
	}
	want := config.Server{ID: 2, Host: "127.0.0.1", QuorumPort: 40451, ElectionPort: 53343,
		Type: config.Participant, ClientHost: "127.0.0.1", ClientPort: 2182}
	if s, ok := m.Server(2); !ok || s != want {
		t.Errorf("Server(2) = %+v, %v; want %+v", s, ok, want)
	}
	if got, want := m.Participants(), []int64{1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("Participants() = %v, want %v", got, want)
	}
	if got, want := m.Observers(), []int64{4}; !reflect.DeepEqual(got, want) {
		t.Errorf("Observers() = %v, want %v", got, want)
	}
}

// Tolerated differences from the canonical text: order, spacing, a role
// left out (participant), a missing version (0, as in QuorumMaj's
// field default).
func TestParseNormalizes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"server.2=h:1:2\nserver.1=h:3:4:observer\nversion=a",
			"server.1=h:3:4:observer\nserver.2=h:1:2:participant\nversion=a"},
		{"  server.01 = h:1:2;2181  \n", "server.1=h:1:2:participant;0.0.0.0:2181\nversion=0"},
		{"# comment\n\nserver.3=h:1:2:OBSERVER\r\nversion=0\n", "server.3=h:1:2:observer\nversion=0"},
	} {
		if got := mustParse(t, tc.in).String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"server.1=garbage\nversion=0",
		"server.x=h:1:2\nversion=0",
		"server.0=h:1:2\nversion=0",   // raft reserves 0
		"server.256=h:1:2\nversion=0", // the top byte of session ids
		"server.1=h:1:1\nversion=0",   // quorum and election ports equal
		"server.1=h:1:2:witness\nversion=0",
		"server.1=h:1:2|h:3:4\nversion=0", // multiAddress
		"server.1=h:1:2\nversion=xyz",
		"server.1=h:1:2\nversion=-1",
		"clientPort=2181\nversion=0",
		"group.1=1:2\nserver.1=h:1:2\nversion=0", // hierarchical quorums
		"server.1=h:1:2\nserver.1=h:3:4\nversion=0",
		"server.1=a\\u0020b:1:2\nversion=0", // a host no resolver takes
		"server.1=h:1:2;a,b:2181\nversion=0",
	} {
		if _, err := Parse(text); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", text, err)
		}
	}
}

// Ref: Apache 3.8 QuorumMaj.containsQuorum: more than half the voters.
func TestContainsQuorum(t *testing.T) {
	m := mustParse(t, apacheConfig) // voters 1,2,3; observer 4
	for _, tc := range []struct {
		ids  []int64
		want bool
	}{
		{nil, false},
		{[]int64{1}, false},
		{[]int64{1, 1}, false},
		{[]int64{1, 4}, false},
		{[]int64{1, 9}, false},
		{[]int64{1, 2}, true},
		{[]int64{3, 2, 1, 4}, true},
	} {
		if got := m.ContainsQuorum(tc.ids); got != tc.want {
			t.Errorf("ContainsQuorum(%v) = %v, want %v", tc.ids, got, tc.want)
		}
	}
}

func TestStringSortsServers(t *testing.T) {
	m := Membership{Version: 1, Servers: []config.Server{
		{ID: 2, Host: "b", QuorumPort: 1, ElectionPort: 2},
		{ID: 1, Host: "a", QuorumPort: 1, ElectionPort: 2, Type: config.Observer},
	}}
	want := "server.1=a:1:2:observer\nserver.2=b:1:2:participant\nversion=1"
	if got := m.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestFromConfig(t *testing.T) {
	c, err := config.Parse("zoo.cfg", []byte("server.2=h:3:4:observer;2181\nserver.1=h:1:2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "server.1=h:1:2:participant\nserver.2=h:3:4:observer;0.0.0.0:2181\nversion=0"
	m := FromConfig(c)
	if got := m.String(); got != want {
		t.Errorf("FromConfig(...).String() = %q, want %q", got, want)
	}
	if back := mustParse(t, want); !reflect.DeepEqual(back, m) {
		t.Errorf("FromConfig = %+v, Parse of its text = %+v (Pos must be cleared)", m, back)
	}
}
