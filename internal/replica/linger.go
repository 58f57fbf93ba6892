package replica

import (
	"maps"
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	members "github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/tree"
)

// A server that a reconfig removes while the leader hears from it stays
// in raft's configuration as a learner, as Apache's removed follower
// stays a "non-voting follower" until it disconnects. It keeps getting
// the log, so its clients keep their sessions, their reads and their
// writes (forwarded to the leader): a client that removed the server it
// sits on goes on with its next request without a reconnect.
// member.Change.ConfChanges demotes such a participant to a learner and
// leaves such an observer a learner (lingers decides); one that is down
// is removed from raft at once.
//
// The leader drops a lingering server from raft once it has not heard
// from it for lingerElections election timeouts (it was stopped, or is
// cut off); the server lets its clients go when it learns of that. A
// leader that a reconfig removed leads on for an election timeout, then
// hands leadership to the voter with the most of the log, as Apache's
// leader hands it to its designated successor, and lingers like any other
// removed server.
//
// A server that lingered may be wiped and started again empty, to be
// added back, before the leader has dropped it: the leader, taking it for
// the learner it had, sends heartbeats that commit entries its empty log
// lacks, which raft takes for a lost log (ErrLostLog). So a server that
// started empty to join ignores such heartbeats for a while and tells the
// leader (KindEmpty); a leader that still has it as a lingering learner
// drops it, and it waits to be added back like any joiner. A reconfig
// that adds back a server still lingering adds it afresh (reconfig.go's
// forgetLingering). A voter wiped without being removed is not the
// leader's to drop: after two election timeouts of such heartbeats it
// stops with ErrLostLog, as before.

// staleForEmptyLog reports whether m is a heartbeat that this joining
// server, whose log is still empty, must not step.
func (r *Replica) staleForEmptyLog(m raftpb.Message) bool {
	if !r.joining || m.Type != raftpb.MsgHeartbeat || r.applied > 0 {
		r.joining = r.joining && r.applied == 0
		return false
	}
	if last, err := r.disk.LastIndex(); err != nil || m.Commit <= last {
		return false
	}
	r.staleBeats++
	if r.staleBeats > lingerElections*r.cfg.ElectionTicks/heartbeatTicks {
		return false // a wiped voter: ErrLostLog
	}
	if r.staleBeats == 1 {
		r.cfg.Logger.Warn("the leader takes this empty server for one with entries; asking it to drop the old one",
			"leader", m.From, "commit", m.Commit)
	}
	if r.cfg.Transport != nil {
		r.cfg.Transport.Send(m.From, KindEmpty, nil)
	}
	return true
}

// dropEmptied drops server id from raft if it is a learner that the
// membership no longer lists: it was wiped and started again (KindEmpty).
func (r *Replica) dropEmptied(id uint64) {
	if r.rn.BasicStatus().RaftState != raft.StateLeader || r.InProgress() ||
		!slices.Contains(r.confState.Learners, id) {
		return
	}
	in, ok := r.membership()
	if !ok || slices.Contains(in, int64(id)) {
		return
	}
	r.dropLearner(id, "wiped and started again")
}

// lingerElections is how many election timeouts a removed server may stay
// silent before the leader drops it.
const lingerElections = 2

// tidyMembership runs every tick: on a leader a reconfig removed, it
// hands leadership off; on any other leader, it drops one removed server
// that fell silent.
func (r *Replica) tidyMembership() {
	if r.rn.BasicStatus().RaftState != raft.StateLeader {
		r.ledFrom, r.removedAt = 0, 0
		return
	}
	now := r.ticks.Load()
	if r.ledFrom == 0 {
		r.ledFrom = now
	}
	if r.handOff() || r.InProgress() {
		return
	}
	// A new leader gives every member the same time to be heard from.
	grace := uint64(lingerElections * r.cfg.ElectionTicks)
	if now-r.ledFrom < grace {
		return
	}
	var silent []uint64
	for _, id := range r.confState.Learners {
		if t, ok := r.heard[id]; id != r.cfg.ID && (!ok || now-t > grace) {
			silent = append(silent, id)
		}
	}
	if len(silent) == 0 {
		return
	}
	in, ok := r.membership()
	if !ok {
		return // never drop a server without knowing it was removed
	}
	for _, id := range silent {
		if slices.Contains(in, int64(id)) {
			continue // an observer that is down: still a member
		}
		r.dropLearner(id, "silent for too long")
		return // one change at a time, as raft requires
	}
}

