package member

import (
	"reflect"
	"slices"
	"testing"

	"go.etcd.io/raft/v3/confchange"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

func TestDiff(t *testing.T) {
	cur := mustParse(t, apacheConfig) // 1,2,3 participants, 4 observer
	for _, tc := range []struct {
		name    string
		next    string
		want    Change
		changes []raftpb.ConfChangeSingle // the servers that left linger
		gone    []raftpb.ConfChangeSingle // they do not
	}{
		{name: "same", next: apacheConfig},
		{name: "version only", next: apacheConfig[:len(apacheConfig)-len("100000000")] + "200000000"},
		{
			name: "everything at once",
			next: `server.1=127.0.0.1:52417:53297:observer
server.2=127.0.0.1:40451:53343:participant;127.0.0.1:2999
server.4=127.0.0.1:47109:49573:participant
server.5=127.0.0.1:1:2:participant;127.0.0.1:3
server.6=127.0.0.1:4:5:observer;127.0.0.1:6
version=200000000`,
			want: Change{
				AddedParticipants: []int64{5}, AddedObservers: []int64{6},
				RemovedParticipants: []int64{3},
				Promoted:            []int64{4}, Demoted: []int64{1}, Readdressed: []int64{2},
			},
			changes: []raftpb.ConfChangeSingle{
				{Type: raftpb.ConfChangeAddNode, NodeID: 4},
				{Type: raftpb.ConfChangeAddNode, NodeID: 5},
				{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 1},
				{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 3}, // lingers (replica's linger.go)
				{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 6},
			},
			gone: []raftpb.ConfChangeSingle{
				{Type: raftpb.ConfChangeRemoveNode, NodeID: 3},
				{Type: raftpb.ConfChangeAddNode, NodeID: 4},
				{Type: raftpb.ConfChangeAddNode, NodeID: 5},
				{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 1},
				{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 6},
			},
		},
		{
			name: "observer leaves",
			next: `server.1=127.0.0.1:52417:53297:participant
server.2=127.0.0.1:40451:53343:participant;127.0.0.1:2182
server.3=127.0.0.1:33245:41825:participant;127.0.0.1:2183
version=200000000`,
			want: Change{RemovedObservers: []int64{4}},
			// Lingering, none: it stays the learner it was.
			gone: []raftpb.ConfChangeSingle{{Type: raftpb.ConfChangeRemoveNode, NodeID: 4}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := mustParse(t, tc.next)
			c := Diff(cur, next)
			if !reflect.DeepEqual(c, tc.want) {
				t.Errorf("Diff = %+v, want %+v", c, tc.want)
			}
			if c.Empty() != reflect.DeepEqual(tc.want, Change{}) {
				t.Errorf("Empty() = %v", c.Empty())
			}
			if got := c.ConfChanges(always); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("ConfChanges = %v, want %v", confchange.Describe(got...), confchange.Describe(tc.changes...))
			}
			if got := c.ConfChanges(never); !reflect.DeepEqual(got, tc.gone) {
				t.Errorf("ConfChanges, none lingering = %v, want %v", confchange.Describe(got...), confchange.Describe(tc.gone...))
			}
			checkRaft(t, cur, next)
		})
	}
}

// checkRaft applies Diff's changes with raft's own configuration changer,
// through a joint configuration as ConfChangeTransitionAuto does, and
// checks that raft ends at next's voters, and at next's learners plus,
// when they linger, the servers that left (learners until the leader
// drops them).
func checkRaft(t *testing.T, prev, next Membership) {
	t.Helper()
	for _, lingers := range []func(int64) bool{always, never} {
		ccs := Diff(prev, next).ConfChanges(lingers)
		chg := confchange.Changer{Tracker: tracker.MakeProgressTracker(10, 0), LastIndex: 1}
		cfg, prs, err := confchange.Restore(chg, prev.ConfState())
		if err != nil {
			t.Fatalf("Restore(%v): %v", prev.ConfState(), err)
		}
		chg.Tracker.Config, chg.Tracker.Progress = cfg, prs
		if len(ccs) > 0 {
			if cfg, prs, err = chg.EnterJoint(false, ccs...); err != nil {
				t.Fatalf("EnterJoint(%s): %v", confchange.Describe(ccs...), err)
			}
			chg.Tracker.Config, chg.Tracker.Progress = cfg, prs
			if cfg, prs, err = chg.LeaveJoint(); err != nil {
				t.Fatalf("LeaveJoint: %v", err)
			}
			chg.Tracker.Config, chg.Tracker.Progress = cfg, prs
		}
		got, want := chg.Tracker.ConfState(), next.ConfState()
		for _, sv := range prev.Servers {
			if _, ok := next.Server(sv.ID); !ok && lingers(sv.ID) {
				want.Learners = append(want.Learners, uint64(sv.ID))
			}
		}
		slices.Sort(want.Learners)
		if !reflect.DeepEqual(got.Voters, want.Voters) || !reflect.DeepEqual(got.Learners, want.Learners) ||
			len(got.VotersOutgoing)+len(got.LearnersNext) != 0 {
			t.Errorf("raft ended at %+v, want %+v", got, want)
		}
	}
}

func always(int64) bool { return true }
func never(int64) bool  { return false }

// Every successful Reconfig from the Apache ensemble can be enacted by raft.
func TestReconfigThenRaft(t *testing.T) {
	cur := mustParse(t, apacheConfig)
	for _, req := range [][3]string{
		{"", "", ""},
		{"", "4,1", ""},
		{"server.4=127.0.0.1:47109:49573:participant;2184", "1,2", ""},
		{"server.1=127.0.0.1:52417:53297:observer;2181,server.9=127.0.0.1:1:2;3", "3", ""},
		{"", "", "server.7=h:1:2,server.8=h:3:4,server.1=h:5:6:observer"},
	} {
		next, err := Reconfig(cur, req[0], req[1], req[2])
		if err != nil {
			t.Fatalf("Reconfig%q: %v", req, err)
		}
		checkRaft(t, cur, next)
	}
}
