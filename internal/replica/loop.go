package replica

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/bufpool"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// propose preps and proposes the waiting requests if this replica may
// prep: it leads and has applied an entry of its own term, hence its whole
// log (DESIGN decision 5). A follower forwards its own requests to the
// leader instead; with no leader they wait.
func (r *Replica) propose() {
	st := r.rn.BasicStatus()
	if st.Lead != raft.None && st.Lead != r.cfg.ID && r.learnerLostLeader() {
		st.Lead = raft.None
	}
	r.observeLeader(st.Lead, st.Term)
	// A leader handing leadership over preps nothing: raft would drop the
	// proposals (linger.go).
	ready := st.RaftState == raft.StateLeader && r.appliedTerm == st.Term && st.LeadTransferee == raft.None
	r.leader.Store(ready)
	switch {
	case len(r.waiting) == 0:
		return
	case ready:
		r.prepAll()
	case st.Lead != raft.None && st.Lead != r.cfg.ID:
		r.forwardAll(st.Lead)
	}
}

// LinkState is implemented by a Transport that knows whether its link to
// a member is up.
type LinkState interface {
	Connected(id uint64) bool
}

// leaderLinkTicks is how many ticks the link to the leader must stay down
// before a follower stops waiting out the election timeout.
const leaderLinkTicks = 2

// watchLeaderLink shortens a follower's wait when its link to the leader
// is down and does not come back: the leader's process is likely gone
// (its TCP connections were reset), which Apache's followers notice at
// once. The election clock is moved past the base timeout, so the
// follower campaigns within the randomized rest of it. PreVote keeps this
// from disturbing a leader the others still hear from: they refuse to
// vote while they are in its lease.
func (r *Replica) watchLeaderLink() {
	ls, ok := r.cfg.Transport.(LinkState)
	if !ok {
		return
	}
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || st.Lead == raft.None || ls.Connected(st.Lead) {
		r.lead.linkDown = 0
		return
	}
	r.lead.linkDown++
	if r.lead.linkDown != leaderLinkTicks {
		return
	}
	r.cfg.Logger.Info("the link to the leader is down: campaigning early", "leader", st.Lead)
	for range r.cfg.ElectionTicks + r.cfg.ElectionTicks/2 {
		r.rn.Tick()
	}
}

// recordProgress publishes the leader's view of the other members, for
// the four-letter words.
func (r *Replica) recordProgress() {
	if r.rn.BasicStatus().RaftState != raft.StateLeader {
		return
	}
	st := r.rn.Status()
	last := st.Commit
	if li, err := r.disk.LastIndex(); err == nil {
		last = max(last, li)
	}
	out := make([]PeerProgress, 0, len(st.Progress))
	for id, pr := range st.Progress {
		if id == r.cfg.ID {
			continue
		}
		out = append(out, PeerProgress{ID: id, Learner: pr.IsLearner, Match: pr.Match, Lag: last - min(last, pr.Match)})
	}
	slices.SortFunc(out, func(a, b PeerProgress) int { return cmp.Compare(a.ID, b.ID) })
	r.progress.Store(&out)
}

// learnerLostLeader reports whether this replica is a learner that has not
// heard from its leader for two election timeouts. A voter that stops
// hearing from its leader campaigns, and raft forgets the leader; a
// learner never campaigns, so raft would name a leader that stepped down
// (it lost its quorum) until a new one is elected, and the learner's
// clients would wait on it all that time.
func (r *Replica) learnerLostLeader() bool {
	return r.lead.since > 2*r.cfg.ElectionTicks && slices.Contains(r.confState.Learners, r.cfg.ID)
}

// observeLeader notices a change of leader, or of term under the same
// leader (it stepped down and was elected again: its uncommitted entries
// may have been replaced). Whatever this server had in flight may or may
// not commit: every such request fails (its client sees ConnectionLoss,
// which means just that), and prep starts afresh (DESIGN decision 5).
func (r *Replica) observeLeader(lead, term uint64) {
	prevTerm := r.term.Swap(term)
	if lead == r.lead.last && (term == prevTerm || lead == raft.None) {
		return
	}
	r.cfg.Logger.Info("leader changed", "from", r.lead.last, "to", lead, "term", term)
	prev := r.lead.last
	r.lead.last = lead
	r.leadID.Store(lead)
	if prev != raft.None {
		r.dropAll()
	}
}

