package sim

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/zoohq/zoo/internal/vfs"
)

// injectFault injects one fault at random and schedules the next.
func (s *Sim) injectFault() {
	if !s.faulty {
		return
	}
	defer s.after(s.between(50, 500), s.injectFault)
	s.faults++
	m := s.members[s.rng.IntN(len(s.members))]
	if !m.started {
		return
	}
	if !s.opt.NoReconfig && (s.chance(0.1) || s.repair != nil && s.chance(0.3)) {
		s.reconfig()
		return
	}
	switch r := s.rng.IntN(100); {
	case r < 20:
		torn := s.chance(0.3)
		m.crash(torn)
		// At most one member's data is lost at a time, until its repair
		// is over (it is back in the ensemble with the leader's state): two at once can
		// take a majority's log, and then no ensemble recovers by itself.
		switch {
		case s.anyRotted() || s.repair != nil:
		case s.opt.RotLogEnd:
			s.rotLogEnd(m)
		case !m.rotted && s.chance(0.15):
			s.rot(m)
		}
		s.after(s.between(100, 1500), m.restart)
	case r < 30:
		d := s.between(50, 1500)
		m.pause(d)
	case r < 50:
		to := s.members[s.rng.IntN(len(s.members))]
		if to == m {
			return
		}
		both := s.chance(0.5)
		d := s.between(100, 2000)
		s.logf("cut m%d -> m%d (both ways %v) for %dms", m.id, to.id, both, d)
		s.net.cut[m.id][to.id] = true
		if both {
			s.net.cut[to.id][m.id] = true
		}
		s.after(d, func() {
			s.net.cut[m.id][to.id] = false
			if both {
				s.net.cut[to.id][m.id] = false
			}
		})
	case r < 60:
		d := s.between(200, 2000)
		s.logf("m%d isolated for %dms", m.id, d)
		for i := range s.net.cut {
			if i != int(m.id) && i > 0 {
				s.net.cut[m.id][i], s.net.cut[i][m.id] = true, true
			}
		}
		s.after(d, func() {
			for i := range s.net.cut {
				s.net.cut[m.id][i], s.net.cut[i][m.id] = false, false
			}
		})
	case r < 72:
		s.net.drop = s.rng.Float64() * 0.2
		s.net.dup = s.rng.Float64() * 0.1
		s.net.maxDelay = s.between(1, 40)
		s.logf("network: drop %.2f dup %.2f delay <=%dms", s.net.drop, s.net.dup, s.net.maxDelay)
	case r < 80:
		j := s.between(-3000, 3000)
		m.skew += j
		s.logf("m%d's clock jumps %dms", m.id, j)
	case r < 88:
		s.logf("m%d's next fsync fails", m.id)
		m.syncFail = true
	case r < 95:
		d := s.between(100, 1500)
		s.logf("m%d's disk is full for %dms", m.id, d)
		m.full = true
		s.after(d, func() { m.full = false })
	default:
		s.logf("network back to normal")
		s.net.drop, s.net.dup, s.net.maxDelay = 0, 0, 3
	}
}

// reconfig adds the spare member (started first, empty, to join), as a
// participant or as an observer; promotes it to participant if it joined
// as an observer (reconfig -add with the same server line, :participant);
// and once it votes, removes a member; each through a client's reconfig
// request.
func (s *Sim) reconfig() {
	var c *client
	for _, cl := range s.clients {
		// Only the super user may reconfigure the ensemble.
		if cl.who == idSuper && cl.conn != nil && cl.session != 0 && !cl.dead && len(cl.calls) < maxOutstanding && !cl.syncing() {
			c = cl
			break
		}
	}
	if c == nil || s.repairStep(c) {
		return
	}
	spare := s.members[len(s.members)-1]
	switch {
	case !s.inConfig[spare.id] && !s.removed:
		// Again after NewConfigNoQuorum: the spare had not caught up.
		if !spare.started {
			spare.start()
		}
		line := serverLine(spare.id)
		if s.chance(0.5) {
			line = observerLine(spare.id)
		}
		s.logf("reconfig: m%d joins: %s", spare.id, line)
		c.send(kvInput{op: opReconfig, data: line})
	case !s.removed && s.observers[spare.id]:
		s.logf("reconfig: observer m%d promoted to participant", spare.id)
		c.send(kvInput{op: opReconfig, data: serverLine(spare.id)})
	case !s.removed && len(s.inConfig) > s.opt.Members:
		s.removed = true
		ids := slices.Sorted(maps.Keys(s.inConfig))
		leave := ids[s.rng.IntN(len(ids))]
		s.logf("reconfig: m%d leaves", leave)
		c.send(kvInput{op: opReconfig, data2: fmt.Sprint(leave)})
	}
}

