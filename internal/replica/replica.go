// Package replica is the raft glue of a Zoo server: it turns client
// requests into idempotent txns (prep, on the leader), orders them through
// go.etcd.io/raft/v3, and applies committed txns to the replicated state in
// log order.
//
// The Replica is a core stepped by method calls, as raft's RawNode is
// (core.go: Start, Tick, Step, StepSnapshot, Propose, Process), with no
// goroutine and no clock of its own, and a driver for a running server
// (driver.go: Run, Submit, Receive, ReceiveSnapshot, Stop), as raft's Node
// drives a RawNode: one goroutine, the loop, steps the core from a ticker
// and from channels. Whoever steps the core owns the raft.RawNode, the
// prepper and every write to the state. raft runs with AsyncStorageWrites
// (loop.go, processReady): messages go out at once, the log is written
// beside them (by the driver's log writer, or at once by a core stepped
// directly), and acknowledgements and applies wait for the fsync. Other goroutines read the state through Read, which
// holds the state's read lock; the core holds the write lock while it
// applies one txn and calls Config.OnApply, so whatever OnApply does (fire
// watches, queue the reply) is atomic with the change as seen by readers
// (DESIGN decision 7). Events carry what OnApply needs (the txn, its
// result, the locked state), so that nothing calls back into the Replica.
//
// Lock order, the only one: Replica.mu (the state) before whatever
// Config.OnApply takes (the server's connection and session locks). So a
// caller must not hold a lock that OnApply takes while it calls Read; the
// core never waits on another goroutine while it holds Replica.mu. The
// driver's errMu is a leaf.
//
// Standalone is an ensemble of one (DESIGN decision 2): a one-voter raft
// group. With Config.Dir set the log is durable (DESIGN decision 9): every
// Ready's entries and HardState are fsynced to the WAL before anything is
// applied or acknowledged, a snapshot of the state is written every
// Config.SnapCount applied entries, and New recovers the newest snapshot
// the log refers to and lets raft replay the committed entries after it.
// Without a Dir the same log and snapshots live on an in-memory file
// system (vfs.NewMem): one storage path (DESIGN decision 13).
package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
)

// ErrStopped is returned by Submit once the replica is stopping.
var ErrStopped = errors.New("replica: stopped")

// ErrLostLog ends a replica whose log lost entries it had acknowledged: a
// leader's heartbeat asked it to commit past the end of its log. Its data
// directory was wiped or restored from an older copy while the ensemble
// kept it as a member. Going on could lose committed writes (its votes and
// acknowledgements counted toward them), so it stops and says so.
var ErrLostLog = errors.New("replica: this member's log lost entries it had acknowledged")

// EventKind says what an Event reports.
type EventKind int

const (
	// Applied: a txn was applied. The state is write-locked during OnApply.
	Applied EventKind = iota
	// Synced: a sync request submitted here has been satisfied: everything
	// the leader had committed when it arrived is applied locally.
	Synced
	// Dropped: a request submitted here was not proposed (no leader, or the
	// replica is stopping). Its txn will never be applied.
	Dropped
	// Restored: the state was replaced by a snapshot from the leader, at
	// Zxid. Changes between the previous state (Prev, as of PrevZxid) and
	// it were never applied one by one, so no watch saw them: the server
	// re-evaluates its watches against the new state, as setWatches does
	// for a client that reconnects. Requests in flight were Dropped first.
	Restored
	// ConfChanged: raft's membership changed (Members), after the reconfig
	// that changed it was Applied, or when the leader dropped a server a
	// reconfig had removed (linger.go). State is write-locked, as for
	// Applied.
	ConfChanged
)

