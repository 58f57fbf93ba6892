package server

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// mntrKeys returns the keys of an mntr answer.
func mntrKeys(out string) map[string]string {
	keys := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		keys[k] = v
	}
	return keys
}

// Every key of Apache 3.8's standalone mntr (captured whole in
// fourlw/testdata/apache/standalone_mntr_full.txt) is either in Zoo's
// mntr or listed in docs/operations-mntr.md as one Zoo cannot have; and
// nothing listed there is reported after all.
func TestMntrApacheKeys(t *testing.T) {
	apache, err := os.ReadFile(filepath.Join("fourlw", "testdata", "apache", "standalone_mntr_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations-mntr.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Apache") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, name := range strings.Split(first, ",") {
			documented[strings.TrimSpace(name)] = true
		}
	}
	ts := startServer(t, func(c *Config) { c.DataDir = t.TempDir() })
	c := newSession(t, ts.addr)
	c.create("/x", nil, 0)
	c.getData("/x")
	zoo := mntrKeys(fourLetter(t, ts.addr, "mntr"))
	base := regexp.MustCompile(`^zk_(avg|min|max|cnt|sum|p50|p95|p99|p999)_`)
	for k := range mntrKeys(string(apache)) {
		name := strings.TrimPrefix(base.ReplaceAllString(k, "zk_"), "zk_")
		_, have := zoo[k]
		switch {
		case have && documented[name]:
			t.Errorf("%s is reported, but docs/operations-mntr.md says Zoo cannot have it", k)
		case !have && !documented[name]:
			t.Errorf("Apache's %s is neither reported nor listed in docs/operations-mntr.md", k)
		}
	}
	// The latencies were recorded: one write (the create) and one read.
	for k, want := range map[string]string{"zk_cnt_updatelatency": "1", "zk_cnt_readlatency": "1"} {
		if zoo[k] != want {
			t.Errorf("%s = %q, want %s", k, zoo[k], want)
		}
	}
	if n, _ := strconv.Atoi(zoo["zk_cnt_fsynctime"]); n < 1 {
		t.Errorf("zk_cnt_fsynctime = %q: no fsync recorded", zoo["zk_cnt_fsynctime"])
	}
	if n, _ := strconv.Atoi(zoo["zk_bytes_received_count"]); n < 1 {
		t.Errorf("zk_bytes_received_count = %q", zoo["zk_bytes_received_count"])
	}
}

// hash prints Apache's digest history: a line "<zxid hex>: <digest>" for
// every 128 zxids, the digest being the tree's at that zxid.
func TestFourLetterHash(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			before := len(strings.Split(strings.TrimSpace(fourLetter(t, tg.addr, "hash")), "\n"))
			for i := range 2 * digestLogInterval {
				c.create(fmt.Sprintf("%s/n%d", root, i), []byte("x"), 0)
			}
			out := fourLetter(t, tg.addr, "hash")
			line := regexp.MustCompile(`^([0-9a-f]+): (-?[0-9]+)$`)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < before+1 {
				t.Fatalf("hash after %d writes:\n%s", 2*digestLogInterval, out)
			}
			var last int64
			for _, l := range lines {
				m := line.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("hash line %q in:\n%s", l, out)
				}
				z, _ := strconv.ParseInt(m[1], 16, 64)
				if z <= last {
					t.Fatalf("zxids not increasing:\n%s", out)
				}
				last = z
			}
			if tg.zoo == nil {
				return
			}
			// With no write in between, the newest entry is the
			// tree's digest now if it was taken at the last zxid.
			var digest, zxid int64
			tg.zoo.srv.rep.Read(func(st *txn.State, z int64) { digest, zxid = st.Tree.ApacheDigest(), z })
			m := line.FindStringSubmatch(lines[len(lines)-1])
			if z, _ := strconv.ParseInt(m[1], 16, 64); z == zxid && m[2] != strconv.FormatInt(digest, 10) {
				t.Errorf("digest at %x is %s, tree says %d", z, m[2], digest)
			}
		})
	}
}

