package sim

import (
	"container/heap"
	crand "crypto/rand"
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
)

// Options describe one run.
type Options struct {
	Seed    uint64
	Members int // 3 if 0
	Clients int // 4 if 0
	// Duration is how long faults and client traffic go on, in simulated
	// ms; then the faults heal and the members converge. 0 is 4000.
	Duration int64
	// NoFaults runs with a perfect network and disks (a baseline).
	NoFaults bool
	// Trace keeps the readable trace of the run in Result.Trace.
	Trace bool
	// NoReconfig leaves the membership alone; by default a spare member
	// may be added and one member removed (dynamic reconfig).
	NoReconfig bool
	// RotLogEnd puts bit rot in every crashed member's last log segment,
	// among its last records, instead of now and then anywhere: the fault
	// profile that tells bit rot from a torn tail, rare in the default mix.
	RotLogEnd bool
}

func (o *Options) ensureDefaults() {
	if o.Members == 0 {
		o.Members = 3
	}
	if o.Clients == 0 {
		o.Clients = 4
	}
	if o.Duration == 0 {
		o.Duration = 4000
	}
}

// Result is what a run did and what its checks found.
type Result struct {
	Seed uint64
	// Hash is a hash of the whole trace: the same seed gives the same.
	Hash uint64
	// Failures are the violated properties; empty when the run passed.
	Failures []string
	// Trace is the readable trace, with Options.Trace.
	Trace []string
	// SimMs is how long the run lasted in simulated time.
	SimMs int64
	// Ops counts the client operations answered; Faults the faults
	// injected.
	Ops, Faults int
}

// epochMs is where simulated wall clocks start (2023-11-14).
const epochMs = 1_700_000_000_000

// tickMs is the members' raft tick in simulated ms.
const tickMs = 10

// Sim is one run. Everything in it happens on one goroutine, in the order
// of the event queue, so a seed fixes the run.
type Sim struct {
	opt     Options
	rng     *rand.Rand
	now     int64 // simulated ms since the start
	q       eventQueue
	seq     uint64
	members []*member
	clients []*client
	net     network
	stamp   int64 // logical time of client calls and returns, for porcupine
	connID  uint64
	faulty  bool // faults are being injected
	stopped bool // client traffic is over

	hash     hash.Hash64
	trace    []string
	failures []string
	faults   int
	ops      int

	hist   []porcOp                   // linearizability history
	digest map[int64]uint64           // zxid -> state digest, as first applied
	trig   map[int64]string           // zxid -> the txn's triggers, as first applied
	trigs  map[int64][]appliedTrigger // the same, for the setWatches check
	ended  map[int64]bool             // sessions that ended (closed or expired)

	inConfig   map[uint64]bool // the membership as of the last reconfig applied
	observers  map[uint64]bool // those of inConfig that do not vote
	configZxid int64           // that reconfig's zxid
	removed    bool            // a member was asked to leave
	repair     *member         // a member that refused to start from its damaged disk, being replaced
}

type event struct {
	at  int64
	seq uint64
	fn  func()
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// after schedules fn at now+d.
func (s *Sim) after(d int64, fn func()) {
	s.seq++
	heap.Push(&s.q, event{at: s.now + max(d, 0), seq: s.seq, fn: fn})
}

// logf adds a line to the trace (and to its hash).
func (s *Sim) logf(format string, args ...any) {
	line := fmt.Sprintf("%7d ", s.now) + fmt.Sprintf(format, args...)
	s.hash.Write([]byte(line))
	s.hash.Write([]byte{'\n'})
	if s.opt.Trace {
		s.trace = append(s.trace, line)
	}
}

// fail records a violated property.
func (s *Sim) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.logf("VIOLATION %s", msg)
	if len(s.failures) < 20 {
		s.failures = append(s.failures, fmt.Sprintf("t=%d: %s", s.now, msg))
	}
}

// chance is true with probability p.
func (s *Sim) chance(p float64) bool { return s.rng.Float64() < p }