// Event is what the loop reports to OnApply.
type Event struct {
	Kind EventKind
	// Zxid is the applied txn's zxid (its raft index), or for Synced and
	// Dropped the last applied zxid.
	Zxid int64
	// Tag is the handle Submit was given, for requests submitted on this
	// server; 0 for txns from elsewhere and for internal requests.
	Tag    uint64
	Txn    *txn.Txn
	Result *txn.Result
	// State is the state the txn was applied to, write-locked for the
	// duration of OnApply; set for Applied and Restored. OnApply may read it.
	State *txn.State
	// Prev is, for Restored, the state before the snapshot replaced it,
	// as of PrevZxid; OnApply may read it.
	Prev     *txn.State
	PrevZxid int64
}

// Config assembles a Replica.
type Config struct {
	ID     uint64 // raft node id; the server id of zoo.cfg (1 standalone)
	Logger *slog.Logger
	// Tick is raft's logical clock period. Election takes ElectionTicks.
	Tick          time.Duration
	ElectionTicks int
	// Now returns wall-clock ms for txn times; prep fixes times so that
	// apply stays deterministic (DESIGN decision 4).
	Now func() int64
	// Clock measures durations for metrics and progress logs only;
	// nil is time.Now. Nothing the replica decides depends on it.
	Clock func() time.Time
	// State is the replicated state; the replica becomes its only writer.
	State *txn.State
	// Prep turns requests into txns against State plus outstanding changes.
	Prep *txn.Prepper
	// OnApply receives every Event, on the loop goroutine. It must not
	// block for long and must not call back into the Replica.
	OnApply func(Event)
	// MaxPending bounds requests accepted but not yet proposed.
	MaxPending int
	// RequestTicks is how many ticks a request proposed or forwarded here
	// may wait to be applied before it fails (Dropped); 0 means
	// DefaultRequestElections election timeouts.
	RequestTicks int
	// OnPersist, if set, is told how long each durable save of log
	// entries took (its fsync) and how many entries it held; on the
	// log writer's goroutine (the loop's for a core stepped directly),
	// so it must be quick. For metrics.
	OnPersist func(d time.Duration, entries int)
	// OnSnapshot, if set, is told how long writing a snapshot took and
	// the file's size; on the snapshot's goroutine. For metrics.
	OnSnapshot func(d time.Duration, bytes int64)
	// OnRecover, if set, is told what recovery did: how long loading the
	// snapshot and replaying the log after it took, and how many entries
	// were replayed. For metrics.
	OnRecover func(snapLoad, replay time.Duration, entries uint64)

	// FS holds the log and the snapshots; nil means vfs.Default.
	FS vfs.FS
	// Dir is the WAL's directory (dataLogDir). Empty: the log and the
	// snapshots are kept in a vfs.NewMem of their own (FS, SnapDir and
	// NoSync are then ignored) and nothing survives a restart.
	Dir string
	// SnapDir is the snapshots' directory (dataDir); empty means Dir.
	SnapDir string
	// SnapCount is how many applied entries separate snapshots (snapCount);
	// 0 means DefaultSnapCount.
	SnapCount int
	// SnapLogRatio paces snapshots by size (see pace.go): a snapshot
	// also waits until the log applied since the last one holds this
	// fraction of that snapshot's size. 0 means DefaultSnapLogRatio; a
	// negative ratio turns pacing off (snapshots by count only).
	SnapLogRatio float64
	// SnapSizeLimit is Apache's snapSizeLimitInKb, in bytes: the log
	// applied since the last snapshot that starts one, whatever the count
	// (rolled in [limit/2, limit]). 0 means DefaultSnapSizeLimit; a
	// negative limit means none.
	SnapSizeLimit int64
	// SnapRetain is how many snapshot files are kept
	// (autopurge.snapRetainCount), with the log recovery from the oldest
	// of them needs; fewer than snap.MinRetain count as snap.MinRetain.
	SnapRetain int
	// PurgeInterval is how often old snapshots and log segments are
	// removed (autopurge.purgeInterval). 0 purges after every snapshot:
	// Apache would keep everything, but retention is bounded here (DESIGN
	// decision 10).
	PurgeInterval time.Duration
	// SegmentSize is the WAL's segment preallocation (preAllocSize); 0
	// is wal's default.
	SegmentSize int64
	// NoSync skips the log's fsyncs (forceSync=no); see wal.Options.
	NoSync bool
	// SnapCompression compresses snapshot files
	// (snapshot.compression.method gz).
	SnapCompression snap.Compression
	// Rand returns a random int in [0, n); nil is math/rand/v2's IntN.
	// It spreads snapshots (see rollSnapRule).
	Rand func(n int) int

	// Learners are the members that replicate without voting (zoo.cfg's
	// observers); they take part in no election and no quorum.
	Learners []uint64
	// Voters is the membership a fresh log starts with (zoo.cfg's
	// participants); empty means this server alone. Every member must be
	// given the same list.
	Voters []uint64
	// Transport carries messages to the other members; required when
	// Voters names any. Messages from them come in through Receive.
	Transport Transport
	// OnActivity is told of the sessions another server heard from, for
	// the leader's expiry tracking. It runs on the transport's goroutine.
	OnActivity func(ids []int64)
	// Join makes a fresh log start empty instead of with the membership
	// of Voters and Learners: the server joins an ensemble that already
	// runs (its peers said so), and gets its state, membership included,
	// from the leader once it is added (reconfig).
	Join bool
	// TrailingEntries is how many applied entries stay in the log behind
	// the newest snapshot, so that a follower lagging by fewer gets them
	// rather than a whole snapshot (Apache's zookeeper.commitLogCount
	// plays this part), and how many of the newest applied entries
	// memory holds whole (older ones are read back from the WAL); 0
	// means DefaultTrailingEntries.
	TrailingEntries int
	// RetainBytes bounds the entries the leader keeps in its log, beyond
	// TrailingEntries, for followers that lag behind them (retain.go);
	// 0 means DefaultRetainBytes, negative keeps none.
	RetainBytes int64
	// LaggardTicks is how long a follower may stay silent and still have
	// entries kept for it; 0 means DefaultLaggardElections election
	// timeouts.
	LaggardTicks int
}