// prepAll preps every waiting request, as the leader, and proposes the
// txns of a run of plain writes in one raft message. Raft appends them
// and sends them to each follower once: proposed one by one, each was a
// Step of its own and a MsgApp to every follower (bcastAppend), and raft's
// Propose took 5% of a standalone server's CPU at 0% reads.
func (r *Replica) prepAll() {
	// One clock reading stamps the whole batch: txn times are in ms, a
	// batch is prepped in a few at most, and Apache's times too are taken
	// at prep, after queueing. A reading per request was ~1% of a write's
	// CPU at saturation (issue 14).
	now := r.cfg.Now()
	for i, p := range r.waiting {
		if p.req.Op == jute.OpSync {
			// The sync's read index must come after the writes before it.
			if !r.proposeBatch() {
				return
			}
			r.startSync(p.tag)
			continue
		}
		if !r.cfg.Prep.Settled(p.req) ||
			p.req.Op == jute.OpReconfig && r.confPending && r.rn.BasicStatus().Commit > r.applied {
			// A write a quota may refuse waits until the writes prepped
			// before it are applied (txn's Settled). And the membership
			// change in flight may be committed and not yet applied here:
			// a follower that applied it first has answered its client,
			// whose next reconfig must not be told one is in progress.
			// Either waits for the apply (a turn or two), and the
			// requests behind it with it, in order.
			if !r.proposeBatch() {
				return
			}
			n := copy(r.waiting, r.waiting[i:])
			clear(r.waiting[n:])
			r.waiting = r.waiting[:n]
			return
		}
		origin, seq := p.origin, p.oseq
		if origin == 0 {
			origin, seq = r.cfg.ID, r.nextSeq()
		}
		p.req.Time = now
		if len(r.confState.Voters)+len(r.confState.Learners) > 1 {
			p.req.Server = origin // for the session owner check
		}
		// A reconfig is proposed on its own (proposeReconfig), so that
		// raft dropping it drops nothing proposed before it.
		reconfig := p.req.Op == jute.OpReconfig
		if reconfig && !r.proposeBatch() {
			return
		}
		t := r.cfg.Prep.Prep(p.req)
		data := r.entryData(origin, seq, t)
		if len(r.batch.ents) == 0 {
			r.batch.from = i
			r.batch.ents = make([]raftpb.Entry, 0, len(r.waiting)-i)
		}
		r.batch.ents = append(r.batch.ents, raftpb.Entry{Data: data})
		r.batch.reqs = append(r.batch.reqs, batched{prepped: prepped{origin: origin, seq: seq, txn: t}, tag: p.tag, own: p.origin == 0})
		if reconfig && !r.proposeBatch() {
			return
		}
	}
	if !r.proposeBatch() {
		return
	}
	clear(r.waiting)
	r.waiting = r.waiting[:0]
}

// batch is what prepAll has prepped and not yet proposed: the entries,
// their requests, and where the first is in waiting.
type batch struct {
	ents []raftpb.Entry
	reqs []batched
	from int
}

type batched struct {
	prepped
	tag uint64
	own bool // this server's request, not one forwarded to it
}

// proposeBatch proposes the prepped batch: a reconfig txn (always alone)
// through proposeReconfig, plain txns in one message. If raft drops
// them, the batch's requests and those waiting after them fail, and it
// reports false.
func (r *Replica) proposeBatch() bool {
	b := &r.batch
	if len(b.ents) == 0 {
		return true
	}
	var err error
	if q := b.reqs[0]; q.txn.Type == jute.OpReconfig {
		err = r.proposeReconfig(q.txn, b.ents[0].Data)
	} else {
		err = r.proposeEntries(b.ents)
	}
	if err != nil {
		// Nothing of the batch is in flight yet: its requests fail as
		// waiting ones, the forwarded ones refused to their servers.
		r.cfg.Logger.Warn("proposal dropped", "err", err)
		r.waiting = r.waiting[b.from:]
		r.batch = batch{}
		r.dropAll()
		return false
	}
	for _, q := range b.reqs {
		if q.own {
			r.inflight.add(q.seq, r.newInflight(q.tag))
		}
		r.proposed = append(r.proposed, q.prepped)
	}
	// Fresh slices for the next batch: raft keeps the message's entries
	// (appending them, or forwarding the message) and sets their terms
	// and indexes.
	clear(b.reqs)
	*b = batch{reqs: b.reqs[:0]}
	return true
}

// proposeEntries proposes plain entries in one message.
func (r *Replica) proposeEntries(ents []raftpb.Entry) error {
	return r.rn.Step(raftpb.Message{Type: raftpb.MsgProp, From: r.cfg.ID, Entries: ents})
}

