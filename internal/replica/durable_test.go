package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

const (
	logDir  = "/data/log"
	snapDir = "/data/snap"
)

// durable is a replica with a log, as a test runs it.
type durable struct {
	r      *Replica
	events chan Event
	done   chan struct{}
}

// startDurable opens (or recovers) a replica on fs and runs it. The
// replica is stopped when the test ends, if the test did not stop it.
func startDurable(t *testing.T, fs vfs.FS, snapCount int, opts ...func(*Config)) *durable {
	t.Helper()
	d := &durable{events: make(chan Event, 4096), done: make(chan struct{})}
	r, err := New(durableConfig(fs, snapCount, func(ev Event) { d.events <- ev }, opts))
	if err != nil {
		t.Fatal(err)
	}
	d.r = r
	go func() {
		r.Run()
		close(d.done)
	}()
	t.Cleanup(d.stop)
	return d
}

// durableConfig is a one-voter replica's Config over fs, with a fresh
// state, adjusted by opts.
func durableConfig(fs vfs.FS, snapCount int, onApply func(Event), opts []func(*Config)) Config {
	state := txn.NewState(tree.New())
	cfg := Config{
		Tick:      10 * time.Millisecond,
		State:     state,
		Prep:      txn.NewPrepper(state, txn.PrepConfig{}),
		OnApply:   onApply,
		Now:       func() int64 { return 1000 },
		FS:        fs,
		Dir:       logDir,
		SnapDir:   snapDir,
		SnapCount: snapCount,
		// Small segments: MemFS copies a whole file on each sync.
		SegmentSize: 64 << 10,
		// A request waits as long as next does (10 s): under -race on a
		// loaded machine, MemFS's whole-segment syncs made a write wait
		// past the default second, and a Dropped request failed a test
		// that was not about deadlines.
		RequestTicks: 1000,
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func (d *durable) stop() {
	d.r.Stop()
	<-d.done
}

// view is what must survive a restart.
type view struct {
	Digest   uint64
	Nodes    int
	Sessions int
	Zxid     int64
}

// recovered is the view of a restarted replica once it leads again, with
// the one entry its new term adds taken off the zxid: a new leader
// appends an empty entry (raft's no-op) and applies it, and only then may
// it prep. Waiting for that makes the zxid exact instead of racing it.
func (d *durable) recovered(t *testing.T) view {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !d.r.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the restarted replica did not lead within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	v := d.view()
	v.Zxid--
	return v
}

func (d *durable) view() view {
	var v view
	d.r.Read(func(s *txn.State, zxid int64) {
		v = view{Digest: s.Tree.Digest(), Nodes: s.Tree.NodeCount(), Sessions: len(s.Sessions), Zxid: zxid}
	})
	return v
}

// write submits reqs with tags from 1 and waits until each is applied,
// i.e. acknowledged.
func (d *durable) write(t *testing.T, reqs ...txn.Request) {
	t.Helper()
	for i, req := range reqs {
		if err := d.r.Submit(context.Background(), req, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range reqs {
		ev := next(t, d.events)
		if ev.Kind != Applied || ev.Tag != uint64(i+1) || ev.Result.Err != jute.OK {
			t.Fatalf("request %d: event %v tag %d result %+v", i+1, ev.Kind, ev.Tag, ev.Result)
		}
	}
}

func createSession() txn.Request {
	return txn.Request{SessionID: session, Op: jute.OpCreateSession,
		Record: &txn.CreateSession{TimeoutMs: 30000, Password: make([]byte, 16)}}
}

// workload is a session, n persistent nodes, data changes, an ephemeral
// and a deletion.
func workload(n int) []txn.Request {
	reqs := []txn.Request{createSession()}
	for i := range n {
		reqs = append(reqs, create(fmt.Sprintf("/n%d", i)))
	}
	for i := 0; i < n; i += 3 {
		reqs = append(reqs, txn.Request{SessionID: session, Op: jute.OpSetData,
			Record: &jute.SetDataRequest{Path: fmt.Sprintf("/n%d", i), Data: []byte("v"), Version: -1}})
	}
	reqs = append(reqs,
		txn.Request{SessionID: session, Op: jute.OpCreate, Record: &jute.CreateRequest{Path: "/eph", ACL: open, Flags: jute.FlagEphemeral}},
		txn.Request{SessionID: session, Op: jute.OpDelete, Record: &jute.PathVersion{Path: "/n1", Version: -1}})
	return reqs
}

// Ref: DESIGN decision 9: the log is fsynced before a txn is acknowledged,
// and a restart recovers the snapshot plus the log after it.
func TestRestartRecoversState(t *testing.T) {
	tests := []struct {
		name      string
		snapCount int
		wantSnaps bool
	}{
		{"log only", 0, false}, // default snapCount: no snapshot in 60 entries
		{"snapshots and log suffix", 7, true},
		{"snapshot every entry", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			d := startDurable(t, fs, tc.snapCount)
			d.write(t, workload(40)...)
			before := d.view()
			d.stop()

			snaps, err := snap.List(fs, snapDir)
			if err != nil {
				t.Fatal(err)
			}
			// The bootstrap snapshot at index 1 is always there.
			taken := slices.ContainsFunc(snaps, func(in snap.Info) bool { return in.Meta.Index > 1 })
			if taken != tc.wantSnaps {
				t.Fatalf("snapshots taken: %v (%d files); want %v", taken, len(snaps), tc.wantSnaps)
			}
			if len(snaps) > snap.MinRetain {
				t.Errorf("%d snapshots kept; want at most %d", len(snaps), snap.MinRetain)
			}

			d = startDurable(t, fs, tc.snapCount)
			if got := d.recovered(t); got != before {
				t.Fatalf("after restart %+v; before %+v", got, before)
			}
			// The group works after the restart (its configuration came
			// back), and what it writes survives the next restart too.
			d.write(t, create("/after"))
			after := d.view()
			if after.Zxid <= before.Zxid {
				t.Fatalf("zxid %d after restart, not past %d", after.Zxid, before.Zxid)
			}
			d.stop()
			d = startDurable(t, fs, tc.snapCount)
			if got := d.recovered(t); got != after {
				t.Fatalf("after second restart %+v; want %+v", got, after)
			}
		})
	}
}

// A crash right after writes were acknowledged loses none of them: only
// what was fsynced survives CrashClone.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	for _, snapCount := range []int{0, 5} {
		t.Run(fmt.Sprint("snapCount=", snapCount), func(t *testing.T) {
			fs := vfs.NewMem()
			d := startDurable(t, fs, snapCount)
			d.write(t, workload(25)...)
			want := d.view()
			crashed := fs.CrashClone()
			d.stop()

			d = startDurable(t, crashed, snapCount)
			if got := d.recovered(t); got != want {
				t.Fatalf("after crash %+v; acknowledged %+v", got, want)
			}
		})
	}
}

// A log that cannot be written stops the replica: the request whose entry
// failed to persist is Dropped, never acknowledged, Err says why, and the
// acknowledged writes are still there after a restart.
func TestLogWriteFailureIsFatal(t *testing.T) {
	mem := vfs.NewMem()
	var broken atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if broken.Load() && op.Kind == errorfs.OpFileSync {
			return errorfs.ErrInjected
		}
		return nil
	}))
	d := startDurable(t, fs, 0)
	d.write(t, createSession(), create("/kept"))
	want := d.view()
	broken.Store(true)
	if err := d.r.Submit(context.Background(), create("/lost"), 9); err != nil {
		t.Fatal(err)
	}
	ev := next(t, d.events)
	if ev.Kind != Dropped || ev.Tag != 9 {
		t.Fatalf("event %v tag %d; want Dropped tag 9", ev.Kind, ev.Tag)
	}
	select {
	case <-d.r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not end after a failed fsync")
	}
	if err := d.r.Err(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Err() = %v; want the injected error", err)
	}
	if err := d.r.Submit(context.Background(), create("/late"), 10); !errors.Is(err, ErrStopped) {
		t.Fatalf("Submit after the failure: %v; want ErrStopped", err)
	}
	d.stop()

	d = startDurable(t, mem.CrashClone(), 0)
	got := d.view()
	if got.Digest != want.Digest {
		t.Fatalf("after restart %+v; acknowledged %+v", got, want)
	}
}