// repairStep is what an operator does with a member that refuses to
// start from its damaged disk, one step per call: remove it from the
// ensemble by reconfig, wipe its data directory, start it empty (joining,
// as internal/server starts a server with no data that finds its
// ensemble running) and add it back by reconfig; the leader then sends
// it a snapshot. It reports whether it sent a request. A voter is not
// wiped in place: with an empty log it would vote for a candidate that
// lacks entries it had acknowledged, and raft could lose them.
func (s *Sim) repairStep(c *client) bool {
	r := s.repair
	switch {
	case r == nil:
		return false
	case !r.wiped && s.inConfig[r.id]:
		s.logf("reconfig: m%d, which refused to start, leaves", r.id)
		c.send(kvInput{op: opReconfig, data2: fmt.Sprint(r.id)})
	case !r.wiped:
		// It may have started since (a restart found an older snapshot
		// sound): the operator stops it before wiping it.
		r.crash(false)
		s.logf("m%d's data directory wiped; it starts empty and joins", r.id)
		r.disk = vfs.NewMem()
		r.rotted, r.wiped, r.spare = false, true, true
		r.start()
		c.send(kvInput{op: opReconfig, data: serverLine(r.id)})
	case !s.inConfig[r.id]:
		s.logf("reconfig: m%d joins again", r.id)
		c.send(kvInput{op: opReconfig, data: serverLine(r.id)})
	case !r.up || r.core.LastZxid() == 0:
		return false // in the ensemble, not yet caught up: the repair goes on
	default:
		s.logf("m%d is back in the ensemble", r.id)
		s.repair = nil
		return false
	}
	return true
}

func (s *Sim) anyRotted() bool {
	for _, m := range s.members {
		if m.rotted {
			return true
		}
	}
	return false
}

// rot flips a bit in one of a crashed member's snapshot files or log
// segments: it must then refuse to start, or start from what is sound
// (an older snapshot and the log); it must never serve a state that lacks
// acknowledged writes. In a log segment the bit is put among the bytes
// written (up to the last non-zero one), where it damages records: in the
// last segment that is the case recovery must tell from a torn write (a
// record written whole and damaged is corruption, never cut off), as raft
// does not survive a voter that forgets what it acknowledged.
func (s *Sim) rot(m *member) {
	var targets []string
	for _, f := range m.disk.Files() {
		switch {
		case strings.HasPrefix(f, "snap/") && !strings.HasSuffix(f, ".tmp"):
			targets = append(targets, f)
		case strings.HasPrefix(f, "log/") && strings.HasSuffix(f, ".wal"):
			targets = append(targets, f)
		}
	}
	if len(targets) == 0 {
		return
	}
	f := targets[s.rng.IntN(len(targets))]
	n := writtenSize(m.disk, f)
	if n == 0 {
		return
	}
	off := s.rng.IntN(n)
	s.logf("bit rot in m%d's %s at %d", m.id, f, off)
	_ = m.disk.Corrupt(f, off, 1<<s.rng.IntN(8))
	m.rotted = true
}

// rotLogEnd flips a bit among the last records of a crashed member's last
// log segment (Options.RotLogEnd). The last written byte is left alone:
// clearing it would make the record look cut short, a torn write.
func (s *Sim) rotLogEnd(m *member) {
	var last string
	for _, f := range m.disk.Files() { // sorted: the newest segment is last
		if strings.HasPrefix(f, "log/") && strings.HasSuffix(f, ".wal") {
			last = f
		}
	}
	if last == "" {
		return
	}
	n := writtenSize(m.disk, last)
	if n < 2 {
		return
	}
	off := n - 2 - s.rng.IntN(min(n-1, 256))
	s.logf("bit rot in m%d's %s at %d, near its end", m.id, last, off)
	_ = m.disk.Corrupt(last, off, 1<<s.rng.IntN(8))
	m.rotted = true
}

// writtenSize is how far into the file its data goes: up to its last
// non-zero byte (a segment's preallocated rest is zeros).
func writtenSize(fs *vfs.MemFS, name string) int {
	f, err := fs.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return 0
	}
	n := len(data)
	for n > 0 && data[n-1] == 0 {
		n--
	}
	return n
}
