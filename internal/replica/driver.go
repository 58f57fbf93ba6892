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

	// The log writer: a goroutine that makes raft's MsgStorageAppends
	// durable, in order, while the loop goes on (see processReady).
	// appending counts the writes handed to it whose result the loop has
	// not taken; at most maxAppending, so neither channel ever blocks its
	// sender. Writes beyond those wait in backlog, in order, so that a
	// slow fsync never holds up the loop: its ticks, a leader's
	// heartbeats and a follower's election clock go on. writing is set
	// once the writer runs.
	appendc     chan raftpb.Message
	appendDonec chan appendResult
	appending   int
	backlog     []raftpb.Message
	writing     bool
	writerDone  chan struct{}
}

// appendResult is a log write done by the writer. sent says the writer
// sent its responses to other members (sendDurable); unreachable are
// those it could not send to.
type appendResult struct {
	m           raftpb.Message
	err         error
	sent        bool
	unreachable []uint64
}

// maxAppending bounds the log writes queued for the writer; more wait in
// the loop's backlog.
const maxAppending = 256

// maxBacklog bounds the backlog. The backlog holds raft's messages, whose
// entries raft holds anyway (its unstable log, bounded by
// MaxUncommittedEntriesSize on the leader and by what the leader sends on
// a follower); the loop takes no new requests while it is over
// maxAppending (Run), and waits for the writer only past maxBacklog, on a
// disk stalled for seconds.
const maxBacklog = 64 * maxAppending

// applySlice bounds, as a share of a tick, how long one loop turn
// applies, so that a long backlog (a follower catching up, a burst of
// writes, a slow apply) is applied in slices with ticks, heartbeats and
// received messages handled between them.
const applySlice = 2 // a turn applies for at most Tick/applySlice

// always is a closed channel: a select on it never waits.
var always = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

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

		appendc:     make(chan raftpb.Message, maxAppending),
		appendDonec: make(chan appendResult, maxAppending),
		writerDone:  make(chan struct{}),
	}
	d.streamCtx, d.streamCancel = context.WithCancel(context.Background())
	return d
}

// writeSnapshot takes the snapshot of job on a goroutine of its own; the
// loop receives the result before it ends (finishSnapshot).
func (d *driver) writeSnapshot(r *Replica, job snapJob) {
	go func() { d.snapc <- r.takeSnapshot(job) }()
}

// writeLog is the log writer: it makes each MsgStorageAppend durable, in
// the order raft emitted them, and hands the result back to the loop. It
// ends when the loop stops; writes still queued then were never
// acknowledged.
//
// Writes queued while one is under way share its successor's fsync (group
// commit): on a slow disk the queue then drains a batch per fsync rather
// than a write per fsync, and the loop is not held back by it.
func (d *driver) writeLog(r *Replica) {
	defer close(d.writerDone)
	var batch []raftpb.Message
	for {
		select {
		case m := <-d.appendc:
			batch = append(batch[:0], m)
		case <-d.stopc:
			return
		}
	take:
		for len(batch) < maxAppending {
			select {
			case m := <-d.appendc:
				batch = append(batch, m)
			default:
				break take
			}
		}
		for len(batch) > 0 {
			n := groupable(batch)
			err := r.saveGroup(batch[:n])
			for i := range batch[:n] {
				res := appendResult{m: batch[i], err: err}
				if err == nil {
					res.sent, res.unreachable = r.sendDurable(&batch[i])
				}
				d.appendDonec <- res // room: see appending
			}
			batch = batch[n:]
		}
	}
}

// queueAppend hands a write to the writer, or queues it behind the
// writes waiting for room. Only past maxBacklog does it wait, taking
// results back.
func (d *driver) queueAppend(r *Replica, m raftpb.Message) error {
	for len(d.backlog) >= maxBacklog {
		select {
		case res := <-d.appendDonec:
			if err := r.appendResult(res); err != nil {
				return err
			}
		case <-d.stopc:
			return ErrStopped
		}
	}
	d.backlog = append(d.backlog, m)
	d.feedWriter()
	return nil
}

