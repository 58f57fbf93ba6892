package member

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// roles renders a membership compactly for comparison: p01 is participant
// 1, o04 observer 4.
func roles(m Membership) []string {
	var out []string
	for _, s := range m.Servers {
		out = append(out, fmt.Sprintf("%c%02d", s.Type.String()[0], s.ID))
	}
	return out
}

// nonLoopback has distinct real addresses, so Apache's address clash check
// (which skips loopback and wildcard hosts) applies.
const nonLoopback = `server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181
server.2=10.0.0.2:2888:3888:participant;10.0.0.2:2181
server.3=10.0.0.3:2888:3888:participant;10.0.0.3:2181
version=1`

// Ref: Apache 3.8 PrepRequestProcessor.pRequest2Txn, case OpCode.reconfig.
// The first block is what Apache 3.8 answered on a live ensemble
// (participants 1,2,3, observer 4; reconfigEnabled; as super).
func TestReconfig(t *testing.T) {
	apache := mustParse(t, apacheConfig)
	routable := mustParse(t, nonLoopback)
	for _, tc := range []struct {
		name                         string
		cur                          Membership
		joining, leaving, newMembers string
		opts                         *Options
		want                         []string // roles of the result, if no error
		err                          error
	}{
		// Observed against Apache 3.8.
		{name: "no change", cur: apache, want: []string{"p01", "p02", "p03", "o04"}},
		{name: "leaving a non-member is ignored", cur: apache, leaving: "9",
			want: []string{"p01", "p02", "p03", "o04"}},
		{name: "malformed joiner", cur: apache, joining: "server.5=garbage", err: jute.BadArguments},
		// Leaves one participant: "new configuration must include at least 2 followers".
		{name: "leaving 2 of 3 participants", cur: apache, leaving: "2,3", err: jute.BadArguments},
		// No client port: "each server should have 3 ports specified".
		{name: "joiner without client port", cur: apache,
			joining: "server.7=127.0.0.1:1:2:participant", err: jute.BadArguments},
		{name: "observer joins", cur: apache, joining: "server.8=127.0.0.1:1:2:observer;127.0.0.1:5555",
			want: []string{"p01", "p02", "p03", "o04", "o08"}},
		// Apache's server does the bulk change when newMembers is set and
		// ignores joining (only zkCli refuses to send both). The
		// BadArguments Apache gave for joining plus
		// newMembers="server.1=127.0.0.1:1:2" came from the bulk's one
		// participant (next case).
		{name: "incremental and bulk mixed: bulk wins", cur: apache, joining: "server.8=127.0.0.1:1:2:observer;127.0.0.1:5555",
			newMembers: "server.1=127.0.0.1:1:2;3,server.2=127.0.0.1:4:5;6", want: []string{"p01", "p02"}},
		{name: "bulk with one participant", cur: apache, joining: "server.8=127.0.0.1:1:2:observer;127.0.0.1:5555",
			newMembers: "server.1=127.0.0.1:1:2", err: jute.BadArguments},
		// Only the new configuration's participants count, not the old majority.
		{name: "leaving an observer and a participant", cur: apache, leaving: "4,1",
			want: []string{"p02", "p03"}},

		// Incremental, from the source.
		{name: "participant joins", cur: apache, joining: "server.7=127.0.0.1:1:2:participant;127.0.0.1:5556",
			want: []string{"p01", "p02", "p03", "o04", "p07"}},
		{name: "role defaults to participant", cur: apache, joining: "server.7=127.0.0.1:1:2;5556",
			want: []string{"p01", "p02", "p03", "o04", "p07"}},
		{name: "promote observer", cur: apache, joining: "server.4=127.0.0.1:47109:49573:participant;127.0.0.1:2184",
			want: []string{"p01", "p02", "p03", "p04"}},
		{name: "demote participant", cur: apache, joining: "server.1=127.0.0.1:52417:53297:observer;127.0.0.1:2181",
			want: []string{"o01", "p02", "p03", "o04"}},
		{name: "leaving runs before joining", cur: apache, leaving: "4",
			joining: "server.4=127.0.0.1:1:2:participant;3", want: []string{"p01", "p02", "p03", "p04"}},
		{name: "later joiner with the same id wins", cur: apache,
			joining: "server.9=127.0.0.1:1:2:participant;3,server.9=127.0.0.1:1:2:observer;3",
			want:    []string{"p01", "p02", "p03", "o04", "o09"}},
		{name: "spaces and empty items", cur: apache, leaving: " 4 , ,1, ", want: []string{"p02", "p03"}},
		{name: "key is read after its last dot", cur: apache, joining: "foo.9=127.0.0.1:1:2:observer;3",
			want: []string{"p01", "p02", "p03", "o04", "o09"}},
		{name: "leaving everyone", cur: apache, leaving: "1,2,3,4", err: jute.BadArguments},
		{name: "leaving id not a number", cur: apache, leaving: "two", err: jute.BadArguments},
		{name: "joiner without =", cur: apache, joining: "server.9", err: jute.BadArguments},
		{name: "joiner with two =", cur: apache, joining: "server.9=a=b", err: jute.BadArguments},
		{name: "joiner id not a number", cur: apache, joining: "server.x=127.0.0.1:1:2;3", err: jute.BadArguments},
		{name: "joiner id 0", cur: apache, joining: "server.0=127.0.0.1:1:2;3", err: jute.BadArguments},
		{name: "joiner id 256", cur: apache, joining: "server.256=127.0.0.1:1:2;3", err: jute.BadArguments},
		{name: "joiner bad role", cur: apache, joining: "server.9=127.0.0.1:1:2:witness;3", err: jute.BadArguments},
		{name: "joiner equal ports", cur: apache, joining: "server.9=127.0.0.1:1:1;3", err: jute.BadArguments},
		{name: "joiner bad host", cur: apache, joining: "server.9=a\\b:1:2;3", err: jute.BadArguments},
		{name: "quorum address clash", cur: routable, joining: "server.4=10.0.0.1:2888:3999;10.0.0.4:2181",
			err: jute.BadArguments},
		{name: "client address clashes with election address", cur: routable,
			joining: "server.4=10.0.0.4:2888:3888;10.0.0.2:3888", err: jute.BadArguments},
		{name: "clash check ignores the replaced server", cur: routable,
			joining: "server.1=10.0.0.1:2888:3888:observer;10.0.0.1:2181", want: []string{"o01", "p02", "p03"}},
		{name: "clash check ignores a server that leaves", cur: routable, leaving: "3",
			joining: "server.4=10.0.0.3:2888:3888;10.0.0.3:2181", want: []string{"p01", "p02", "p04"}},
		{name: "standaloneEnabled=false allows one participant", cur: apache, leaving: "2,3",
			opts: &Options{}, want: []string{"p01", "o04"}},
		{name: "standaloneEnabled=false still needs one", cur: apache, leaving: "1,2,3",
			opts: &Options{}, err: jute.BadArguments},

		// Bulk.
		{name: "bulk", cur: apache, newMembers: "server.1=127.0.0.1:1:2;3,server.5=127.0.0.1:4:5:participant;6,server.6=h:1:2:observer",
			want: []string{"p01", "p05", "o06"}},
		{name: "bulk newline separated, version ignored", cur: apache,
			newMembers: "server.1=127.0.0.1:1:2\nserver.2=127.0.0.1:4:5\nversion=5", want: []string{"p01", "p02"}},
		{name: "bulk one participant", cur: apache, newMembers: "server.1=127.0.0.1:1:2;3,server.2=127.0.0.1:4:5:observer;6",
			err: jute.BadArguments},
		{name: "bulk malformed", cur: apache, newMembers: "server.1=garbage", err: jute.BadArguments},
		// parseDynamicConfig: "Unrecognised parameter".
		{name: "bulk other key", cur: apache, newMembers: "server.1=h:1:2,server.2=h:3:4,tickTime=2000",
			err: jute.BadArguments},
		{name: "bulk hierarchical", cur: apache, newMembers: "server.1=h:1:2,server.2=h:3:4,group.1=1:2",
			err: jute.BadArguments},
		{name: "bulk duplicate key, last wins", cur: apache,
			newMembers: "server.1=h:1:2,server.2=h:3:4,server.2=h:5:6:observer,server.3=h:7:8",
			want:       []string{"p01", "o02", "p03"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{StandaloneEnabled: true}
			if tc.opts != nil {
				opts = *tc.opts
			}
			got, err := opts.Reconfig(tc.cur, tc.joining, tc.leaving, tc.newMembers)
			if tc.err != nil {
				var code jute.Code
				if !errors.Is(err, tc.err) || !errors.As(err, &code) || code != tc.err {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if r := roles(got); !reflect.DeepEqual(r, tc.want) {
				t.Errorf("result %v, want %v", r, tc.want)
			}
			if got.Version != 0 {
				t.Errorf("Version = %d, want 0 (the caller's to set)", got.Version)
			}
			if _, err := Parse(got.String()); err != nil {
				t.Errorf("result does not parse: %v\n%s", err, got)
			}
		})
	}
}

func TestReconfigKeepsAddresses(t *testing.T) {
	cur := mustParse(t, apacheConfig)
	got, err := Reconfig(cur, "server.8=127.0.0.1:1:2:observer;127.0.0.1:5555", "1", "")
	if err != nil {
		t.Fatal(err)
	}
	got.Version = 0x200000003
	want := `server.2=127.0.0.1:40451:53343:participant;127.0.0.1:2182
server.3=127.0.0.1:33245:41825:participant;127.0.0.1:2183
server.4=127.0.0.1:47109:49573:observer
server.8=127.0.0.1:1:2:observer;127.0.0.1:5555
version=200000003`
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(cur.Servers) != 4 {
		t.Errorf("Reconfig changed its input: %v", cur.Servers)
	}
}

// Ref: Apache 3.8 Leader.isQuorumSynced, used by PrepRequestProcessor:
// "there must be a connected and synced quorum in new configuration",
// else NewConfigNoQuorum.
func TestRequireQuorum(t *testing.T) {
	cur := mustParse(t, apacheConfig)
	four, err := Reconfig(cur, "server.7=127.0.0.1:1:2;5", "", "")
	if err != nil {
		t.Fatal(err)
	}
	six, err := Reconfig(cur, "server.7=127.0.0.1:1:2;5,server.8=127.0.0.1:3:4;6,server.9=127.0.0.1:7:8;9", "", "")
	if err != nil {
		t.Fatal(err)
	}
	synced := []int64{1, 2, 3, 4}
	if err := RequireQuorum(four, synced); err != nil {
		t.Errorf("3 of 4 voters synced: %v", err)
	}
	if err := RequireQuorum(six, synced); !errors.Is(err, jute.NewConfigNoQuorum) {
		t.Errorf("3 of 6 voters synced: err = %v, want NewConfigNoQuorum", err)
	}
	if err := RequireQuorum(six, []int64{1, 2, 3, 7}); err != nil {
		t.Errorf("4 of 6 voters synced: %v", err)
	}
}

// Errors from limits only Zoo has wrap ErrBeyondApache, so that the
// caller answers them after the permission check, where Apache would
// have got to; Apache's own argument errors do not.
func TestReconfigBeyondApache(t *testing.T) {
	cur := mustParse(t, nonLoopback)
	for _, tc := range []struct {
		joining, newMembers string
		beyond              bool
	}{
		{"server.999=0.0.0.0:1234:2345:observer;3456", "", true},
		{"server.4=bad$host:1234:2345:observer;3456", "", true},
		{"", "server.1=a:1:2;3,group.1=1", true},
		{"some thing", "", false},
		{"server.4=nonsense", "", false},
		{"server.x=127.0.0.1:1:2;3", "", false},
	} {
		_, err := Reconfig(cur, tc.joining, "", tc.newMembers)
		if !errors.Is(err, jute.BadArguments) {
			t.Errorf("joining %q newMembers %q: %v; want BadArguments", tc.joining, tc.newMembers, err)
		}
		if got := errors.Is(err, ErrBeyondApache); got != tc.beyond {
			t.Errorf("joining %q newMembers %q: %v; beyond Apache %v, want %v", tc.joining, tc.newMembers, err, got, tc.beyond)
		}
	}
}
