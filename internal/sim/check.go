package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
)

// porcOp is one entry of the linearizability history.
type porcOp = porcupine.Operation

func (s *Sim) clock() time.Time { return time.UnixMilli(epochMs + s.now) }

// record adds an answered (or, unknown, lost) call on a key to the
// history; other calls are not part of the model.
func (s *Sim) record(cl *call, out kvOutput, ret int64) {
	switch cl.in.op {
	case opCreate, opSet, opDelete, opMulti:
	case opSyncRead:
		if out.unknown {
			return // a read that never answered says nothing
		}
	default:
		return
	}
	if out.unknown {
		ret = math.MaxInt64 // it may take effect at any time after its call
	}
	s.hist = append(s.hist, porcOp{ClientId: cl.cl.id, Input: cl.in, Call: cl.start, Output: out, Return: ret})
}

// applied checks a txn applied on m against the first member that
// applied the same zxid: the same state digest and the same changes.
func (s *Sim) applied(m *member, ev replica.Event) {
	d := stateDigest(ev.State)
	if prev, ok := s.digest[ev.Zxid]; !ok {
		s.digest[ev.Zxid] = d
	} else if prev != d {
		s.fail("divergence: m%d's state after zxid %d (%s) differs from another member's", m.id, ev.Zxid, ev.Txn)
	}
	var trig []string
	for _, t := range ev.Result.Triggers {
		trig = append(trig, fmt.Sprintf("%d:%s", t.Type, t.Path))
	}
	ts := strings.Join(trig, ",")
	if prev, ok := s.trig[ev.Zxid]; !ok {
		s.trig[ev.Zxid] = ts
		for _, t := range ev.Result.Triggers {
			s.trigs[ev.Zxid] = append(s.trigs[ev.Zxid], appliedTrigger{ev.Zxid, t.Path, t.Type})
		}
	} else if prev != ts {
		s.fail("divergence: zxid %d fired %q on m%d, %q elsewhere", ev.Zxid, ts, m.id, prev)
	}
	if ev.Txn.Type == jute.OpCloseSession && ev.Result.Err == jute.OK {
		s.sessionEnded(ev.Txn.SessionID)
	}
}

// restored checks a snapshot installed on m against the digest at its zxid.
func (s *Sim) restored(m *member, zxid int64) {
	d := stateDigest(m.state)
	if prev, ok := s.digest[zxid]; ok && prev != d {
		s.fail("divergence: m%d installed a snapshot at %d that differs from the state there", m.id, zxid)
	} else if !ok {
		s.digest[zxid] = d
	}
}

func (s *Sim) sessionEnded(id int64) {
	s.ended[id] = true
}

// heal ends every fault: links back, disks fine, members up and awake.
func (s *Sim) heal() {
	s.logf("heal")
	for _, row := range s.net.cut {
		clear(row)
	}
	s.net.drop, s.net.dup, s.net.maxDelay = 0, 0, 3
	for _, m := range s.members {
		m.full, m.syncFail = false, false
		if !m.up && !m.rotted && m.started {
			m.start()
		}
	}
}

// serving returns the members that are up and in the membership.
func (s *Sim) serving() []*member {
	var ups []*member
	for _, m := range s.members {
		if m.up && s.inConfig[m.id] {
			ups = append(ups, m)
		}
	}
	return ups
}

// settle runs on, up to until, while the members that serve disagree on
// the last zxid applied: a leader's housekeeping (an expiry, or a TTL
// node's removal on a clock that was set back) may still be proposing when
// the time to heal ends, and convergence is judged on a quiet ensemble.
func (s *Sim) settle(until int64) {
	for s.now < until && !s.converged() {
		s.runUntil(min(s.now+50, until))
	}
}

// converged reports whether the members that serve have applied the same
// last zxid.
func (s *Sim) converged() bool {
	ups := s.serving()
	for _, m := range ups {
		if m.core.LastZxid() != ups[0].core.LastZxid() {
			return false
		}
	}
	return true
}