// forwardAll sends this server's waiting requests to the leader, which
// preps them; the txn's envelope brings the sequence number back. Requests
// other servers forwarded here, thinking this one led, are refused.
func (r *Replica) forwardAll(lead uint64) {
	for _, p := range r.waiting {
		switch {
		case p.origin != 0:
			r.refuse(p.origin, p.oseq, "not the leader")
			continue
		case p.req.Op == jute.OpSync:
			// raft forwards the ReadIndex to the leader.
			r.startSync(p.tag)
			continue
		}
		r.nextSeq()
		if !r.cfg.Transport.Send(lead, KindForward, encodeForward(r.seq, &p.req)) {
			r.cfg.OnApply(Event{Kind: Dropped, Zxid: r.lastZxid.Load(), Tag: p.tag})
			continue
		}
		r.inflight.add(r.seq, r.newInflight(p.tag))
	}
	clear(r.waiting)
	r.waiting = r.waiting[:0]
}

// startSync asks raft for the leader's commit index (ReadIndex) and waits
// for it, and for this server's earlier requests, to be applied.
func (r *Replica) startSync(tag uint64) {
	s := syncWait{tag: tag, afterSeq: r.seq, deadline: r.ticks.Load() + uint64(r.cfg.RequestTicks)}
	r.askReadIndex(&s)
	s.first = r.syncID
	r.syncs = append(r.syncs, s)
}

// askReadIndex asks raft for the leader's commit index for s, under a
// context no other request has. The leader keeps one pending ReadIndex per
// context and ignores another with the same one, so the context names
// this server (every member counts its own syncs) and a number that
// starts at random (a restarted member counts again).
func (r *Replica) askReadIndex(s *syncWait) {
	r.syncID++
	s.askedAt = r.ticks.Load()
	ctx := binary.BigEndian.AppendUint64(make([]byte, 0, readCtxLen), r.cfg.ID)
	r.rn.ReadIndex(binary.BigEndian.AppendUint64(ctx, r.syncID))
}

// readCtxLen is the length of a ReadIndex context: the member's id and
// the sync's number.
const readCtxLen = 16

// tickSyncs fails the syncs raft has not answered by their deadline, as
// expire does writes, and asks again for the read index of those it has
// not answered within an election timeout. Raft asks once and never
// again: it drops a ReadIndex when it knows no leader, and the request to
// the leader, or the answer, is lost with a broken link. Without asking
// again, such a sync would wait until the leader changed. A sync with its
// read index waits on applies and this server's earlier writes, which
// have deadlines of their own.
func (r *Replica) tickSyncs() {
	now := r.ticks.Load()
	kept, failed := r.syncs[:0], 0
	for _, s := range r.syncs {
		switch {
		case s.index == 0 && s.deadline <= now:
			r.cfg.OnApply(Event{Kind: Dropped, Zxid: r.lastZxid.Load(), Tag: s.tag})
			failed++
			continue
		case s.index == 0 && now-s.askedAt >= uint64(r.cfg.ElectionTicks):
			r.askReadIndex(&s)
		}
		kept = append(kept, s)
	}
	clear(r.syncs[len(kept):])
	r.syncs = kept
	if failed > 0 {
		r.cfg.Logger.Warn("syncs not answered in time; failing them", "syncs", failed, "ticks", r.cfg.RequestTicks)
	}
}

// receive handles a message from another member.
func (r *Replica) receive(in inbound) {
	if r.lost != nil {
		return // stopping: raft's state is not to be touched again
	}
	switch in.kind {
	case kindSnapshot:
		r.receiveSnapshot(in)
	case KindRaft:
		var m raftpb.Message
		err := m.Unmarshal(in.data)
		bufpool.Put(in.buf) // Unmarshal copies what it keeps
		if err != nil {
			r.cfg.Logger.Warn("dropping a peer message", "from", in.from, "err", err)
			return
		}
		if m.From == r.lead.last || m.Type == raftpb.MsgApp || m.Type == raftpb.MsgHeartbeat || m.Type == raftpb.MsgSnap {
			r.lead.since = 0 // a leader's message, or the leader's
		}
		if r.staleForEmptyLog(m) {
			return
		}
		if err := r.step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
			r.cfg.Logger.Debug("raft step", "from", in.from, "type", m.Type, "err", err)
		}
	case KindForward:
		seq, req, err := decodeForward(in.data)
		if err != nil {
			r.cfg.Logger.Warn("dropping a peer message", "from", in.from, "err", err)
			return
		}
		if len(r.waiting) >= r.cfg.MaxPending {
			r.refuse(in.from, seq, "too many requests waiting to be prepped")
			return
		}
		r.waiting = append(r.waiting, proposal{req: req, origin: in.from, oseq: seq})
	case KindEmpty:
		r.dropEmptied(in.from)
	case KindNack:
		seq, err := decodeNack(in.data)
		if err != nil {
			r.cfg.Logger.Warn("dropping a peer message", "from", in.from, "err", err)
			return
		}
		if f, ok := r.inflight.take(seq); ok {
			r.cfg.Logger.Info("the leader refused a forwarded request", "leader", in.from)
			r.failRequest(f)
		}
	}
}

