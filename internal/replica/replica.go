// Package replica is the raft glue of a Zoo server: it turns client
// requests into idempotent txns (prep, on the leader), orders them through
// go.etcd.io/raft/v3, and applies committed txns to the replicated state in
// log order.
//
// One goroutine, the loop, owns the raft.RawNode, the prepper and every write
// to the state. It follows raft's order for each Ready: persist entries and
// hard state, send messages, apply committed entries, Advance. Other
// goroutines read the state through Read, which holds the state's read lock;
// the loop holds the write lock while it applies one txn and calls
// Config.OnApply, so whatever OnApply does (fire watches, queue the reply)
// is atomic with the change as seen by readers (DESIGN decision 7).
//
// Standalone is an ensemble of one (DESIGN decision 2): a one-voter raft
// group. The log lives in raft's MemoryStorage until the durable log lands;
// entries every server has applied are compacted away.
package replica

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/zoohq/zoo/internal/txn"
)

// ErrStopped is returned by Submit once the replica is stopping.
var ErrStopped = errors.New("replica: stopped")

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
	// duration of OnApply; set for Applied only. OnApply may read it.
	State *txn.State
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
	// State is the replicated state; the replica becomes its only writer.
	State *txn.State
	// Prep turns requests into txns against State plus outstanding changes.
	Prep *txn.Prepper
	// OnApply receives every Event, on the loop goroutine. It must not
	// block for long and must not call back into the Replica.
	OnApply func(Event)
	// MaxPending bounds requests accepted but not yet proposed.
	MaxPending int
}

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
	if c.OnApply == nil {
		c.OnApply = func(Event) {}
	}
	if c.MaxPending == 0 {
		c.MaxPending = 4096
	}
}

// proposal is a request on its way to prep.
type proposal struct {
	req txn.Request
	tag uint64
}

// Replica is one server's member of the raft group.
type Replica struct {
	cfg     Config
	storage *raft.MemoryStorage
	rn      *raft.RawNode

	mu    sync.RWMutex // the state: written by the loop only
	state *txn.State

	lastZxid atomic.Int64
	leader   atomic.Bool // this replica is the leader and may prep

	propc chan proposal
	stopc chan struct{}
	donec chan struct{}
	once  sync.Once

	// Loop-owned.
	waiting     []proposal          // accepted, not yet prepped
	inflight    map[uint64]inflight // proposed by us, by sequence
	seq         uint64              // of our last proposal
	appliedSeq  uint64              // of our last proposal applied
	syncID      uint64
	syncs       []syncWait
	applied     uint64
	appliedTerm uint64
	compacted   uint64
}

type inflight struct {
	tag uint64
	txn *txn.Txn
}

// syncWait is a sync waiting for two things: the leader's commit index
// when it arrived (raft's ReadIndex) applied here, and every proposal made
// before it applied. The second keeps a session's sync behind its own
// earlier writes: a one-voter raft answers ReadIndex at once, at a commit
// index that may not include a write proposed just before.
type syncWait struct {
	tag      uint64
	id       uint64
	index    uint64 // 0 until raft answers the ReadIndex
	afterSeq uint64
}

// New returns a Replica of a fresh one-voter group. Start it with Run.
func New(cfg Config) (*Replica, error) {
	cfg.ensureDefaults()
	if cfg.State == nil || cfg.Prep == nil {
		return nil, errors.New("replica: Config.State and Config.Prep are required")
	}
	storage := raft.NewMemoryStorage()
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             1,
		Storage:                   storage,
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		MaxUncommittedEntriesSize: 1 << 30,
		MaxCommittedSizePerReady:  16 << 20,
		PreVote:                   true,
		CheckQuorum:               true,
		Logger:                    raftLogger{cfg.Logger},
	})
	if err != nil {
		return nil, err
	}
	if err := rn.Bootstrap([]raft.Peer{{ID: cfg.ID}}); err != nil {
		return nil, err
	}
	return &Replica{
		cfg:      cfg,
		storage:  storage,
		rn:       rn,
		state:    cfg.State,
		propc:    make(chan proposal, cfg.MaxPending),
		stopc:    make(chan struct{}),
		donec:    make(chan struct{}),
		inflight: make(map[uint64]inflight),
	}, nil
}

// Submit hands a request to prep. It returns once the request is queued;
// its outcome arrives as an Event with the same tag. A nonzero tag must be
// unique among this server's requests in flight.
func (r *Replica) Submit(ctx context.Context, req txn.Request, tag uint64) error {
	select {
	case <-r.stopc:
		return ErrStopped
	default:
	}
	select {
	case r.propc <- proposal{req: req, tag: tag}:
		return nil
	case <-r.stopc:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Read calls f with the state read-locked and the zxid of the last txn
// applied to it. f must not call into the Replica.
func (r *Replica) Read(f func(s *txn.State, zxid int64)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f(r.state, r.lastZxid.Load())
}

// LastZxid returns the zxid of the last applied txn.
func (r *Replica) LastZxid() int64 { return r.lastZxid.Load() }

// IsLeader reports whether this replica leads and has applied its log, so
// that it preps requests.
func (r *Replica) IsLeader() bool { return r.leader.Load() }

// Stop ends the loop and waits for it. Requests not yet applied are
// reported as Dropped. Stop is idempotent.
func (r *Replica) Stop() {
	r.once.Do(func() { close(r.stopc) })
	<-r.donec
}

// Done is closed when the loop has ended.
func (r *Replica) Done() <-chan struct{} { return r.donec }