// A snapshot file newer than the log's marker was never committed (the
// crash came between the file and the marker): recovery ignores it.
func TestUncommittedSnapshotIgnored(t *testing.T) {
	fs := vfs.NewMem()
	d := startDurable(t, fs, 0)
	d.write(t, workload(10)...)
	want := d.view()
	d.stop()
	bogus := txn.NewState(tree.New())
	if _, err := snap.Write(fs, snapDir, snap.Meta{Index: 5, Term: 1, Zxid: 5}, bogus, snap.Options{}); err != nil {
		t.Fatal(err)
	}
	d = startDurable(t, fs, 0)
	if got := d.recovered(t); got != want {
		t.Fatalf("after restart %+v; want %+v", got, want)
	}
}

// Ref: issue 14 (restart). The newest snapshot file is loaded while the
// log is read, before the log can say whether it was committed. One that
// verifies but has no marker (the crash came between the file and the
// marker) must still give way to the newest committed one.
func TestSnapshotLoadedAheadNeedsItsMarker(t *testing.T) {
	fs := vfs.NewMem()
	d := startDurable(t, fs, 7)
	d.write(t, workload(20)...)
	want := d.view()
	d.stop()
	snaps, err := snap.List(fs, snapDir)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots %v, %v; want some", snaps, err)
	}
	bogus := txn.NewState(tree.New())
	newest := snaps[len(snaps)-1].Meta
	if _, err := snap.Write(fs, snapDir, snap.Meta{Index: newest.Index + 1000, Term: newest.Term, Zxid: int64(newest.Index + 1000)}, bogus, snap.Options{}); err != nil {
		t.Fatal(err)
	}
	d = startDurable(t, fs, 7)
	if got := d.recovered(t); got != want {
		t.Fatalf("after restart %+v; want %+v", got, want)
	}
}

