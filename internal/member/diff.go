package member

import (
	"slices"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/config"
)

// Change is what a membership change means for raft and for the peer
// transport. Each list is ascending, and an id is in at most one list.
type Change struct {
	AddedParticipants   []int64 // new members that vote
	AddedObservers      []int64 // new members that do not vote
	RemovedParticipants []int64 // voters that left
	RemovedObservers    []int64 // observers that left
	Promoted            []int64 // observer -> participant
	Demoted             []int64 // participant -> observer
	// Readdressed kept their role but changed an address: raft is
	// unaffected, the transport must dial the new one.
	Readdressed []int64
}

// Diff compares the membership before and after a change.
func Diff(prev, next Membership) Change {
	var c Change
	for _, n := range next.sorted() {
		o, ok := prev.Server(n.ID)
		switch {
		case !ok && n.Type == config.Participant:
			c.AddedParticipants = append(c.AddedParticipants, n.ID)
		case !ok:
			c.AddedObservers = append(c.AddedObservers, n.ID)
		case o.Type != n.Type && n.Type == config.Participant:
			c.Promoted = append(c.Promoted, n.ID)
		case o.Type != n.Type:
			c.Demoted = append(c.Demoted, n.ID)
		case o.String() != n.String():
			c.Readdressed = append(c.Readdressed, n.ID)
		}
	}
	for _, o := range prev.sorted() {
		if _, ok := next.Server(o.ID); ok {
			continue
		}
		if o.Type == config.Participant {
			c.RemovedParticipants = append(c.RemovedParticipants, o.ID)
		} else {
			c.RemovedObservers = append(c.RemovedObservers, o.ID)
		}
	}
	return c
}

// Empty reports whether the change touches nothing.
func (c Change) Empty() bool {
	return len(c.AddedParticipants)+len(c.AddedObservers)+len(c.RemovedParticipants)+
		len(c.RemovedObservers)+len(c.Promoted)+len(c.Demoted)+len(c.Readdressed) == 0
}

// ConfChanges are the raft changes that enact c: AddNode for new and
// promoted participants, AddLearnerNode for new and demoted observers
// (raft demotes a voter through the joint configuration's LearnersNext).
// A server that left and that lingers (the leader heard from it lately)
// stays a learner until the leader drops it (replica's linger.go): a
// participant is demoted, an observer needs no change. One that does not
// linger is removed (RemoveNode). Readdressed servers need none. Propose
// them together as one ConfChangeV2 with ConfChangeTransitionAuto, so
// that more than one change goes through joint consensus.
func (c Change) ConfChanges(lingers func(id int64) bool) []raftpb.ConfChangeSingle {
	var out []raftpb.ConfChangeSingle
	add := func(t raftpb.ConfChangeType, ids ...[]int64) {
		for _, id := range slices.Sorted(slices.Values(slices.Concat(ids...))) {
			out = append(out, raftpb.ConfChangeSingle{Type: t, NodeID: uint64(id)})
		}
	}
	var staying, gone []int64
	for _, id := range c.RemovedParticipants {
		if lingers(id) {
			staying = append(staying, id)
		} else {
			gone = append(gone, id)
		}
	}
	for _, id := range c.RemovedObservers {
		if !lingers(id) {
			gone = append(gone, id)
		}
	}
	add(raftpb.ConfChangeRemoveNode, gone)
	add(raftpb.ConfChangeAddNode, c.AddedParticipants, c.Promoted)
	add(raftpb.ConfChangeAddLearnerNode, c.AddedObservers, c.Demoted, staying)
	return out
}

// ConfState is m as raft's configuration: participants are voters,
// observers learners. Use it to bootstrap raft from zoo.cfg's membership.
func (m Membership) ConfState() raftpb.ConfState {
	return raftpb.ConfState{Voters: toNodeIDs(m.Participants()), Learners: toNodeIDs(m.Observers())}
}

func toNodeIDs(ids []int64) []uint64 {
	var out []uint64
	for _, id := range ids {
		out = append(out, uint64(id))
	}
	return out
}
