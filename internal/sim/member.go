package sim

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/jute"
	members "github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/session"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

var errLinkDown = errors.New("sim: link down")

// member is one Zoo server: the replica core over a simulated disk,
// internal/server's request path (server.Core) over simulated
// connections, and the housekeeping internal/server does with goroutines
// and timers (expiry, activity reports, container and TTL cleanup,
// session moves), decided by its server.Housekeeper and done here on the
// simulated clock.
type member struct {
	// peers is the list of internal/peer's transport: listed, plus the
	// members raft still replicates to that a reconfig removed (they
	// linger as learners: replica's linger.go). accepts says whom else
	// it takes messages from.
	peers map[uint64]bool
	// listed is the membership it last applied, or, started empty to
	// join, the one the operator wrote in its zoo.cfg (the membership in
	// force then).
	listed map[uint64]bool
	// recovered: this incarnation started from a log it wrote before
	// (internal/server: replica.Fresh was false).
	recovered bool
	s         *Sim
	id        uint64

	disk     *vfs.MemFS // what survives a crash is its CrashClone
	syncFail bool       // the next fsync fails
	full     bool       // the disk is full: writes fail with ENOSPC
	rotted   bool       // bit rot was put on this disk
	spare    bool       // not in the first membership, or wiped: it joins by reconfig
	wiped    bool       // its data directory was wiped after it refused to start
	started  bool       // it was started once
	injected int        // disk errors injected so far

	up          bool
	pausedUntil int64
	skew        int64 // its wall clock's offset from simulated time, ms
	gen         int   // incarnation, so a dead one's timers stop

	core   *replica.Replica
	state  *txn.State
	hk     *server.Housekeeper // internal/server's expiry and cleanup decisions
	ids    *session.IDGen
	srv    *server.Core     // internal/server's request path
	conns  map[uint64]*conn // by id (the watcher id)
	bySess map[int64]*conn  // the connection each session is on
	// applying is the zxid of the txn being applied, while srv fires its
	// watches: a watch event's frame carries zxid -1, as Apache's, so the
	// simulated connection stamps it with this for the watch checks.
	applying int64
	trigLog  []appliedTrigger // this incarnation's applied triggers, for the watch check
	held     []func()         // what arrived while paused, in order
}

// pause stops the member for d ms: nothing it receives is handled until
// then, in the order it came.
func (m *member) pause(d int64) {
	m.s.logf("m%d pauses for %dms", m.id, d)
	if !m.paused() {
		m.s.after(d, m.wake)
	}
	m.pausedUntil = max(m.pausedUntil, m.s.now+d)
}

func (m *member) wake() {
	if m.paused() {
		m.s.after(m.pausedUntil-m.s.now, m.wake)
		return
	}
	held := m.held
	m.held = nil
	for _, f := range held {
		f()
	}
}

// hold keeps f for when the member wakes up.
func (m *member) hold(f func()) { m.held = append(m.held, f) }

type appliedTrigger struct {
	zxid int64
	path string
	typ  int32
}

func newMember(s *Sim, id uint64) *member {
	return &member{s: s, id: id, disk: vfs.NewMem()}
}

func (m *member) now() int64 { return epochMs + m.s.now + m.skew }

func (m *member) paused() bool { return m.s.now < m.pausedUntil }

// inject is the member's disk fault injector.
func (m *member) inject(op errorfs.Op) error {
	switch {
	case m.syncFail && op.Kind == errorfs.OpFileSync:
		m.syncFail = false
		m.injected++
		return errors.New("sim: injected fsync error")
	case m.full && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFilePreallocate || op.Kind == errorfs.OpCreate):
		m.injected++
		return syscall.ENOSPC
	}
	return nil
}