// newInflight is a request of tag going out now, with its deadline.
func (r *Replica) newInflight(tag uint64) inflight {
	return inflight{tag: tag, deadline: r.ticks.Load() + uint64(r.cfg.RequestTicks)}
}

// failRequest reports a request proposed or forwarded here as failed: it
// was lost on the way, or waited past its deadline. It may still apply
// (ConnectionLoss to its client allows that).
func (r *Replica) failRequest(f inflight) {
	r.cfg.OnApply(Event{Kind: Dropped, Zxid: r.lastZxid.Load(), Tag: f.tag})
}

// expire fails the requests whose deadline has passed.
func (r *Replica) expire() {
	n := 0
	r.inflight.takeExpired(r.ticks.Load(), func(f inflight) {
		n++
		r.failRequest(f)
	})
	if n > 0 {
		r.cfg.Logger.Warn("requests not applied in time; failing them", "requests", n, "ticks", r.cfg.RequestTicks)
	}
}

// refuse tells a forward's origin that this replica will not prep it, so
// that its request fails at once rather than at its deadline. Refusals
// are counted, and logged at most once an election timeout.
func (r *Replica) refuse(origin, seq uint64, why string) {
	n := r.refused.Add(1)
	if r.refusedLog == 0 || r.ticks.Load()-r.refusedLog >= uint64(r.cfg.ElectionTicks) {
		r.refusedLog = max(r.ticks.Load(), 1)
		r.cfg.Logger.Warn("refusing a forwarded request", "origin", origin, "why", why, "refused_total", n)
	}
	if r.cfg.Transport != nil {
		r.cfg.Transport.Send(origin, KindNack, encodeNack(seq)) // lost: the origin's deadline covers it
	}
}

// send hands raft's messages to the transport. A peer it cannot reach is
// reported to raft at the end of the turn (reportUnreachable).
func (r *Replica) send(msgs []raftpb.Message) {
	for i := range msgs {
		m := &msgs[i]
		if m.To == r.cfg.ID || r.cfg.Transport == nil {
			continue
		}
		if m.Type == raftpb.MsgSnap {
			r.sendSnapshot(*m)
			continue
		}
		if !r.sendRaft(m) {
			r.unreachable = append(r.unreachable, m.To)
		}
	}
}

// sendRaft hands one raft message to the transport and reports false if
// the peer could not take it. It reads only the Config, so the log writer
// may call it too (sendDurable).
//
// A transport that writes from pooled buffers (BufferSender: the peer
// transport's) gets a large message in one, and puts it back once written:
// a leader's batches of entries were each allocated and zeroed to be
// written once, 5% of its CPU on three servers at 0% reads (issue 14).
func (r *Replica) sendRaft(m *raftpb.Message) bool {
	size := m.Size()
	bs, _ := r.cfg.Transport.(BufferSender)
	var buf *[]byte
	if bs != nil {
		buf = bufpool.Get(size)
	}
	var data []byte
	if buf != nil {
		data = *buf
	} else {
		data = make([]byte, size)
	}
	// raftpb writes the message back to front, so it fills data only if
	// Size was right; anything else is an encoding error, as a pooled
	// buffer's stale bytes would otherwise go out.
	if n, err := m.MarshalToSizedBuffer(data); err != nil || n != size {
		bufpool.Put(buf)
		r.cfg.Logger.Error("encoding a raft message", "err", err, "size", size, "written", n)
		return true // nothing to retry: raft would only make it again
	}
	if buf != nil {
		return bs.SendBuffer(m.To, KindRaft, buf)
	}
	return r.cfg.Transport.Send(m.To, KindRaft, data)
}

// Raft runs with AsyncStorageWrites: a Ready hands its log writes
// (MsgStorageAppend, to raft.LocalAppendThread) and its committed entries
// (MsgStorageApply, to raft.LocalApplyThread) over as messages, and every
// other message may go out at once. So the leader sends its new entries to
// the followers while it writes them itself (raft thesis §10.2.1), and no
// heartbeat, vote request or heartbeat answer waits for a disk. What must
// wait for the write (an append or a vote acknowledged, the leader's own
// ack of its entries) comes back as the write's Responses, delivered only
// once the write is durable (appendDone). raft hands entries to apply
// only once they are durable here, and applies them after a restart from
// the log: fsync before acknowledgement stays.
//
// A running server's driver does the writes on a goroutine of its own
// (driver.go), so the loop keeps ticking, sending and receiving while the
// disk is slow; a core stepped directly does each write at once, in
// order, so that a simulation stays deterministic.