// memSegmentSize is the log's segment size without a data directory:
// small, as the segments are held in memory.
const memSegmentSize = 1 << 20

// memSnapCount is Config.SnapCount's default without a data directory.
const memSnapCount = 2 * DefaultTrailingEntries

// DefaultTrailingEntries is Config.TrailingEntries's default.
const DefaultTrailingEntries = 10000

// Transport sends a message to another member. Send must not block: a
// message it cannot queue is dropped and Send reports false, which raft
// copes with (it is told the peer is unreachable and retries).
//
// SendStream sends a large payload (a snapshot) to a member beside the
// message traffic, and returns once the receiver's ReceiveSnapshot has
// returned, with its error; cancelling ctx abandons it.
type Transport interface {
	Send(to uint64, kind uint8, data []byte) bool
	SendStream(ctx context.Context, to uint64, header []byte, body io.Reader) error
}

// BufferSender is a Transport that can send a message held in a bufpool
// buffer, and puts the buffer back once the message is written. The
// replica sends its large raft messages this way when it can.
type BufferSender interface {
	SendBuffer(to uint64, kind uint8, buf *[]byte) bool
}

// DefaultRequestElections is Config.RequestTicks's default, in election
// timeouts: long enough for a leader change (which fails what was in
// flight anyway) and a slow disk, short of a client's patience.
const DefaultRequestElections = 10

// DefaultSnapCount is Apache's default snapCount.
const DefaultSnapCount = 100000