// start boots the member from its disk. A disk the replica will not start
// from (bit rot it detected, a full disk) keeps it down; it tries again
// later unless the refusal is for good.
func (m *member) start() {
	if m.up {
		// Its connections would be forgotten, never closed.
		m.s.fail("m%d started while it is up", m.id)
		return
	}
	m.gen++
	m.started = true
	injected := m.injected
	m.state = txn.NewState(tree.New())
	prep := txn.NewPrepper(m.state, txn.PrepConfig{ExtendedTypes: true, ReconfigEnabled: true})
	voters := make([]uint64, m.s.opt.Members)
	for i := range voters {
		voters[i] = uint64(i + 1)
	}
	if _, err := m.state.Tree.SetData(tree.ConfigPath, []byte(membership(voters)), -1, 0, 0); err != nil {
		m.s.fail("m%d: writing %s: %v", m.id, tree.ConfigPath, err)
		return
	}
	m.conns = make(map[uint64]*conn)
	m.bySess = make(map[int64]*conn)
	m.trigLog = nil
	now := m.now()
	m.hk = server.NewHousekeeper(tickMs*10, true, now)
	m.ids = session.NewIDGen(int64(m.id), now+int64(m.gen))
	core, err := replica.NewCore(replica.Config{
		ID:              m.id,
		Logger:          slog.New(slog.DiscardHandler),
		ElectionTicks:   10,
		Now:             m.now,
		Clock:           m.s.clock,
		State:           m.state,
		Prep:            prep,
		OnApply:         m.onApply,
		FS:              errorfs.Wrap(m.disk, errorfs.InjectorFunc(m.inject)),
		Dir:             "log",
		SnapDir:         "snap",
		SnapCount:       40,
		SegmentSize:     16 << 10,
		TrailingEntries: 30,
		Rand:            func(n int) int { return m.s.rng.IntN(n) },
		Voters:          voters,
		Transport:       link{s: m.s, from: m.id},
		OnActivity:      m.onActivity,
		RequestTicks:    100,
		Join:            m.spare,
	})
	if err == nil {
		err = core.Start()
	}
	if err != nil {
		m.s.logf("m%d refuses to start: %v", m.id, err)
		if !m.rotted && m.injected == injected {
			m.s.fail("m%d cannot restart from its own disk (no bit rot, no disk error): %v", m.id, err)
		}
		if core != nil {
			core.Close()
		}
		switch {
		case !m.rotted:
			m.s.after(500, m.restart)
		case !m.s.opt.NoReconfig && m.s.repair == nil:
			m.s.logf("m%d: the operator will remove it, wipe its data and add it back", m.id)
			m.s.repair = m
		}
		return
	}
	m.core = core
	m.srv = server.NewCore(server.CoreConfig{
		Replica: simReplica{m},
		Conn: func(id uint64) server.Endpoint {
			if c := m.conns[id]; c != nil {
				return c
			}
			return nil // not a typed nil in the interface
		},
		Moved: m.touchMoved,
		Now:   func() time.Time { return time.UnixMilli(m.now()) },
	})
	prep.SetReconfig(core)
	m.up = true
	m.hk.Track(m.state.Sessions, now)
	m.listed = m.startPeers(core.LastZxid() == 0 && m.spare)
	m.confChanged()
	m.recovered = core.LastZxid() > 0
	m.s.logf("m%d up at zxid %d", m.id, core.LastZxid())
	m.process()
	gen := m.gen
	m.s.after(tickMs, func() { m.tick(gen) })
}

func (m *member) restart() {
	if m.up {
		return
	}
	m.start()
}

// crash kills the member: what its disk had not synced is lost (or, with
// torn, partly kept), and every client connection breaks.
func (m *member) crash(torn bool) {
	if !m.up {
		return
	}
	m.s.logf("m%d crashes (torn=%v)", m.id, torn)
	m.up = false
	m.core = nil
	m.pausedUntil, m.held = 0, nil
	if torn {
		m.disk = m.disk.CrashCloneTorn(func(string, int) int { return m.s.rng.IntN(64) })
	} else {
		m.disk = m.disk.CrashClone()
	}
	m.dropConns()
}

// dropConns breaks every client connection to the member.
func (m *member) dropConns() {
	ids := slices.Sorted(maps.Keys(m.conns))
	for _, id := range ids {
		m.conns[id].close()
	}
}

// process lets the core do what is ready; a failed log write kills the
// member, as it stops a real server.
func (m *member) process() {
	if !m.up {
		return
	}
	if err := m.core.Process(); err != nil {
		if errors.Is(err, replica.ErrLostLog) {
			// Only a log that forgot what it acknowledged gets here: a
			// member the simulator wipes is removed and added back first.
			m.s.fail("m%d lost log entries it had acknowledged: %v", m.id, err)
		}
		m.s.logf("m%d fails: %v", m.id, err)
		m.crash(false)
		m.s.after(m.s.between(200, 800), m.restart)
	}
}

func (m *member) tick(gen int) {
	if !m.up || gen != m.gen {
		return
	}
	m.s.after(tickMs, func() { m.tick(gen) })
	if m.paused() {
		return
	}
	m.core.Tick()
	if m.core.Ticks()%5 == 0 {
		m.housekeeping()
	}
	m.process()
}

// deliver steps a message from another member; a paused member gets it
// when it wakes up.
func (m *member) deliver(from uint64, kind uint8, data []byte) {
	if !m.up || !m.accepts(from) {
		return
	}
	if m.paused() {
		gen := m.gen
		m.hold(func() {
			if gen == m.gen {
				m.deliver(from, kind, data)
			}
		})
		return
	}
	m.core.Step(from, kind, data)
	m.process()
}