// processReady handles every Ready raft has: it sends the messages,
// starts the log writes and queues the entries to apply, then applies
// them until enough says to stop (see applySome). more reports work left:
// entries still to apply, or a new Ready. An error means the log cannot
// be written: nothing of the failed write was acknowledged.
func (r *Replica) processReady(enough func() bool) (more bool, err error) {
	for r.rn.HasReady() {
		rd := r.rn.Ready()
		for i := range rd.Messages {
			switch rd.Messages[i].To {
			case raft.LocalAppendThread:
				if err := r.storeAppend(rd.Messages[i]); err != nil {
					return false, err
				}
			case raft.LocalApplyThread:
				r.toApply = append(r.toApply, pendingApply{m: rd.Messages[i], after: r.applyAfter})
			default:
				r.send(rd.Messages[i : i+1])
			}
		}
		for _, rs := range rd.ReadStates {
			r.readState(rs)
		}
	}
	r.applySome(enough)
	r.evictApplied()
	r.replayProgress()
	r.reportUnreachable()
	r.reportStreams()
	r.completeSyncs()
	if err := r.maybeSnapshot(); err != nil {
		return false, err
	}
	if err := r.disk.Err(); err != nil {
		return false, fmt.Errorf("replica: reading the log back: %w", err)
	}
	return r.canApply() || r.rn.HasReady(), nil
}

// pendingApply is a MsgStorageApply waiting to be applied, and how many
// log writes must be done before it may be (applyAfter when it was
// queued). Its entries are durable already: with async storage writes
// raft hands over only entries this member has written.
//
// A sole voter (standalone, or an ensemble's only voter, learners aside:
// setConfState) waits for every write started before it, its own
// Ready's included. Its Ready's write holds the commit index that covers
// its entries; applying (and so acknowledging) them before that is
// written would let a restarted server come up, and serve, without txns
// it had acknowledged until a new election commits them again.
//
// Any other member writes that commit index lazily, with no fsync of its own
// (wal's LazyCommit): a member may come back with an older one, does not
// serve until it hears from a leader, and the leader's next entry commits
// every entry a quorum holds. So waiting for that write bought nothing
// but the log writer's round trip and, on the leader, the fsync of the
// newer entries sharing the Ready: 0.1–0.3 ms of a write's latency at one
// client. Its applies wait only for a snapshot installed by an earlier
// write, which the entries after it must land on.
type pendingApply struct {
	m     raftpb.Message
	after uint64
}

// canApply reports whether an entry may be applied now.
func (r *Replica) canApply() bool {
	return len(r.toApply) > 0 && r.toApply[0].after <= r.appendsDone
}

// settle processes until nothing is left to do: no Ready, nothing to
// apply, no write pending.
func (r *Replica) settle() error {
	for {
		more, err := r.processReady(nil)
		if err != nil || !more {
			return err
		}
	}
}

// storeAppend makes a MsgStorageAppend durable: now, or on the driver's
// log writer, which reports back to the loop (appendDone).
func (r *Replica) storeAppend(m raftpb.Message) error {
	r.appendsSent++
	r.commitWithEntries(&m)
	if !r.lazyCommit || m.Snapshot != nil {
		r.applyAfter = r.appendsSent // see pendingApply
	}
	if r.drv != nil && r.drv.writing {
		return r.drv.queueAppend(r, m)
	}
	return r.appendDone(m, r.save(m), false)
}

// commitWithEntries writes a sole voter's commit index with the entries
// it appends as leader: they are committed the moment they are durable,
// as raft says in its next Ready. Saved apart, that commit index cost a
// second fsync before the entries could be applied and answered: two
// fsyncs in series per write at one client (0.68 ms a create, standalone
// Table 2). In the same write it is durable with them, or lost with them
// (the log is recovered up to its first torn record), and raft's own
// commit-only write is then skipped (wal's save).
func (r *Replica) commitWithEntries(m *raftpb.Message) {
	if len(m.Entries) == 0 || !r.soleVoter() {
		return
	}
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		return
	}
	m.Term, m.Vote = st.Term, st.Vote
	m.Commit = max(st.Commit, m.Commit, m.Entries[len(m.Entries)-1].Index)
}

// save writes a MsgStorageAppend's snapshot marker, entries and hard
// state, durably. It touches no core state: the driver runs it off the
// loop.
func (r *Replica) save(m raftpb.Message) error {
	var sn raftpb.Snapshot
	if m.Snapshot != nil {
		sn = *m.Snapshot
	}
	hs := raftpb.HardState{Term: m.Term, Vote: m.Vote, Commit: m.Commit}
	return r.persist(hs, m.Entries, sn)
}