// finalReads reads every key on every member that is up, after the
// members converged: the reads join the history, so a write acknowledged
// and then lost fails the linearizability check.
func (s *Sim) finalReads() {
	ups := s.serving()
	if len(ups) == 0 {
		s.fail("no member is up after healing")
		return
	}
	last := ups[0].core.LastZxid()
	for _, m := range ups {
		if z := m.core.LastZxid(); z != last {
			s.fail("no convergence: m%d is at zxid %d, m%d at %d, after healing (%s)", m.id, z, ups[0].id, last, raftView(ups))
		}
		if d, ok := s.digest[m.core.LastZxid()]; ok && d != stateDigest(m.state) {
			s.fail("divergence: m%d's final state differs from the state at zxid %d", m.id, m.core.LastZxid())
		}
		for k := range nKeys {
			fake := &call{cl: &client{id: len(s.clients) + int(m.id)}, in: kvInput{op: opSyncRead, key: k}}
			s.stamp++
			fake.start = s.stamp
			out := m.readKey(k)
			s.stamp++
			s.record(fake, out, s.stamp)
			s.logf("final m%d %s = %s", m.id, fake.in, out)
		}
	}
}

// check runs the checks that need the whole run.
func (s *Sim) check() {
	s.checkLinearizable()
	for _, m := range s.members {
		if !m.up || !s.inConfig[m.id] {
			continue
		}
		// The clients have sent nothing since the heal, longer ago than
		// any session's timeout: every session has expired (a leader
		// that lost a session's closeSession proposed it again).
		for _, id := range slices.Sorted(maps.Keys(m.state.Sessions)) {
			s.fail("session %x outlived its timeout: live on m%d %dms after its client went quiet", id, m.id, s.now-s.opt.Duration)
		}
		for _, id := range slices.Sorted(maps.Keys(s.ended)) {
			if _, ok := m.state.Sessions[id]; ok {
				s.fail("session %x was closed but m%d still has it", id, m.id)
			}
			if eph := m.state.Tree.Ephemerals(id); len(eph) > 0 {
				s.fail("ephemerals %v of ended session %x survive on m%d", eph, id, m.id)
			}
		}
	}
	for _, c := range s.clients {
		if c.conn == nil || c.conn.closed {
			continue
		}
		m := c.conn.m
		if s.ended[c.conn.session] {
			// Its client would go on as if the session lived.
			s.fail("the connection of c%d's ended session %x is still open on m%d", c.id, c.conn.session, m.id)
		}
		if c.conn.handshake || slices.ContainsFunc(c.calls, func(cl *call) bool { return cl.in.op == opSetWatches }) {
			continue // its watches are not (yet) registered on this connection
		}
		// Every event its watches are owed for what the member applied
		// has come: the run has been quiet long enough to deliver all.
		for {
			t, ok := c.nextOwed(c.conn, math.MaxInt64)
			if !ok {
				break
			}
			s.fail("watch lost: c%d never got the event %d on %s of zxid %d from m%d", c.id, t.typ, t.path, t.zxid, m.id)
		}
	}
}

// linCheckTimeout bounds porcupine per run.
const linCheckTimeout = 10 * time.Second

func (s *Sim) checkLinearizable() {
	res, info := porcupine.CheckOperationsVerbose(kvModel, s.hist, linCheckTimeout)
	switch res {
	case porcupine.Illegal:
		_ = info
		s.fail("not linearizable: %d operations on %d keys", len(s.hist), nKeys)
		if s.opt.Trace {
			s.explainIllegal()
		}
	case porcupine.Unknown:
		s.logf("linearizability check timed out")
	}
}

// kvNode is one key's state in the model.
type kvNode struct {
	exists  bool
	data    string
	version int32
}

// sessionLevel reports codes that fail a request before it touches the
// data: the model takes them as no change.
func sessionLevel(c jute.Code) bool {
	switch c {
	case jute.SessionExpired, jute.SessionMoved, jute.ConnectionLoss, jute.OperationTimeout, jute.MarshallingError:
		return true
	}
	return false
}