func (m *member) deliverSnapshot(from uint64, header, body []byte) {
	if !m.up || m.paused() || !m.accepts(from) {
		return // the leader sends it again
	}
	if err := m.core.StepSnapshot(from, header, bytes.NewReader(body)); err != nil {
		m.s.logf("m%d refuses a snapshot from m%d: %v", m.id, from, err)
	}
	m.process()
}

// housekeeping is internal/server's expiry loop on the simulated clock,
// with its decisions taken by server.Housekeeper: the leader expires
// sessions (again if their closeSession did not apply) and removes empty
// containers and expired TTL nodes; the others report the sessions they
// heard from.
func (m *member) housekeeping() {
	now := m.now()
	// As the Server's checkQuorum (without read-only mode): a member that
	// knows no leader, or is out of the membership, for an election
	// timeout lets its clients go, to move to a member of the majority.
	serving := m.core.Leader() != 0 && m.peers[m.id]
	if lost := m.hk.Leaderless(serving, now); lost >= electionMs && len(m.conns) > 0 {
		m.s.logf("m%d has had no leader for %dms: closing client connections", m.id, lost)
		m.dropConns()
	}
	if !m.core.IsLeader() {
		m.core.ReportActivity(m.hk.Follow())
		return
	}
	if !m.hk.Leading() {
		m.hk.TakeOver(m.state.Sessions, now)
	}
	e := m.hk.Expire(now)
	for _, id := range e.Expired {
		m.s.logf("m%d expires session %x", m.id, id)
		_ = m.core.Propose(txn.Request{SessionID: id, Op: jute.OpCloseSession}, 0)
	}
	for _, id := range e.Again {
		m.s.logf("m%d expires session %x again: its closeSession did not apply", m.id, id)
		_ = m.core.Propose(txn.Request{SessionID: id, Op: jute.OpCloseSession}, 0)
	}
	if m.core.Ticks()%20 == 0 {
		for _, p := range server.Cleanup(m.state, now, 0) {
			_ = m.core.Propose(txn.Request{Op: jute.OpDeleteContainer, Record: &jute.PathRequest{Path: p}}, 0)
		}
	}
}

// electionMs is the members' election timeout: ElectionTicks of tickMs.
const electionMs = 10 * tickMs

func (m *member) onActivity(ids []int64) { m.hk.Activity(ids, m.now()) }

// touch records a session's traffic here; it reports whether the expiry
// tracker knows the session and is not closing it.
func (m *member) touch(sid int64) bool { return m.hk.Touch(sid, m.now()) }

// touchMoved is the request path's Moved: internal/server's touchMoved.
func (m *member) touchMoved(sid int64, timeoutMs int32) bool {
	return m.hk.TouchMoved(sid, timeoutMs, m.core.IsLeader(), m.now())
}

// onApply is internal/server's onApply for the simulator: the request
// path (server.Core.Apply) fires the watches and completes the event's
// request, as in the Server; the rest is the member's.
func (m *member) onApply(ev replica.Event) {
	switch ev.Kind {
	case replica.Applied:
		m.s.applied(m, ev)
		for _, t := range ev.Result.Triggers {
			m.trigLog = append(m.trigLog, appliedTrigger{ev.Zxid, t.Path, t.Type})
		}
		m.applying = ev.Zxid
		m.srv.Apply(ev)
		m.applying = 0
		m.sessionChanged(ev)
		if ev.Txn.Type == jute.OpReconfig && ev.Result.Err == jute.OK {
			m.reconfigured(ev)
		}
	case replica.Synced:
		m.srv.Apply(ev)
	case replica.Dropped:
		if ev.Tag != 0 {
			m.s.logf("m%d drops its request of tag %d", m.id, ev.Tag)
		}
		m.srv.Apply(ev)
	case replica.ConfChanged:
		m.confChanged()
	case replica.Restored:
		m.s.logf("m%d installed a snapshot at %d", m.id, ev.Zxid)
		m.s.restored(m, ev.Zxid)
		m.listed = m.startPeers(false) // as internal/server's snapshotInstalled
		m.confChanged()
		m.hk.Track(m.state.Sessions, m.now())
		m.trigLog = nil
		m.dropConns()
	}
}

// reconfigured follows a membership change: the simulator's view of the
// membership, and a member that left closes its connections after what is
// queued for them (the reconfig's reply among it).
func (m *member) reconfigured(ev replica.Event) {
	mb, err := members.Parse(string(ev.Result.Data))
	if err != nil {
		m.s.fail("m%d applied a reconfig it cannot parse: %v", m.id, err)
		return
	}
	in := make(map[uint64]bool)
	obs := make(map[uint64]bool)
	for _, sv := range mb.Servers {
		in[uint64(sv.ID)] = true
		if sv.Type == config.Observer {
			obs[uint64(sv.ID)] = true
		}
	}
	m.listed = in
	if ev.Zxid > m.s.configZxid {
		m.s.configZxid = ev.Zxid
		m.s.inConfig, m.s.observers = in, obs
		m.s.logf("membership now %v, observers %v", slices.Sorted(maps.Keys(in)), slices.Sorted(maps.Keys(obs)))
	}
	m.confChanged()
}