// dropLearner proposes the removal of server id, a learner a reconfig
// removed, from raft.
func (r *Replica) dropLearner(id uint64, why string) {
	cc := raftpb.ConfChangeV2{Changes: []raftpb.ConfChangeSingle{{Type: raftpb.ConfChangeRemoveNode, NodeID: id}}}
	if err := r.rn.ProposeConfChange(cc); err != nil {
		r.cfg.Logger.Warn("dropping a removed server", "server", id, "err", err)
		return
	}
	r.confPending = true
	r.cfg.Logger.Info("dropping a server a reconfig removed", "server", id, "why", why)
}

// handOff reports whether this leader is no longer a voter (a reconfig
// removed it) and is moving leadership, an election timeout after it
// found so, to the voter whose log matches its own the furthest, among
// those heard from lately. Raft sends that voter MsgTimeoutNow once it
// has the whole log, and it is elected without waiting out a timeout.
// Meanwhile nothing is prepped here (propose): this server's own
// requests wait for the new leader instead of failing.
func (r *Replica) handOff() bool {
	if slices.Contains(r.confState.Voters, r.cfg.ID) || slices.Contains(r.confState.VotersOutgoing, r.cfg.ID) {
		r.removedAt = 0
		return false
	}
	// It leads on for an election timeout first: a reconfig that follows
	// at once (adding it back, as go-zookeeper's test does) goes through
	// undisturbed, as do the requests in flight. The move itself fails
	// the requests other members forwarded here and have not seen
	// applied (ConnectionLoss to their clients).
	now := r.ticks.Load()
	if r.removedAt == 0 {
		r.removedAt = now
	}
	if now-r.removedAt < uint64(r.cfg.ElectionTicks) {
		return false
	}
	st := r.rn.Status()
	if st.LeadTransferee != raft.None {
		return true
	}
	// A voter heard from lately first: a transfer to one that is down
	// waits out an election timeout before raft gives it up.
	// In id order, so that ties go the same way every time (the
	// simulator replays a seed bit for bit).
	var to, match uint64
	active := false
	for _, id := range slices.Sorted(maps.Keys(st.Progress)) {
		pr := st.Progress[id]
		if id == r.cfg.ID || pr.IsLearner {
			continue
		}
		if better := pr.RecentActive && !active || pr.RecentActive == active && (to == 0 || pr.Match > match); better {
			to, match, active = id, pr.Match, pr.RecentActive
		}
	}
	if to == 0 {
		return false
	}
	r.cfg.Logger.Info("removed from the voters: handing leadership over", "to", to)
	r.rn.TransferLeader(to)
	return true
}

// lingers reports whether a server that a reconfig removes should stay a
// learner: the leader heard from it within an election timeout (raft's
// RecentActive). One that is down is removed from raft at once: if it
// lingered, an operator who wipes it and adds it back would find the
// leader taking the wiped log for the one it had, and the server stopping
// with ErrLostLog.
func (r *Replica) lingers(id int64) bool {
	if uint64(id) == r.cfg.ID {
		return true // the leader itself: it hands over first
	}
	active := false
	r.rn.WithProgress(func(pid uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pid == uint64(id) {
			active = pr.RecentActive
		}
	})
	return active
}

// membership returns the server ids /zookeeper/config lists, and whether
// it holds a membership at all.
func (r *Replica) membership() ([]int64, bool) {
	r.mu.RLock()
	info, ok := r.state.Tree.Lookup(tree.ConfigPath)
	r.mu.RUnlock()
	if !ok {
		return nil, false
	}
	m, err := members.Parse(string(info.Data))
	if err != nil || len(m.Servers) == 0 {
		return nil, false
	}
	ids := make([]int64, 0, len(m.Servers))
	for _, sv := range m.Servers {
		ids = append(ids, sv.ID)
	}
	return ids, true
}
