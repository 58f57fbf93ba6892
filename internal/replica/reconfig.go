package replica

import (
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	members "github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// A reconfig (ZooKeeper's dynamic reconfiguration) is prepped like any
// write, into a txn holding the new membership text. When the membership
// changes, the leader proposes it as a raft ConfChangeV2 whose Context is
// the txn's log entry: raft commits the change (joint consensus when
// several members change, left automatically) and every member applies
// the txn, rewriting /zookeeper/config, at the same point of the log. A
// reconfig that changes no member (only addresses, or nothing) goes
// through the log as a plain entry.

// setConfState records the membership raft applied, for snapshots and for
// the readers outside the loop, and tells the log whether its commit-only
// writes may be lazy (see pendingApply): not while this member is the sole
// voter, whatever zoo.cfg listed when the log was opened.
func (r *Replica) setConfState(cs raftpb.ConfState) {
	r.confState = cs
	r.lazyCommit = !r.soleVoter()
	if r.log != nil {
		r.log.SetLazyCommit(r.lazyCommit)
	}
	voters := append(slices.Clone(cs.Voters), cs.VotersOutgoing...)
	slices.Sort(voters)
	voters = slices.Compact(voters)
	r.voters.Store(&voters)
	all := slices.Concat(voters, cs.Learners, cs.LearnersNext)
	slices.Sort(all)
	all = slices.Compact(all)
	r.members.Store(&all)
	r.learner.Store(slices.Contains(cs.Learners, r.cfg.ID) || slices.Contains(cs.LearnersNext, r.cfg.ID))
}

// soleVoter reports whether this member alone votes in the applied
// membership, so that its commit index is its own say. raft changes
// membership when a change is applied, not appended.
func (r *Replica) soleVoter() bool { return soleVoterIn(r.confState, r.cfg.ID) }

// soleVoterIn reports whether id alone votes in cs.
func soleVoterIn(cs raftpb.ConfState, id uint64) bool {
	return slices.Equal(cs.Voters, []uint64{id}) && len(cs.VotersOutgoing) == 0
}

// Voters returns the voting members (both sides of a joint configuration).
func (r *Replica) Voters() []uint64 {
	if v := r.voters.Load(); v != nil {
		return *v
	}
	return nil
}

// Members returns every member raft replicates to: the voters, and the
// learners (observers, and servers a reconfig removed that still linger,
// linger.go).
func (r *Replica) Members() []uint64 {
	if m := r.members.Load(); m != nil {
		return *m
	}
	return nil
}

// IsMember reports whether raft still replicates to this server.
func (r *Replica) IsMember() bool { return slices.Contains(r.Members(), r.cfg.ID) }

// IsLearner reports whether this member replicates without voting (an
// observer).
func (r *Replica) IsLearner() bool { return r.learner.Load() }

// InProgress implements txn.Reconfigurer: a membership change this leader
// proposed is not applied yet, or the group is in a joint configuration
// that raft has yet to leave. Raft would refuse another meanwhile.
func (r *Replica) InProgress() bool {
	return r.confPending || len(r.confState.VotersOutgoing) > 0
}

// Synced implements txn.Reconfigurer: the leader and the members that
// replicate and that it heard from within an election timeout. Raft's
// RecentActive alone is not enough: the quorum check clears it at the end
// of every election timeout, and a member stays unmarked until its next
// message is stepped, so on a busy machine a reconfig prepped in that
// window was refused NewConfigNoQuorum with every member connected.
// It runs on the loop, as prep does.
func (r *Replica) Synced() []int64 {
	st := r.rn.Status()
	out := []int64{int64(r.cfg.ID)}
	for id, pr := range st.Progress {
		if id != r.cfg.ID && pr.State == tracker.StateReplicate && (pr.RecentActive || r.heardWithin(id, uint64(r.cfg.ElectionTicks))) {
			out = append(out, int64(id))
		}
	}
	return out
}

// proposeReconfig proposes a prepped reconfig txn (encoded in data): as a
// ConfChangeV2 if it changes the members, else as a plain entry.
func (r *Replica) proposeReconfig(t *txn.Txn, data []byte) error {
	body, ok := t.Body.(*txn.ReconfigTxn)
	if !ok {
		return r.rn.Propose(data)
	}
	next, err := members.Parse(body.Membership)
	if err != nil {
		return r.rn.Propose(data)
	}
	var cur members.Membership
	r.mu.RLock()
	if info, ok := r.state.Tree.Lookup(tree.ConfigPath); ok {
		cur, _ = members.Parse(string(info.Data))
	}
	r.mu.RUnlock()
	diff := members.Diff(cur, next)
	changes := append(r.forgetLingering(diff), diff.ConfChanges(r.lingers)...)
	if len(changes) == 0 {
		return r.rn.Propose(data)
	}
	cc := raftpb.ConfChangeV2{Transition: raftpb.ConfChangeTransitionAuto, Changes: changes, Context: data}
	if err := r.rn.ProposeConfChange(cc); err != nil {
		return err
	}
	r.confPending = true
	return nil
}

// forgetLingering returns a RemoveNode for every server c adds back while
// it still lingers as a learner (linger.go): raft then adds it afresh
// (one joint change) instead of keeping its progress, which a server
// wiped in between no longer has.
func (r *Replica) forgetLingering(c members.Change) []raftpb.ConfChangeSingle {
	var out []raftpb.ConfChangeSingle
	for _, id := range slices.Concat(c.AddedParticipants, c.AddedObservers) {
		if slices.Contains(r.confState.Learners, uint64(id)) {
			out = append(out, raftpb.ConfChangeSingle{Type: raftpb.ConfChangeRemoveNode, NodeID: uint64(id)})
		}
	}
	return out
}

var _ txn.Reconfigurer = (*Replica)(nil)
