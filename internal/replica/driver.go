package replica

import (
	"context"
	"io"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/txn"
)

// driver runs a core for a server, as raft's Node runs a RawNode: one
// goroutine (Run) owns the core and steps it from a ticker and from
// channels that the server's goroutines feed through Submit, Receive and
// ReceiveSnapshot. Snapshot files are written, and snapshots streamed to
// followers, on goroutines of their own that report back on channels.
type driver struct {
	propc chan proposal
	recvc chan inbound
	stopc chan struct{}
	donec chan struct{}
	once  sync.Once

	errMu sync.Mutex
	err   error // the fatal error that ended the loop

	snapc chan snapResult // a snapshot file's result; capacity 1

	// Snapshot streams to followers: goroutines the loop starts and, as
	// it ends, cancels (streamCtx) and waits for.
	streams      sync.WaitGroup
	streamCtx    context.Context
	streamCancel context.CancelFunc
	snapSentc    chan snapSent
}

// maxBatch bounds how many queued requests one loop turn takes, so a burst
// of requests still lets ticks and Readies through.
const maxBatch = 512

func newDriver(maxPending int) *driver {
	d := &driver{
		propc:     make(chan proposal, maxPending),
		recvc:     make(chan inbound, 1024),
		stopc:     make(chan struct{}),
		donec:     make(chan struct{}),
		snapc:     make(chan snapResult, 1),
		snapSentc: make(chan snapSent),
	}
	d.streamCtx, d.streamCancel = context.WithCancel(context.Background())
	return d
}

// writeSnapshot writes the snapshot file of job on a goroutine of its
// own; the loop receives the result before it ends (finishSnapshot).
func (d *driver) writeSnapshot(r *Replica, job snapJob) {
	go func() { d.snapc <- snapResult{job: job, err: r.writeSnapshot(job)} }()
}

// stream sends a snapshot to a follower on a goroutine of its own.
func (d *driver) stream(r *Replica, m raftpb.Message) {
	d.streams.Add(1)
	go func() {
		defer d.streams.Done()
		s := r.sendStream(d.streamCtx, m)
		select {
		case d.snapSentc <- s:
		case <-d.stopc:
		}
	}()
}

// Run is the loop. It returns when Stop is called.
// If the log cannot be written it returns early, with Err set.
func (r *Replica) Run() {
	d := r.drv
	defer close(d.donec)
	defer r.closeLog()
	defer r.finishSnapshot() // before the log closes
	defer d.streams.Wait()   // stopc is closed by then: no sender blocks
	defer d.streamCancel()
	ticker := time.NewTicker(r.cfg.Tick)
	defer ticker.Stop()
	var purgec <-chan time.Time
	if r.cfg.PurgeInterval > 0 {
		t := time.NewTicker(r.cfg.PurgeInterval)
		defer t.Stop()
		purgec = t.C
	}
	if err := r.Start(); err != nil {
		r.fail(err)
		return
	}
	for {
		if err := r.Process(); err != nil {
			r.fail(err)
			return
		}
		// Stop taking requests while too many wait for a leader: the
		// bounded propc then pushes back on the connections.
		propc := d.propc
		if len(r.waiting) >= r.cfg.MaxPending {
			propc = nil
		}
		select {
		case <-ticker.C:
			r.Tick()
		case p := <-propc:
			r.waiting = append(r.waiting, p)
			r.drain()
		case in := <-d.recvc:
			r.receive(in)
			r.drainInbox()
		case <-purgec:
			r.purge()
		case s := <-d.snapSentc:
			r.snapshotSent(s)
		case res := <-d.snapc:
			if err := r.snapshotDone(res); err != nil {
				r.fail(err)
				return
			}
		case <-d.stopc:
			r.drain()
			r.dropAll()
			return
		}
	}
}

// drain takes what else is queued, without blocking.
func (r *Replica) drain() {
	for i := 0; i < maxBatch; i++ {
		select {
		case p := <-r.drv.propc:
			r.waiting = append(r.waiting, p)
		default:
			return
		}
	}
}

// drainInbox handles what else other members sent, without blocking.
func (r *Replica) drainInbox() {
	for i := 0; i < maxBatch; i++ {
		select {
		case in := <-r.drv.recvc:
			r.receive(in)
		default:
			return
		}
	}
}

// finishSnapshot waits for a snapshot still being written when the loop
// ends, and records it if the log still takes records.
func (r *Replica) finishSnapshot() {
	if r.snapBusy {
		if err := r.snapshotDone(<-r.drv.snapc); err != nil {
			r.cfg.Logger.Warn("snapshot at stop", "err", err)
		}
	}
}

// fail ends the loop after a fatal error: it records err for Err, stops
// taking requests and reports every pending one as Dropped.
func (r *Replica) fail(err error) {
	r.cfg.Logger.Error("replica stopping: the log cannot be written", "err", err)
	d := r.drv
	d.errMu.Lock()
	d.err = err
	d.errMu.Unlock()
	d.once.Do(func() { close(d.stopc) })
	r.drain()
	r.dropAll()
}

// Submit hands a request to prep. It returns once the request is queued;
// its outcome arrives as an Event with the same tag. A nonzero tag must be
// unique among this server's requests in flight.
func (r *Replica) Submit(ctx context.Context, req txn.Request, tag uint64) error {
	d := r.drv
	select {
	case <-d.stopc:
		return ErrStopped
	default:
	}
	select {
	case d.propc <- proposal{req: req, tag: tag}:
		return nil
	case <-d.stopc:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Receive hands the loop a message another member sent. It blocks while
// the loop's inbox is full, pushing back on that peer's connection, and
// drops what cannot be decoded.
func (r *Replica) Receive(from uint64, kind uint8, data []byte) {
	if kind == KindActivity {
		r.activity(from, data) // touches no core state
		return
	}
	select {
	case r.drv.recvc <- inbound{from: from, kind: kind, data: data}:
	case <-r.drv.stopc:
	}
}

// ReceiveSnapshot takes a snapshot stream from the leader: header is the
// MsgSnap, body the snapshot file. The file is stored and verified before
// raft sees the message; it returns once raft has taken it, or with the
// reason it was refused, which goes back to the sender.
func (r *Replica) ReceiveSnapshot(from uint64, header []byte, body io.Reader) error {
	in, err := r.storeSnapshot(from, header, body)
	if err != nil {
		return err
	}
	d := r.drv
	done := make(chan struct{})
	in.done = done
	select {
	case d.recvc <- in:
	case <-d.stopc:
		return ErrStopped
	}
	select {
	case <-done:
		return nil
	case <-d.stopc:
		return ErrStopped
	}
}

// Stop ends the loop and waits for it. Requests not yet applied are
// reported as Dropped. Stop is idempotent.
func (r *Replica) Stop() {
	r.drv.once.Do(func() { close(r.drv.stopc) })
	<-r.drv.donec
}

// Err returns the error that ended the loop, if one did: the log could not
// be written, so the server must stop (every pending request was reported
// Dropped). It is nil after a plain Stop.
func (r *Replica) Err() error {
	r.drv.errMu.Lock()
	defer r.drv.errMu.Unlock()
	return r.drv.err
}

// Done is closed when the loop has ended.
func (r *Replica) Done() <-chan struct{} { return r.drv.donec }