// between returns a random int64 in [lo, hi].
func (s *Sim) between(lo, hi int64) int64 { return lo + s.rng.Int64N(hi-lo+1) }

// runMu keeps Runs from overlapping: each takes over crypto/rand.Reader.
var runMu sync.Mutex

// seededReader is crypto/rand.Reader during a run. go.etcd.io/raft draws
// its randomized election timeouts from crypto/rand; a run must draw them
// from its seed to be reproducible.
type seededReader struct{ rng *rand.Rand }

func (r seededReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.rng.Uint32())
	}
	return len(p), nil
}

// Run runs one seed and checks it. Runs do not overlap: for its duration
// a run points crypto/rand.Reader at its seed (see seededReader), so
// nothing else in the process may need cryptographic randomness meanwhile;
// the simulator is for tests.
func Run(opt Options) (res Result) {
	runMu.Lock()
	defer runMu.Unlock()
	opt.ensureDefaults()
	s := &Sim{
		opt:    opt,
		rng:    rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)),
		hash:   fnv.New64a(),
		digest: make(map[int64]uint64),
		trig:   make(map[int64]string),
		trigs:  make(map[int64][]appliedTrigger),
		ended:  make(map[int64]bool),
	}
	saved := crand.Reader
	crand.Reader = seededReader{rand.New(rand.NewPCG(opt.Seed, 0x5eed))}
	defer func() { crand.Reader = saved }()
	n := opt.Members
	if !opt.NoReconfig {
		n++ // the spare
	}
	s.net.init(s, n)
	s.inConfig = make(map[uint64]bool)
	for i := range opt.Members {
		s.inConfig[uint64(i+1)] = true
	}
	s.faulty = !opt.NoFaults
	s.logf("seed %d: %d members, %d clients", opt.Seed, opt.Members, opt.Clients)
	for i := range n {
		m := newMember(s, uint64(i+1))
		m.spare = i >= opt.Members
		s.members = append(s.members, m)
	}
	for _, m := range s.members {
		if !m.spare {
			m.start()
		}
	}
	for i := range opt.Clients {
		c := newClient(s, i)
		s.clients = append(s.clients, c)
		s.after(s.between(50, 300), c.act)
	}
	if s.faulty {
		s.after(s.between(100, 400), s.injectFault)
	}
	defer func() {
		// A panic in the code under test is a finding like any other.
		if p := recover(); p != nil {
			s.fail("panic: %v", p)
			res = Result{Seed: opt.Seed, Hash: s.hash.Sum64(), Failures: s.failures, Trace: s.trace, SimMs: s.now}
		}
	}()
	s.runUntil(opt.Duration)
	// Heal: no new faults, every member up, every link back; clients
	// finish what they have in flight; the members converge.
	s.faulty = false
	s.stopped = true
	s.heal()
	s.runUntil(opt.Duration + 4000)
	s.settle(opt.Duration + 8000)
	s.finalReads()
	s.runUntil(s.now + 2000)
	s.check()
	return Result{Seed: opt.Seed, Hash: s.hash.Sum64(), Failures: s.failures, Trace: s.trace,
		SimMs: s.now, Ops: s.ops, Faults: s.faults}
}

// runUntil processes events up to simulated time t.
func (s *Sim) runUntil(t int64) {
	for s.q.Len() > 0 && s.q[0].at <= t {
		e := heap.Pop(&s.q).(event)
		s.now = e.at
		e.fn()
	}
	s.now = t
}

// Report formats a failed result: what failed, the trace's tail, and
// how to run the seed again.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed:\n", r.Seed)
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	if n := len(r.Trace); n > 0 {
		from := max(0, n-400)
		fmt.Fprintf(&b, "trace (last %d of %d lines):\n", n-from, n)
		for _, l := range r.Trace[from:] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "rerun: go test ./internal/sim -run TestSeeds -seed=%d -v\n", r.Seed)
	return b.String()
}