func setData(path, data string) txn.Request {
	return txn.Request{SessionID: session, Op: jute.OpSetData,
		Record: &jute.SetDataRequest{Path: path, Data: []byte(data), Version: -1}}
}

func del(path string) txn.Request {
	return txn.Request{SessionID: session, Op: jute.OpDelete, Record: &jute.PathVersion{Path: path, Version: -1}}
}

// A snapshot is fuzzy: written while apply goes on. Nodes change, go and
// come between the walk's listing and its reads; recovery from the
// snapshot plus the log after its label must still give exactly the state
// that was acknowledged. Ref: paper section 4.3 ("fuzzy snapshots"),
// DESIGN decision 9.
func TestFuzzySnapshotReplaysToSameState(t *testing.T) {
	fs := vfs.NewMem()
	listed, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	testHookWalk = func() { once.Do(func() { close(listed); <-resume }) }
	t.Cleanup(func() { testHookWalk = nil })

	d := startDurable(t, fs, 8)
	d.write(t, createSession(), create("/p"), create("/p/a"), create("/p/b"), create("/q"),
		create("/q/x"), setData("/p/a", "1"), create("/r"), create("/s"))
	select {
	case <-listed:
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot started")
	}
	// The walk has listed the paths; change them before it reads them.
	d.write(t, setData("/p/a", "2"), del("/p/b"), create("/p/c"), del("/q/x"), del("/q"),
		create("/q"), create("/q/y"), create("/t"), setData("/r", "3"))
	close(resume)
	d.write(t, create("/after")) // applied while the snapshot is written, or after
	want := d.view()
	d.stop() // waits for the snapshot and records it

	snaps, err := snap.List(fs, snapDir)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots %v, %v; want the fuzzy one", snaps, err)
	}
	d = startDurable(t, fs, 8)
	if got := d.recovered(t); got != want {
		t.Fatalf("after restart from the fuzzy snapshot %+v; acknowledged %+v", got, want)
	}
}

// Ref: issue "Durability", recovery: load the newest snapshot whose CRC
// verifies, falling back to an older one if the newest is damaged, then
// replay the log after its label. The log keeps what the oldest retained
// snapshot needs, so falling back loses nothing.
func TestDamagedSnapshotFallsBackToAnOlderOne(t *testing.T) {
	tests := []struct {
		name    string
		damage  int  // how many of the newest snapshots to damage
		remove  bool // remove the files instead of flipping a byte
		wantErr bool
	}{
		{"newest corrupt", 1, false, false},
		{"two newest corrupt", 2, false, false},
		{"newest missing", 1, true, false},
		{"all corrupt", snap.MinRetain, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Three runs, each past snapCount: Stop waits for a snapshot
			// being written, so each run leaves at least one.
			fs := vfs.NewMem()
			reqs := workload(30)
			var d *durable
			for i := range 3 {
				d = startDurable(t, fs, 7)
				d.write(t, reqs[i*len(reqs)/3:(i+1)*len(reqs)/3]...)
				if i < 2 {
					d.stop()
				}
			}
			want := d.view()
			d.stop()

			snaps, err := snap.List(fs, snapDir)
			if err != nil {
				t.Fatal(err)
			}
			if len(snaps) != snap.MinRetain {
				t.Fatalf("%d snapshots kept; want %d", len(snaps), snap.MinRetain)
			}
			for _, in := range snaps[len(snaps)-tc.damage:] {
				if tc.remove {
					if err := fs.Remove(snapDir + "/" + in.Name); err != nil {
						t.Fatal(err)
					}
					continue
				}
				flipByte(t, fs, snapDir+"/"+in.Name)
			}

			if tc.wantErr {
				state := txn.NewState(tree.New())
				_, err := New(Config{State: state, Prep: txn.NewPrepper(state, txn.PrepConfig{}),
					FS: fs, Dir: logDir, SnapDir: snapDir})
				if !errors.Is(err, snap.ErrNoValidSnapshot) {
					t.Fatalf("New with every snapshot damaged: %v; want ErrNoValidSnapshot", err)
				}
				return
			}
			d = startDurable(t, fs, 7)
			if got := d.recovered(t); got != want {
				t.Fatalf("after restart %+v; acknowledged %+v", got, want)
			}
			// The next snapshots and restarts go on from there.
			d.write(t, create("/after1"), create("/after2"))
			want = d.view()
			d.stop()
			d = startDurable(t, fs, 7)
			if got := d.recovered(t); got != want {
				t.Fatalf("after second restart %+v; want %+v", got, want)
			}
		})
	}
}