// feedWriter hands the writer what waits in the backlog, as far as there
// is room. The channel never blocks: see appending.
func (d *driver) feedWriter() {
	n := 0
	for ; n < len(d.backlog) && d.appending < maxAppending; n++ {
		d.appending++
		d.appendc <- d.backlog[n]
		d.backlog[n] = raftpb.Message{} // let its entries go once written
	}
	if n == len(d.backlog) {
		d.backlog = d.backlog[:0]
		return
	}
	d.backlog = d.backlog[n:]
}

// takeAppends takes res and every other write result there is back on
// the loop.
func (r *Replica) takeAppends(res appendResult) error {
	for {
		if err := r.appendResult(res); err != nil {
			return err
		}
		select {
		case res = <-r.drv.appendDonec:
		default:
			return nil
		}
	}
}

// testHookAppendResult, if set, runs on the loop before it takes a
// write's result back.
var testHookAppendResult func(r *Replica, m *raftpb.Message)

// appendResult takes a write's result back on the loop.
func (r *Replica) appendResult(res appendResult) error {
	if testHookAppendResult != nil {
		testHookAppendResult(r, &res.m)
	}
	r.drv.appending--
	r.drv.feedWriter()
	r.unreachable = append(r.unreachable, res.unreachable...)
	return r.appendDone(res.m, res.err, res.sent)
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
	defer func() { <-d.writerDone }() // stopc is closed by then
	defer r.finishSnapshot()          // before the log closes
	defer d.streams.Wait()            // stopc is closed by then: no sender blocks
	defer d.streamCancel()
	ticker := time.NewTicker(r.cfg.Tick)
	defer ticker.Stop()
	var purgec <-chan time.Time
	if r.cfg.PurgeInterval > 0 {
		t := time.NewTicker(r.cfg.PurgeInterval)
		defer t.Stop()
		purgec = t.C
	}
	d.writing = true
	go d.writeLog(r)
	if err := r.Start(); err != nil {
		r.fail(err)
		return
	}
	for {
		start := time.Now()
		more, err := r.turn(func() bool { return time.Since(start) >= r.cfg.Tick/applySlice })
		if err != nil {
			r.fail(err)
			return
		}
		// Stop taking requests while too many wait for a leader, or
		// for the log writer: the bounded propc then pushes back on the
		// connections.
		propc := d.propc
		if len(r.waiting) >= r.cfg.MaxPending || len(d.backlog) >= maxAppending {
			propc = nil
		}
		// With work left, the select does not wait. A tick and what
		// other members sent are taken first, every turn: a random
		// pick among the ready cases could leave them waiting for many
		// slices of a long apply, and a follower's election clock or a
		// leader's heartbeats with them.
		var busy <-chan struct{}
		if more {
			busy = always
			select {
			case <-ticker.C:
				r.Tick()
			default:
			}
			select {
			case in := <-d.recvc:
				r.receive(in)
				r.drainInbox()
			default:
			}
		}
		select {
		case <-busy:
		case res := <-d.appendDonec:
			if err := r.takeAppends(res); err != nil {
				r.fail(err)
				return
			}
		case <-ticker.C:
			r.Tick()
		case p := <-propc:
			r.waiting = append(r.waiting, p)
			r.drain()
		case in := <-d.recvc:
			r.receive(in)
			r.drainInbox()
		case <-purgec:
			r.purgeDue = true
			r.startPurge()
		case s := <-d.snapSentc:
			r.snapshotSent(s)
		case res := <-d.snapc:
			if err := r.snapshotDone(res); err != nil {
				r.fail(err)
				return
			}
			r.startPurge()
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
	r.cfg.Logger.Error("replica stopping", "err", err)
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
	r.ReceiveBuffer(from, kind, data, nil)
}

// ReceiveBuffer is Receive for data held in a bufpool buffer, buf, which
// the replica puts back once it no longer refers to data (or never, if it
// keeps it). The caller must not touch data afterwards.
func (r *Replica) ReceiveBuffer(from uint64, kind uint8, data []byte, buf *[]byte) {
	if kind == KindActivity {
		r.activity(from, data) // touches no core state
		return
	}
	select {
	case r.drv.recvc <- inbound{from: from, kind: kind, data: data, buf: buf}:
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