// groupable returns how many writes from the start of ms one save can
// make durable together: entries that follow on from each other, with no
// snapshot among them (a snapshot's write stands alone).
func groupable(ms []raftpb.Message) int {
	if ms[0].Snapshot != nil {
		return 1
	}
	var last uint64 // index of the last entry so far; 0: none yet
	for i := range ms {
		m := &ms[i]
		if m.Snapshot != nil {
			return i
		}
		if len(m.Entries) == 0 {
			continue
		}
		if last != 0 && m.Entries[0].Index != last+1 {
			return i // a truncation: raft replaced entries; a save of its own
		}
		last = m.Entries[len(m.Entries)-1].Index
	}
	return len(ms)
}

// saveGroup makes writes groupable says go together durable with one
// save: their entries in order, and the last hard state among them
// (term, vote and commit only grow).
func (r *Replica) saveGroup(ms []raftpb.Message) error {
	if len(ms) == 1 {
		return r.save(ms[0])
	}
	var (
		hs   raftpb.HardState
		ents []raftpb.Entry
	)
	for i := range ms {
		ents = append(ents, ms[i].Entries...)
		if h := (raftpb.HardState{Term: ms[i].Term, Vote: ms[i].Vote, Commit: ms[i].Commit}); !raft.IsEmptyHardState(h) {
			hs = h
		}
	}
	return r.persist(hs, ents, raftpb.Snapshot{})
}

// appendDone follows a durable write: a snapshot from the leader
// replaces the state, then the write's responses go out (to other
// members, unless the log writer sent them: sent) or back into raft
// (this member's own acks). An error is the write's, and fatal.
func (r *Replica) appendDone(m raftpb.Message, err error, sent bool) error {
	if err != nil {
		return err
	}
	r.appendsDone++
	if m.Snapshot != nil && !raft.IsEmptySnap(*m.Snapshot) {
		// Entries committed before the snapshot may still wait to be
		// applied: they go first, or they would land on the newer state.
		r.applySome(nil)
		if err := r.install(*m.Snapshot); err != nil {
			return err
		}
	}
	for i := range m.Responses {
		if m.Responses[i].To == r.cfg.ID {
			r.stepLocal(m.Responses[i])
		} else if !sent {
			r.send(m.Responses[i : i+1])
		}
	}
	return nil
}

// sendDurable sends, from the log writer, a durable write's responses to
// other members (a follower's acknowledgement of the leader's entries, a
// vote), and returns the peers a send failed to. Handing them to the loop
// first cost a wake-up of the loop and its turn, 0.1–0.3 ms between a
// follower's fsync and its ack on 2 busy cores, and that ack is what
// commits a write. It reads only the Config, so it is safe off the loop.
// A write with a snapshot is left to the loop, which installs the
// snapshot before acknowledging it.
func (r *Replica) sendDurable(m *raftpb.Message) (sent bool, unreachable []uint64) {
	if m.Snapshot != nil || r.cfg.Transport == nil {
		return false, nil
	}
	for i := range m.Responses {
		resp := &m.Responses[i]
		if resp.To != r.cfg.ID && !r.sendRaft(resp) {
			unreachable = append(unreachable, resp.To)
		}
	}
	return true, unreachable
}

// stepLocal hands raft a response addressed to this member.
func (r *Replica) stepLocal(m raftpb.Message) {
	if err := r.rn.Step(m); err != nil {
		r.cfg.Logger.Debug("raft step local", "type", m.Type, "err", err)
	}
}

// applySome applies the queued committed entries whose log writes are
// done (see pendingApply), telling raft of each MsgStorageApply once it
// is all applied. With enough set, it stops as
// soon as enough reports true (checked after each entry): the driver bounds each turn's share so that ticks,
// heartbeats and received messages are handled between slices of a long
// apply. A nil enough applies everything.
func (r *Replica) applySome(enough func() bool) {
	for r.canApply() {
		m := &r.toApply[0].m
		for r.applyPos < len(m.Entries) {
			end := len(m.Entries)
			if enough != nil {
				end = r.applyPos + 1
			}
			r.apply(m.Entries[r.applyPos:end])
			r.applyPos = end
			if end < len(m.Entries) && enough() {
				return
			}
		}
		resps := m.Responses
		r.toApply[0] = pendingApply{}
		r.toApply = r.toApply[1:]
		r.applyPos = 0
		for i := range resps {
			r.stepLocal(resps[i])
		}
		if enough != nil && enough() {
			return
		}
	}
}