// confChanged follows the membership on the peer links, as
// internal/server's reconfigured does: the members listed, and those a
// reconfig removed that raft still replicates to (they linger as
// learners); a member out of both closes its connections after what is
// queued for them (a reconfig's reply among it).
func (m *member) confChanged() {
	if m.core == nil {
		return // replaying its log at start: start calls this once done
	}
	peers := maps.Clone(m.listed)
	for _, id := range m.core.Members() {
		peers[id] = true
	}
	m.peers = peers
	if !peers[m.id] {
		for _, id := range slices.Sorted(maps.Keys(m.conns)) {
			m.conns[id].finish()
		}
	}
}

// membership is /zookeeper/config's text for these participants.
func membership(ids []uint64) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s\n", serverLine(id))
	}
	b.WriteString("version=0")
	return b.String()
}

func serverLine(id uint64) string { return line(id, "participant") }

// observerLine is the server line of id as a non-voting member.
func observerLine(id uint64) string { return line(id, "observer") }

func line(id uint64, role string) string {
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;127.0.0.1:%d", id, 2000+id, 3000+id, role, 4000+id)
}

// sessionChanged is internal/server's: expiry follows the replicated
// session table, and the connection of a session that moved away closes
// at once, that of a session that ended after what is queued for it.
func (m *member) sessionChanged(ev replica.Event) {
	sid := ev.Txn.SessionID
	end := m.hk.Applied(ev.Txn, ev.Result.Err, int64(m.id), m.now())
	c := m.bySess[sid]
	if end == server.Keep || c == nil {
		return
	}
	delete(m.bySess, sid)
	if end == server.Moved {
		c.close()
	} else {
		c.finish()
	}
}

// readKey reads a key from the member's state, for the final reads.
func (m *member) readKey(k int) kvOutput {
	data, st, err := m.state.Tree.Get(keyPath(k))
	if err != nil {
		return kvOutput{code: codeOf(err)}
	}
	return kvOutput{code: jute.OK, exists: true, data: string(data), version: st.Version}
}

// simReplica is a member's replica core as the request path sees it.
type simReplica struct{ m *member }

func (r simReplica) Propose(t txn.Request, tag uint64) error { return r.m.core.Propose(t, tag) }
func (r simReplica) Read(f func(*txn.State, int64))          { r.m.core.Read(f) }
func (r simReplica) LastZxid() int64                         { return r.m.core.LastZxid() }

func codeOf(err error) jute.Code {
	var code jute.Code
	switch {
	case err == nil:
		return jute.OK
	case errors.As(err, &code):
		return code
	}
	return jute.SystemError
}

// stateDigest is the member's state as one number: the tree's digest and
// its sessions.
func stateDigest(st *txn.State) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v int64) {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	put(st.Tree.ApacheDigest())
	put(int64(st.Tree.NodeCount()))
	for _, id := range slices.Sorted(maps.Keys(st.Sessions)) {
		put(id)
	}
	return h.Sum64()
}

// accepts is internal/peer's acceptor with internal/server's Admit: a
// member takes messages from the servers of its list and, if it started
// from a log it wrote before or has since applied a quorum's state
// (replica.Established), from any server; a member that started empty
// and holds nothing past a bootstrap takes them from its list alone. The member answers a server it has no address for
// over the link that server opened (a link carries both ways), which
// this model takes as given: messages go both ways whenever they are
// taken.
func (m *member) accepts(from uint64) bool {
	return m.peers[from] || m.recovered || m.core.Established()
}

// startPeers is the list of a member that has just started (or installed
// a snapshot): the membership in its state (recovered, or zoo.cfg's when
// fresh), or, joining with an empty log, the membership in force, which
// the operator lists in its zoo.cfg. Without this a wiped member, whose
// empty log any candidate's beats, could vote for a removed member that
// never learned of its removal, and the two would make a quorum of a
// configuration gone.
func (m *member) startPeers(joining bool) map[uint64]bool {
	if joining {
		peers := maps.Clone(m.s.inConfig)
		peers[m.id] = true
		return peers
	}
	data, _, err := m.state.Tree.Get(tree.ConfigPath)
	if err != nil {
		m.s.fail("m%d: reading %s: %v", m.id, tree.ConfigPath, err)
		return nil
	}
	mb, err := members.Parse(string(data))
	if err != nil {
		m.s.fail("m%d: parsing %s: %v", m.id, tree.ConfigPath, err)
		return nil
	}
	peers := make(map[uint64]bool)
	for _, sv := range mb.Servers {
		peers[uint64(sv.ID)] = true
	}
	return peers
}