func (c *Config) ensureDefaults() {
	if c.ID == 0 {
		c.ID = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Tick == 0 {
		c.Tick = 100 * time.Millisecond
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = 10
	}
	if c.Now == nil {
		c.Now = func() int64 { return time.Now().UnixMilli() }
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.OnApply == nil {
		c.OnApply = func(Event) {}
	}
	if c.MaxPending == 0 {
		c.MaxPending = 4096
	}
	if c.RequestTicks == 0 {
		c.RequestTicks = DefaultRequestElections * c.ElectionTicks
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.Dir == "" {
		// One storage path: no data directory means the same log and
		// snapshots, in memory. Nothing survives, so nothing is synced.
		c.FS, c.Dir, c.SnapDir, c.NoSync = vfs.NewMem(), "log", "snap", true
		if c.SegmentSize == 0 {
			c.SegmentSize = memSegmentSize
		}
		if c.SnapCount <= 0 {
			// The log and its entries in memory are dropped only at
			// snapshots: take them as often as raft.MemoryStorage was
			// compacted before (twice the trailing entries).
			c.SnapCount = memSnapCount
		}
	}
	if c.SnapDir == "" {
		c.SnapDir = c.Dir
	}
	if c.SnapCount <= 0 {
		c.SnapCount = DefaultSnapCount
	}
	switch {
	case c.SnapLogRatio == 0:
		c.SnapLogRatio = DefaultSnapLogRatio
	case c.SnapLogRatio < 0:
		c.SnapLogRatio = 0
	}
	switch {
	case c.SnapSizeLimit == 0:
		c.SnapSizeLimit = DefaultSnapSizeLimit
	case c.SnapSizeLimit < 0:
		c.SnapSizeLimit = 0
	}
	if c.Rand == nil {
		c.Rand = rand.IntN
	}
	if c.TrailingEntries <= 0 {
		c.TrailingEntries = DefaultTrailingEntries
	}
	if c.RetainBytes == 0 {
		c.RetainBytes = DefaultRetainBytes
	}
	if c.LaggardTicks <= 0 {
		c.LaggardTicks = DefaultLaggardElections * c.ElectionTicks
	}
}

// proposal is a request on its way to prep: one of this server's (origin
// 0), or one another server forwarded to this leader with its sequence
// number.
type proposal struct {
	req    txn.Request
	tag    uint64
	origin uint64
	oseq   uint64
}

// prepped is a txn this leader prepped and proposed, waiting to apply:
// apply uses it instead of decoding the entry and tells the prepper.
type prepped struct {
	origin, seq uint64
	txn         *txn.Txn
}

// inbound is a message from another member for the loop, or a received
// snapshot (kindSnapshot), whose sender waits for done.
type inbound struct {
	from uint64
	kind uint8
	data []byte
	buf  *[]byte // the bufpool buffer data is in, if any (ReceiveBuffer)
	msg  *raftpb.Message
	snap *receivedSnap
	done chan struct{}
}

// Replica is one server's member of the raft group: the steppable core
// (core.go) and, for a running server, its driver (driver.go), whose
// fields are all in drv.
type Replica struct {
	cfg      Config
	disk     *wal.Storage  // the log as raft reads it
	log      *wal.WAL      // closed when the replica closes
	snapLoad time.Duration // how long loading the snapshot took at start-up
	// replayLogged is when the replay at start-up last logged its
	// progress; zero once it is over.
	replayLogged time.Time
	rn           *raft.RawNode
	lost         error // ErrLostLog, once seen: the loop stops

	mu    sync.RWMutex // the state: written by the core only
	state *txn.State

	lastZxid atomic.Int64
	progress atomic.Pointer[[]PeerProgress] // the leader's view, per tick
	voters   atomic.Pointer[[]uint64]       // as of the applied membership
	members  atomic.Pointer[[]uint64]       // voters and learners, likewise
	learner  atomic.Bool                    // this member is a learner
	leader   atomic.Bool                    // this replica is the leader and may prep
	leadID   atomic.Uint64                  // the leader raft knows of; 0 for none
	term     atomic.Uint64
	refused  atomic.Int64  // forwards refused, for RefusedForwards
	ticks    atomic.Uint64 // ticks since the core started: requests' clock; only the core adds

	// Core-owned: only the goroutine driving the core touches these.
	requests
	snapshots
	retention
	lead        leaderWatch
	unreachable []uint64       // peers a send failed to, for raft
	toApply     []pendingApply // MsgStorageApply messages not yet all applied
	applyPos    int            // entries of toApply[0] already applied
	appendsSent uint64         // log writes started (storeAppend)
	appendsDone uint64         // log writes done (appendDone), in order
	applyAfter  uint64         // the last log write an apply queued now waits for (pendingApply)
	lazyCommit  bool           // the log writes commit-only hard states lazily (wal's LazyCommit)
	applied     uint64
	appliedTerm uint64
	compacted   uint64
	evicted     uint64           // entries up to this one need not be held in memory
	confState   raftpb.ConfState // as of applied, for snapshots
	confPending bool             // a membership change proposed here, not applied
	confIndex   uint64           // the entry of the last membership change applied
	ledFrom     uint64           // the tick this replica last became leader; 0 if it does not lead
	removedAt   uint64           // the tick this leader found itself no voter; 0 if it is one
	joining     bool             // started empty to join, and nothing applied yet (linger.go)
	staleBeats  int              // heartbeats ignored while joining

	drv *driver // nil when the core is stepped directly (the simulator)
}

// requests are the client requests the core holds: waiting for prep (or
// to be forwarded), in flight after it, and syncs.
type requests struct {
	waiting    []proposal  // accepted, not yet prepped
	inflight   inflightSet // proposed or forwarded by us, by sequence
	refusedLog uint64      // the tick a refused forward was last logged
	proposed   []prepped   // prepped here as leader, in log order
	batch      batch       // prepped, for prepAll's next proposal
	enc        jute.Writer // entryData's scratch
	seq        uint64      // of our last proposal
	seqFloor   uint64      // no run after this one starts below it (seqfloor.go)
	syncID     uint64
	syncs      []syncWait
}

// snapshots is the core's state of snapshots: its own, one received from
// the leader, and those it streams to followers.
type snapshots struct {
	snapRule     snapRule        // when the next snapshot is due (pace.go)
	snapProgress snapProgress    // towards it
	snapForce    bool            // take one at the next chance, whatever the rule
	snapBusy     bool            // a snapshot is being taken, or a purge done (by the driver's goroutine)
	purgeDue     bool            // purgeInterval's timer fired: purge once not snapBusy
	received     *receivedSnap   // from the leader, for raft to hand back
	streaming    map[uint64]bool // followers a snapshot is being sent to
	streamReport []snapSent      // inline streams' outcomes, for raft at the end of the turn
}

// leaderWatch is what the core tracks of the leader between turns.
type leaderWatch struct {
	last     uint64 // the leader as of the last turn
	since    int    // ticks since a message from a leader
	linkDown int    // ticks the link to the leader has been down
}

// syncWait is a sync waiting for two things: the leader's commit index
// when it arrived (raft's ReadIndex) applied here, and every proposal made
// before it applied. The second keeps a session's sync behind its own
// earlier writes: a one-voter raft answers ReadIndex at once, at a commit
// index that may not include a write proposed just before.
type syncWait struct {
	tag      uint64
	first    uint64 // the number of its first ReadIndex (askReadIndex); each ask takes a new one
	askedAt  uint64 // the tick it last asked
	deadline uint64 // the tick at which it fails
	index    uint64 // 0 until raft answers a ReadIndex (readState)
	afterSeq uint64
}

// heartbeatTicks is how many ticks a leader waits between heartbeats to
// an idle follower: four or more per election timeout (8 ticks or more),
// so that a lost or late one costs no election. Every heartbeat is a
// message each way and a wake-up of both loops and both links: sent every
// tick, they cost an idle ensemble a sixth of its CPU, which is 3x
// Apache's. A write does not wait for one: raft tells the followers of a
// commit at once.
const heartbeatTicks = 2

// New returns a Replica with its driver: a fresh one, or with a
// Config.Dir holding a log, the group recovered from it (Config.State is
// then overwritten with the snapshot's state, in place, so that the
// prepper built over it sees it). Start it with Run.
func New(cfg Config) (*Replica, error) { return newReplica(cfg, true) }

// NewCore returns a Replica as New does, but without a driver: the caller
// steps it (Start, Tick, Step, Propose, Process; see core.go) from one
// goroutine, and must not call Run, Submit, Receive, ReceiveSnapshot,
// Stop, Err or Done.
func NewCore(cfg Config) (*Replica, error) { return newReplica(cfg, false) }

func newReplica(cfg Config, driven bool) (*Replica, error) {
	cfg.ensureDefaults()
	if cfg.State == nil || cfg.Prep == nil {
		return nil, errors.New("replica: Config.State and Config.Prep are required")
	}
	if len(cfg.Voters) == 0 {
		cfg.Voters = []uint64{cfg.ID}
	}
	if len(cfg.Voters)+len(cfg.Learners) > 1 && cfg.Transport == nil {
		return nil, errors.New("replica: a group of several members needs a Transport")
	}
	r := &Replica{
		cfg:       cfg,
		state:     cfg.State,
		requests:  requests{inflight: newInflightSet()},
		snapshots: snapshots{streaming: make(map[uint64]bool)},
	}
	r.syncID = uint64(cfg.Rand(math.MaxInt)) // see askReadIndex
	if driven {
		r.drv = newDriver(cfg.MaxPending)
	}
	fresh, err := r.recover()
	if err != nil {
		return nil, err
	}
	r.joining = fresh && cfg.Join
	// Before anything is proposed: this run's sequence numbers start
	// above every earlier run's (seqfloor.go).
	if err := r.startSeq(); err != nil {
		r.closeLog()
		return nil, err
	}
	if fresh && !cfg.Join {
		// Only a fresh log: a recovered one holds the configuration in its
		// snapshot or in ConfChange entries that raft hands back to apply.
		// A joining member starts empty: the leader sends it a snapshot
		// once the ensemble has it among its members.
		if err := r.bootstrap(); err != nil {
			r.closeLog()
			return nil, err
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             heartbeatTicks,
		Storage:                   snapshotStorage{r.disk, r},
		Applied:                   r.applied,
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		MaxUncommittedEntriesSize: 1 << 30,
		MaxCommittedSizePerReady:  16 << 20,
		PreVote:                   true,
		CheckQuorum:               true,
		// No StepDownOnRemoval: a reconfig demotes a removed leader to a
		// learner, which raft lets lead on (its proposals commit by the
		// voters), and linger.go hands leadership over an election
		// timeout later; stepping down at once would leave the voters
		// without a leader for that long. (A leader removed outright, by
		// a change an earlier leader proposed while it was down, hands
		// over the same way; raft drops its proposals meanwhile.)
		AsyncStorageWrites: true, // see processReady
		Logger:             raftLogger{cfg.Logger},
	})
	if err != nil {
		r.closeLog()
		return nil, err
	}
	r.rn = rn
	// Persist the bootstrap configuration, or replay the committed log,
	// before New returns: the server must not serve (or look up a
	// reattaching session) in a state that lacks acknowledged txns. The
	// events of the replay go to OnApply, untagged.
	replayStart, from := cfg.Clock(), r.applied
	r.replayLogged = replayStart
	err = r.settle()
	r.replayLogged = time.Time{}
	if err != nil {
		r.closeLog()
		return nil, err
	}
	r.recovered(cfg.Clock().Sub(replayStart), r.applied-from)
	return r, nil
}

// bootstrap starts a fresh log with the membership: a snapshot at index
// 1, term 1, of the initial state, whose ConfState names the voters and
// the learners. Every member starts from the same one, observers too
// (raft's own Bootstrap knows only voters). With a Dir the snapshot is a
// file like any other, and its marker the log's first record.
func (r *Replica) bootstrap() error {
	cs := raftpb.ConfState{Voters: r.cfg.Voters, Learners: r.cfg.Learners}
	sn := raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{Index: 1, Term: 1, ConfState: cs}}
	// Term 1 is the bootstrap's, as in raft's Bootstrap: the first
	// election is for term 2.
	hs := raftpb.HardState{Term: 1, Commit: 1}
	meta := snap.Meta{Index: 1, Term: 1}
	if _, err := snap.Write(r.cfg.FS, r.cfg.SnapDir, meta, r.state, snap.Options{Compression: r.cfg.SnapCompression}); err != nil {
		return fmt.Errorf("replica: bootstrap: %w", err)
	}
	if err := r.disk.ApplySnapshot(sn); err != nil {
		return fmt.Errorf("replica: bootstrap: %w", err)
	}
	if err := r.disk.Save(hs, nil); err != nil {
		return fmt.Errorf("replica: bootstrap: %w", err)
	}
	r.applied, r.appliedTerm, r.compacted = 1, 1, 1
	r.nextSnapshot()
	r.setConfState(cs)
	return nil
}

// Fresh reports whether cfg's log directory holds no log yet (or there is
// none: the log is kept in memory), so that New would start a new one.
func Fresh(cfg Config) bool {
	if cfg.Dir == "" {
		return true
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	names, err := fs.List(cfg.Dir)
	if err != nil {
		return true // no directory: wal.Open creates it
	}
	return !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".wal") })
}

