package replica

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// Writes go on while a snapshot is being written, and the snapshot holds
// exactly the state at its label, none of those writes: the walk reads a
// frozen view (tree.Frozen) and holds no lock that apply waits on. The
// walk is paused in its middle while the writes are made; each must be
// acknowledged (next waits 10 s at most), none may be lost across a
// restart. Ref: issue 17 ("writes cost the same during a snapshot as
// between them"), DESIGN decision 9.
func TestWritesGoOnDuringSnapshot(t *testing.T) {
	fs := vfs.NewMem()
	var mu sync.Mutex
	digestAt := map[int64]uint64{} // zxid -> tree digest right after it applied
	paused, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	testHookWalkNode = func(i int) {
		if i == 300 {
			once.Do(func() { close(paused); <-resume })
		}
	}
	t.Cleanup(func() { testHookWalkNode = nil })
	record := func(cfg *Config) {
		apply := cfg.OnApply
		cfg.OnApply = func(ev Event) {
			if ev.Kind == Applied && ev.Zxid >= 500 { // the snapshot comes after 500-1000 entries
				mu.Lock()
				digestAt[ev.Zxid] = ev.State.Tree.Digest()
				mu.Unlock()
			}
			apply(ev)
		}
	}

	d := startDurable(t, fs, 1000, record)
	var resumed sync.Once
	unpause := func() { resumed.Do(func() { close(resume) }) }
	t.Cleanup(unpause) // runs before the replica's stop, which waits for the walk
	d.write(t, createSession())
	for b := 0; ; b++ {
		reqs := make([]txn.Request, 0, 100)
		for i := range 100 {
			reqs = append(reqs, create(fmt.Sprintf("/n%04d", b*100+i)))
		}
		d.write(t, reqs...)
		select {
		case <-paused:
		default:
			if b < 20 {
				continue
			}
			t.Fatal("no snapshot paused after 2000 creates with snapCount 1000")
		}
		break
	}
	// The walk is stopped at its 300th node: change nodes before and
	// after that point, delete some, add some under old parents.
	var during []txn.Request
	for i := 0; i < 500; i += 7 {
		during = append(during, setData(fmt.Sprintf("/n%04d", i), "during"))
	}
	for i := 1; i < 500; i += 25 {
		during = append(during, del(fmt.Sprintf("/n%04d", i)), create(fmt.Sprintf("/n%04d/child", i+1)))
	}
	start := time.Now()
	d.write(t, during...)
	t.Logf("%d writes acknowledged in %v while the snapshot walk was paused", len(during), time.Since(start))
	unpause()
	want := d.view()
	d.stop()

	snaps, err := snap.List(fs, snapDir)
	if err != nil {
		t.Fatal(err)
	}
	newest := snaps[len(snaps)-1]
	if newest.Meta.Index <= 1 {
		t.Fatalf("snapshots %+v; want the one written during the writes", snaps)
	}
	meta, st, err := snap.LoadFile(fs, snapDir, newest.Name, snap.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	atLabel, ok := digestAt[int64(meta.Index)]
	mu.Unlock()
	if !ok {
		t.Fatalf("no digest recorded at the snapshot's label %d", meta.Index)
	}
	if got := st.Tree.Digest(); got != atLabel {
		t.Fatalf("snapshot at %d has digest %x; the tree had %x at that index", meta.Index, got, atLabel)
	}
	d = startDurable(t, fs, 1000)
	if got := d.recovered(t); got != want {
		t.Fatalf("after restart %+v; acknowledged %+v", got, want)
	}
}