// dirs reports the bytes in the snapshot and log directories, as they are
// on disk.
func TestFourLetterDirs(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	ts := startServer(t, func(c *Config) {
		c.DataDir, c.DataLogDir = data, logs
		c.SnapCount = 10
	})
	c := newSession(t, ts.addr)
	for i := range 30 {
		c.create(fmt.Sprintf("/d%d", i), make([]byte, 100), jute.FlagPersistent)
	}
	var snapSize, logSize int64
	waitFor(t, ioTimeout, func() error {
		snapSize, logSize = dirSize(filepath.Join(data, "snap")), dirSize(filepath.Join(logs, "log"))
		if snapSize == 0 || logSize == 0 {
			return fmt.Errorf("snap %d, log %d bytes", snapSize, logSize)
		}
		return nil
	})
	out := fourLetter(t, ts.addr, "dirs")
	sc := bufio.NewScanner(strings.NewReader(out))
	got := map[string]int64{}
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		got[k], _ = strconv.ParseInt(v, 10, 64)
	}
	// A snapshot may be written between the two looks: compare with what
	// is on disk after.
	if got["datadir_size"] == 0 || got["datadir_size"] > dirSize(filepath.Join(data, "snap"))+snapSize {
		t.Errorf("datadir_size %d, on disk %d:\n%s", got["datadir_size"], snapSize, out)
	}
	if got["logdir_size"] < logSize {
		t.Errorf("logdir_size %d, on disk %d:\n%s", got["logdir_size"], logSize, out)
	}
}

// After a restart, mntr reports what recovery did, under Apache's names:
// one snapshot load and one replay of the log after it; and the snapshots
// written are counted with their durations.
func TestMntrRecoveryAndSnapshots(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, durableConfig(dir))
	c := newSession(t, ts.addr)
	for i := range 12 {
		c.create(fmt.Sprintf("/r%d", i), nil, jute.FlagPersistent)
	}
	waitFor(t, ioTimeout, func() error {
		if n := ts.srv.metrics.snapCount.Value(); n < 1 {
			return fmt.Errorf("%d snapshots counted", n)
		}
		return nil
	})
	m := mntrKeys(fourLetter(t, ts.addr, "mntr"))
	if n, _ := strconv.Atoi(m["zk_cnt_snapshottime"]); n < 1 || m["zk_snap_count"] == "0" {
		t.Errorf("snapshots: cnt_snapshottime %q, snap_count %q", m["zk_cnt_snapshottime"], m["zk_snap_count"])
	}
	c.close()
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ts = startServer(t, func(c *Config) {
		durableConfig(dir)(c)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	// Start-up says what it loaded and how long it took.
	if out := logs.String(); !regexp.MustCompile(`msg="loaded snapshot" .*nodes=\d+ .*duration=`).MatchString(out) {
		t.Errorf("no snapshot load with nodes and duration in the log:\n%s", out)
	}
	m = mntrKeys(fourLetter(t, ts.addr, "mntr"))
	for _, k := range []string{"zk_cnt_startup_snap_load_time", "zk_cnt_startup_txns_load_time", "zk_cnt_dbinittime"} {
		if m[k] != "1" {
			t.Errorf("%s = %q, want 1", k, m[k])
		}
	}
	// How many entries were replayed depends on whether the snapshot
	// written at shutdown finished; the count of loads does not.
	if m["zk_cnt_startup_txns_loaded"] != "1" {
		t.Errorf("zk_cnt_startup_txns_loaded = %q, want 1", m["zk_cnt_startup_txns_loaded"])
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test to share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The members of an ensemble apply the same txns, so their hash lines
// agree wherever they name the same zxid: hash is how an operator checks
// that replicas have not diverged. The quorum view the AdminServer shows
// agrees across members too.
func TestHashAgreesAcrossEnsemble(t *testing.T) {
	ms := startMembers(t, 3, 0, "")
	leader := leaderOf(t, ms)
	c := newSession(t, ms[leader].addr)
	for i := range 3 * digestLogInterval {
		c.create(fmt.Sprintf("/h%d", i), []byte("x"), jute.FlagPersistent)
	}
	last := ms[leader].srv.rep.LastZxid()
	hashes := map[uint64]map[string]string{}
	for id, m := range ms {
		waitFor(t, 20*time.Second, func() error {
			if z := m.srv.rep.LastZxid(); z < last {
				return fmt.Errorf("server %d at zxid %d, leader at %d", id, z, last)
			}
			return nil
		})
		hashes[id] = map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(fourLetter(t, m.addr, "hash")), "\n") {
			z, d, _ := strings.Cut(line, ": ")
			hashes[id][z] = d
		}
		q, ok := m.srv.Quorum()
		if !ok || q.LeaderID != int64(leader) || len(q.Members) != 3 || q.IsLeader != (id == leader) || q.MyID != int64(id) {
			t.Errorf("server %d quorum view %+v", id, q)
		}
	}
	common := 0
	for z, d := range hashes[leader] {
		for id, h := range hashes {
			if other, ok := h[z]; ok {
				common++
				if other != d {
					t.Errorf("zxid %s: server %d digest %s, leader %s", z, id, other, d)
				}
			}
		}
	}
	if common < 2*len(ms) {
		t.Errorf("only %d digests in common: %v", common, hashes)
	}
}