// modelApply is what ZooKeeper does to one key, with Apache's order of
// checks: the node's existence, then its ACL, then the version. Create
// and delete need CREATE and DELETE on the parent, the open root.
func modelApply(n kvNode, in kvInput) (jute.Code, kvNode) {
	verOK := func() bool { return in.version == -1 || in.version == n.version }
	may := func(perm int32) bool { return allowed(in.who, in.key, perm) }
	switch in.op {
	case opCreate:
		if n.exists {
			return jute.NodeExists, n
		}
		return jute.OK, kvNode{exists: true, data: in.data}
	case opSet:
		switch {
		case !n.exists:
			return jute.NoNode, n
		case !may(jute.PermWrite):
			return jute.NoAuth, n
		case !verOK():
			return jute.BadVersion, n
		}
		return jute.OK, kvNode{exists: true, data: in.data, version: n.version + 1}
	case opDelete:
		switch {
		case !n.exists:
			return jute.NoNode, n
		case !verOK():
			return jute.BadVersion, n
		}
		return jute.OK, kvNode{}
	case opMulti: // check key version (READ), then set the same key (WRITE)
		switch {
		case !n.exists:
			return jute.NoNode, n
		case !may(jute.PermRead):
			return jute.NoAuth, n
		case !verOK():
			return jute.BadVersion, n
		case !may(jute.PermWrite):
			return jute.NoAuth, n
		}
		return jute.OK, kvNode{exists: true, data: in.data2, version: n.version + 1}
	}
	return jute.OK, n
}

var kvModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		parts := make([][]porcupine.Operation, nKeys)
		for _, op := range h {
			k := op.Input.(kvInput).key
			parts[k] = append(parts[k], op)
		}
		return slices.DeleteFunc(parts, func(p []porcupine.Operation) bool { return len(p) == 0 })
	},
	Init: func() any { return kvNode{} },
	Step: func(state, input, output any) (bool, any) {
		n, in, out := state.(kvNode), input.(kvInput), output.(kvOutput)
		if in.op == opSyncRead {
			switch out.code {
			case jute.NoNode:
				return !n.exists, n
			case jute.NoAuth:
				return n.exists && !allowed(in.who, in.key, jute.PermRead), n
			}
			return out.code == jute.OK && n.exists && allowed(in.who, in.key, jute.PermRead) &&
				out.data == n.data && out.version == n.version, n
		}
		if !out.unknown && sessionLevel(out.code) {
			return true, n
		}
		code, next := modelApply(n, in)
		if out.unknown {
			return true, next
		}
		if out.code != code {
			return false, n
		}
		if in.op == opSet && code == jute.OK && out.version != next.version {
			return false, n
		}
		return true, next
	},
	DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s -> %s", in.(kvInput), out.(kvOutput)) },
}

// explainIllegal adds to the trace the history of each key whose
// operations are not linearizable, in call order.
func (s *Sim) explainIllegal() {
	for _, part := range kvModel.Partition(s.hist) {
		m := kvModel
		m.Partition = nil
		if porcupine.CheckOperations(m, part) {
			continue
		}
		ops := slices.Clone(part)
		slices.SortFunc(ops, func(a, b porcOp) int { return int(a.Call - b.Call) })
		s.trace = append(s.trace, "not linearizable, the history of "+keyPath(ops[0].Input.(kvInput).key)+":")
		for _, op := range ops {
			ret := fmt.Sprint(op.Return)
			if op.Return == math.MaxInt64 {
				ret = "never"
			}
			s.trace = append(s.trace, fmt.Sprintf("  [%d, %s] c%d %s -> %s", op.Call, ret, op.ClientId, op.Input.(kvInput), op.Output.(kvOutput)))
		}
	}
}

// raftView says what each member's raft thinks: its term, its leader,
// raft's membership and, on a leader, each peer's Match. A run that does
// not converge is read from it.
func raftView(ms []*member) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "m%d: term %d leader %d voters %v members %v", m.id, m.core.Term(), m.core.Leader(), m.core.Voters(), m.core.Members())
		for _, p := range m.core.Progress() {
			fmt.Fprintf(&b, " m%d@%d", p.ID, p.Match)
		}
	}
	return b.String()
}