// Established reports whether this member has applied more than its
// bootstrap: it runs in an ensemble that elected a leader.
func (r *Replica) Established() bool { return r.lastZxid.Load() > 1 }

// Read calls f with the state read-locked and the zxid of the last txn
// applied to it. f must not call into the Replica.
func (r *Replica) Read(f func(s *txn.State, zxid int64)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f(r.state, r.lastZxid.Load())
}

// LastZxid returns the zxid of the last applied txn.
func (r *Replica) LastZxid() int64 { return r.lastZxid.Load() }

// Leader returns the id of the leader this replica knows of, 0 if none:
// without one, no write can commit.
func (r *Replica) Leader() uint64 { return r.leadID.Load() }

// Term returns the raft term (ZooKeeper's epoch) this replica is in.
func (r *Replica) Term() uint64 { return r.term.Load() }

// ID returns this replica's member id.
func (r *Replica) ID() uint64 { return r.cfg.ID }

// RefusedForwards counts the forwarded requests this replica refused
// (and told their origin of).
func (r *Replica) RefusedForwards() int64 { return r.refused.Load() }

// ReportActivity tells the leader which sessions this server heard from.
// It is dropped if there is no leader or the link is full; the next
// report covers it.
func (r *Replica) ReportActivity(ids []int64) {
	lead := r.leadID.Load()
	if lead == 0 || lead == r.cfg.ID || len(ids) == 0 {
		return
	}
	r.cfg.Transport.Send(lead, KindActivity, encodeActivity(ids))
}

// PeerProgress is what the leader knows of another member's log.
type PeerProgress struct {
	ID      uint64
	Learner bool
	// Match is the last index known to be in the member's log; Lag is
	// how many entries of the leader's log it lacks.
	Match, Lag uint64
}

// Progress returns, on the leader, every other member's progress in id
// order, as of the last tick; nil elsewhere.
func (r *Replica) Progress() []PeerProgress {
	if p := r.progress.Load(); p != nil && r.leadID.Load() == r.cfg.ID {
		return *p
	}
	return nil
}

// IsLeader reports whether this replica leads and has applied its log, so
// that it preps requests.
func (r *Replica) IsLeader() bool { return r.leader.Load() }