// flipByte damages a file in its middle.
func flipByte(t *testing.T, fs vfs.FS, name string) {
	t.Helper()
	r, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// Ref: zoo.cfg autopurge.purgeInterval: with an interval set, old snapshots
// are left until the purge task runs, which then keeps snapRetainCount of
// them (and the log they need).
func TestPurgeInterval(t *testing.T) {
	fs := vfs.NewMem()
	never := func(c *Config) { c.PurgeInterval = time.Hour }
	reqs := workload(40)
	for i := range 5 {
		d := startDurable(t, fs, 7, never)
		d.write(t, reqs[i*len(reqs)/5:(i+1)*len(reqs)/5]...)
		d.stop()
	}
	snaps, err := snap.List(fs, snapDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) <= snap.MinRetain {
		t.Fatalf("%d snapshots before the purge ran; want more than %d", len(snaps), snap.MinRetain)
	}
	want := snaps[len(snaps)-snap.MinRetain:]

	d := startDurable(t, fs, 1000, func(c *Config) { c.PurgeInterval = 5 * time.Millisecond })
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := snap.List(fs, snapDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == snap.MinRetain {
			if got[0].Name != want[0].Name {
				t.Fatalf("purge kept %v; want the newest %d", got, snap.MinRetain)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d snapshots 10s after start; the purge did not run", len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
	d.recovered(t)
	view := d.view()
	d.stop()
	d = startDurable(t, fs, 1000)
	if got := d.recovered(t); got != view {
		t.Fatalf("after purge and restart %+v; want %+v", got, view)
	}
}

// diskUsage is the bytes of the files in dirs.
func diskUsage(t *testing.T, fs vfs.FS, dirs ...string) (total int64, files int) {
	t.Helper()
	for _, dir := range dirs {
		names, err := fs.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			fi, err := fs.Stat(dir + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
			files++
		}
	}
	return total, files
}

// Ref: issue 13, defect 7: every start preallocated a fresh log segment
// and kept the old ones, so a crash loop filled the disk (10 restarts with
// no writes left 641 MB at the default 64 MiB segments). Each start of a
// one-voter group writes a little (a new term and its empty entry); the
// restarts must reuse the open segment's space, so the disk holds about
// one segment however many times the server restarts.
func TestCrashLoopKeepsDiskBounded(t *testing.T) {
	const segment = 64 << 10 // startDurable's SegmentSize
	fs := vfs.NewMem()
	d := startDurable(t, fs, 0)
	d.write(t, workload(5)...)
	want := d.view()
	for i := range 10 {
		crashed := fs.CrashClone()
		d.stop()
		fs = crashed
		d = startDurable(t, fs, 0)
		if got := d.recovered(t); got.Digest != want.Digest || got.Nodes != want.Nodes {
			t.Fatalf("restart %d: %+v; want %+v", i+1, got, want)
		}
	}
	d.stop()
	size, files := diskUsage(t, fs, logDir, snapDir)
	t.Logf("after 10 crash restarts: %d bytes in %d files", size, files)
	if size > 2*segment {
		t.Errorf("after 10 crash restarts with no writes the data takes %d bytes in %d files; want at most %d",
			size, files, 2*segment)
	}
}