// reportUnreachable tells raft of the peers a send failed to.
func (r *Replica) reportUnreachable() {
	for _, id := range r.unreachable {
		r.rn.ReportUnreachable(id)
	}
	r.unreachable = r.unreachable[:0]
}

// readState records the read index raft answered for this server's
// ReadIndex number n. It serves every sync still waiting for one that
// began before n was asked, not only the sync that asked it: the index is
// the leader's commit index when n reached it, which is at least what had
// committed when any of those syncs began. So an answer that comes after
// its sync asked again is not wasted, and syncs in a burst are answered
// together. A context of another member's (a follower passes a ReadIndex
// on to its leader, and is answered in its stead) serves none.
func (r *Replica) readState(rs raft.ReadState) {
	if len(rs.RequestCtx) != readCtxLen || binary.BigEndian.Uint64(rs.RequestCtx) != r.cfg.ID {
		return
	}
	n := binary.BigEndian.Uint64(rs.RequestCtx[8:])
	for i := range r.syncs {
		s := &r.syncs[i]
		if s.first > n {
			break // syncs are in the order they began, and numbers grow
		}
		if s.index == 0 {
			s.index = rs.Index
		}
	}
}

func (r *Replica) apply(ents []raftpb.Entry) {
	if mutated(MutApplyOutOfOrder) && len(ents) >= 2 && ents[0].Type == raftpb.EntryNormal && ents[1].Type == raftpb.EntryNormal {
		ents = slices.Clone(ents)
		ents[0].Data, ents[1].Data = ents[1].Data, ents[0].Data
	}
	for i := range ents {
		e := &ents[i]
		switch e.Type {
		case raftpb.EntryNormal:
			if len(e.Data) > 0 {
				r.applyTxn(e)
			}
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			r.applyConfChange(e)
		}
		r.applied, r.appliedTerm = e.Index, e.Term
		r.lastZxid.Store(int64(e.Index))
		r.countApplied(1, int64(len(e.Data)))
	}
}

func (r *Replica) applyTxn(e *raftpb.Entry) {
	r.applyEntryData(e.Index, e.Data)
}

// applyEntryData applies a txn's log entry data (an envelope and the txn),
// from a plain entry or a membership change's Context.
func (r *Replica) applyEntryData(index uint64, data []byte) {
	origin, seq, body, err := OpenEnvelope(data)
	if err != nil {
		r.cfg.Logger.Error("skipping malformed log entry", "index", index, "err", err)
		return
	}
	var (
		t    *txn.Txn
		tag  uint64
		mine bool // prepped here
	)
	if len(r.proposed) > 0 && r.proposed[0].origin == origin && r.proposed[0].seq == seq {
		t, mine = r.proposed[0].txn, true
		r.proposed[0] = prepped{}
		r.proposed = r.proposed[1:]
	}
	if origin == r.cfg.ID {
		// The gap rule: this server's requests commit in sequence order,
		// so those before seq still waiting were lost. They fail before
		// this one is answered, keeping each session's order.
		if !mutated(MutNoGapRule) {
			r.inflight.takeBefore(seq, r.failRequest)
		}
		if f, ok := r.inflight.take(seq); ok {
			tag = f.tag
		}
		// Entries replayed after a restart carry the sequence numbers of
		// the previous run; new proposals must come after them, or a sync
		// could wait for (or skip) the wrong proposal.
		r.seq = max(r.seq, seq)
	}
	if t == nil {
		// Entries are never changed once made, and the txn does not
		// outlive its apply, which copies its data into the tree.
		if t, err = txn.UnmarshalShared(body); err != nil {
			r.cfg.Logger.Error("skipping undecodable txn", "index", index, "err", err)
			return
		}
	}
	if mutated(MutExpiryOnOneMember) && t.Type == jute.OpCloseSession && r.cfg.ID != 1 {
		t = &txn.Txn{SessionID: t.SessionID, Type: jute.OpError, Body: &txn.ErrorTxn{Err: jute.OK}}
	}
	zxid := int64(index)
	r.mu.Lock()
	res := txn.Apply(r.state, t, zxid)
	r.lastZxid.Store(zxid)
	r.cfg.OnApply(Event{Kind: Applied, Zxid: zxid, Tag: tag, Txn: t, Result: &res, State: r.state})
	r.mu.Unlock()
	if mine {
		r.cfg.Prep.Applied(t)
	}
}

func (r *Replica) applyConfChange(e *raftpb.Entry) {
	var cc raftpb.ConfChangeV2
	if e.Type == raftpb.EntryConfChange {
		var v1 raftpb.ConfChange
		if err := v1.Unmarshal(e.Data); err != nil {
			r.cfg.Logger.Error("bad conf change", "index", e.Index, "err", err)
			return
		}
		cc = v1.AsV2()
	} else if err := cc.Unmarshal(e.Data); err != nil {
		r.cfg.Logger.Error("bad conf change", "index", e.Index, "err", err)
		return
	}
	// The txn first, so that /zookeeper/config and raft's membership
	// change at the same entry; a change raft made on its own (leaving a
	// joint configuration) carries none.
	if len(cc.Context) > 0 {
		r.applyEntryData(e.Index, cc.Context)
	}
	r.setConfState(*r.rn.ApplyConfChange(cc))
	r.confPending = false
	r.confIndex = e.Index
	r.cfg.Logger.Info("membership changed", "index", e.Index, "voters", r.confState.Voters,
		"learners", r.confState.Learners, "joint", len(r.confState.VotersOutgoing) > 0)
	r.mu.Lock()
	r.cfg.OnApply(Event{Kind: ConfChanged, Zxid: r.lastZxid.Load(), State: r.state})
	r.mu.Unlock()
}

// completeSyncs answers the syncs whose read index is applied. Syncs are
// answered in the order they arrived, as a session's requests must be.
func (r *Replica) completeSyncs() {
	n := 0
	for _, s := range r.syncs {
		if !mutated(MutSyncSkipsReadIndex) && (s.index == 0 || s.index > r.applied || r.inflight.waitingUpTo(s.afterSeq)) {
			break
		}
		r.cfg.OnApply(Event{Kind: Synced, Zxid: r.lastZxid.Load(), Tag: s.tag})
		n++
	}
	if n > 0 {
		r.syncs = append(r.syncs[:0], r.syncs[n:]...)
	}
}

// dropAll fails every request that will not be applied and resets prep,
// whose outstanding changes described txns that may never be.
func (r *Replica) dropAll() {
	zxid := r.lastZxid.Load()
	for _, p := range r.waiting {
		if p.origin == 0 {
			r.cfg.OnApply(Event{Kind: Dropped, Zxid: zxid, Tag: p.tag})
		} else {
			r.refuse(p.origin, p.oseq, "dropped by a leader change")
		}
	}
	r.waiting = r.waiting[:0]
	// Syncs wait for nothing dropped: whatever of it still applies does
	// so without a waiting request.
	r.inflight.takeAll(r.failRequest)
	for _, s := range r.syncs {
		r.cfg.OnApply(Event{Kind: Dropped, Zxid: zxid, Tag: s.tag})
	}
	r.syncs = nil
	clear(r.proposed)
	r.proposed = r.proposed[:0]
	// A membership change proposed here may have been lost with the
	// leadership; raft tracks its own pending one (a new leader waits
	// for its log to apply before taking another).
	r.confPending = false
	r.cfg.Prep.Reset()
}

// entryData returns the log entry's data for t: the envelope and the
// encoded txn, in an allocation of its exact size. Raft keeps the entry
// until the log is compacted, and every byte allocated per write costs
// the collector (issue 17), so the txn is encoded to a scratch buffer and
// copied rather than into an allocation sized by a guess with slack (128
// bytes more than the path and data, which was up to half the entry).
func (r *Replica) entryData(origin, seq uint64, t *txn.Txn) []byte {
	r.enc.B = appendEnvelope(r.enc.B[:0], origin, seq)
	t.MarshalTo(&r.enc)
	// One copy of the exact size, not zeroed first as a make of the
	// size would be: the entry is raft's from here on, the scratch ours.
	data := bytes.Clone(r.enc.B)
	if cap(r.enc.B) > maxEncodeBuf {
		r.enc.B = nil // a large txn's buffer is not kept
	}
	return data
}

// maxEncodeBuf is the largest scratch buffer entryData keeps.
const maxEncodeBuf = 64 << 10

// step hands m to raft. Raft panics when a leader's heartbeat asks it to
// commit past the end of its log, which means this member lost entries it
// had acknowledged (see ErrLostLog). That panic is caught here and turned
// into ErrLostLog, which stops the replica with a message an operator can
// act on, instead of a crash at every restart; any other panic goes on.
func (r *Replica) step(m raftpb.Message) (err error) {
	if m.Type == raftpb.MsgHeartbeat {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			s := fmt.Sprint(p)
			if !strings.Contains(s, "out of range [lastIndex") {
				panic(p)
			}
			r.lost = fmt.Errorf("%w (the leader, server %d, has it holding entries its log does not: %s): "+
				"remove it from the ensemble (reconfig -remove %d), then start it empty and add it back, "+
				"or restore its data directory", ErrLostLog, m.From, s, r.cfg.ID)
			err = r.lost
		}()
	}
	return r.rn.Step(m)
}
