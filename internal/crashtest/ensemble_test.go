package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// member is one zoo server process of a multi-process ensemble.
type member struct {
	t       *testing.T
	id      int
	dir     string
	addr    string // client address
	cmd     *exec.Cmd
	exited  chan struct{}
	starts  int
	logPath string
}

// startEnsemble writes zoo.cfg and myid for n members on loopback ports
// and starts them all, as an operator would with Apache's files.
func startEnsemble(t *testing.T, n int) []*member {
	t.Helper()
	return newEnsemble(t, n, 0, nil)
}

// startLinkedEnsemble is startEnsemble with the members' peer connections
// routed through links the test can cut (see peerNet).
func startLinkedEnsemble(t *testing.T, n int) ([]*member, *peerNet) {
	t.Helper()
	pn := &peerNet{links: map[[2]int]*zktest.Link{}}
	return newEnsemble(t, n, 0, pn), pn
}

// peerNet is the network between the members of an ensemble: one
// zktest.Link per ordered pair {i, j}, which member i's zoo.cfg names as
// server.j's quorum address. A pair shares one peer connection, dialed by
// the larger id (and snapshot streams by the sender), so cutting both
// directions of a pair cuts everything between the two.
type peerNet struct {
	links map[[2]int]*zktest.Link
}

// route returns the quorum address member from uses for member to.
func (pn *peerNet) route(t *testing.T, from, to int, quorum string) string {
	t.Helper()
	if pn == nil || from == to {
		return quorum
	}
	l, err := zktest.NewLink(quorum)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	pn.links[[2]int{from, to}] = l
	return l.Addr()
}

// isolate cuts (or heals) every link to and from member id.
func (pn *peerNet) isolate(id int, cut bool) {
	for pair, l := range pn.links {
		if pair[0] == id || pair[1] == id {
			l.SetCut(cut)
		}
	}
}

// newEnsemble writes each member's zoo.cfg and myid, with peer addresses
// routed through pn if it is not nil, and starts the members. It also
// writes the files of extra servers, not started: their zoo.cfg names the
// n members and themselves, as an operator writes it for a server to add
// by reconfig, while the members' files name only the n.
func newEnsemble(t *testing.T, n, extra int, pn *peerNet) []*member {
	t.Helper()
	return newEnsembleIn(t, n, extra, pn, t.TempDir)
}

// newEnsembleIn is newEnsemble with each member's directory (its dataDir)
// made by mkdir, which may put it on a filesystem of its own, and cfg's
// lines added to every zoo.cfg.
func newEnsembleIn(t *testing.T, n, extra int, pn *peerNet, mkdir func() string, cfg ...string) []*member {
	t.Helper()
	var ports portHold
	defer ports.release()
	ms := make([]*member, n+extra)
	quorum := make([]string, n+extra)
	for i := range ms {
		ms[i] = &member{t: t, id: i + 1, dir: mkdir()}
		ms[i].addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.take(t)))
		quorum[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.take(t)))
	}
	for _, m := range ms {
		// Zoo binds only its own quorum port; the election port of a
		// server.N line is parsed and checked for clashes, so any free
		// port will do.
		var lines []string
		for j, o := range ms {
			if o.id > n && o.id != m.id {
				continue // a server to add later: not yet a member
			}
			addr := pn.route(t, m.id, o.id, quorum[j])
			lines = append(lines, fmt.Sprintf("server.%d=%s:%d", o.id, addr, ports.take(t)))
		}
		_, port, _ := net.SplitHostPort(m.addr)
		text := fmt.Sprintf(`tickTime=200
initLimit=10
syncLimit=5
minSessionTimeout=400
maxSessionTimeout=10000
dataDir=%s
clientPort=%s
clientPortAddress=127.0.0.1
snapCount=50
reconfigEnabled=true
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,hash
%s
%s
`, m.dir, port, strings.Join(lines, "\n"), strings.Join(cfg, "\n"))
		if err := os.WriteFile(filepath.Join(m.dir, "zoo.cfg"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(m.dir, "myid"), []byte(strconv.Itoa(m.id)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.stop)
	}
	ports.release()
	for _, m := range ms[:n] {
		m.start()
	}
	return ms
}

// portHold keeps the free ports it hands out bound until release, so that
// the links' listeners, opened meanwhile on port 0, cannot be given one of
// them (as freePort alone allows: it closes its port at once).
type portHold struct{ lns []net.Listener }

func (h *portHold) take(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.lns = append(h.lns, ln)
	return ln.Addr().(*net.TCPAddr).Port
}

func (h *portHold) release() {
	for _, ln := range h.lns {
		_ = ln.Close()
	}
	h.lns = nil
}

func (m *member) start() {
	m.t.Helper()
	m.starts++
	m.logPath = filepath.Join(m.dir, fmt.Sprintf("server-%02d.log", m.starts))
	logFile, err := os.Create(m.logPath)
	if err != nil {
		m.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(zooBin, "server", filepath.Join(m.dir, "zoo.cfg"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func(done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(m.exited)
}

// kill sends SIGKILL and waits for the process to be gone.
func (m *member) kill() {
	m.t.Helper()
	select {
	case <-m.exited:
		m.t.Fatalf("server %d exited on its own: %v\n%s", m.id, m.cmd.ProcessState, m.logTail())
	default:
	}
	if err := m.cmd.Process.Kill(); err != nil {
		m.t.Fatal(err)
	}
	<-m.exited
	m.cmd = nil
}

func (m *member) stop() {
	if m.cmd != nil {
		_ = m.cmd.Process.Kill()
		<-m.exited
		m.cmd = nil
	}
}

func (m *member) logTail() string { return tail(m.logPath) }

// mode asks the member's srvr for its role ("leader", "follower"), or ""
// if it does not answer or does not serve.
func (m *member) mode() string {
	c, err := net.DialTimeout("tcp", m.addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	for _, line := range strings.Split(string(b), "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return mode
		}
	}
	return ""
}

// leaderOf waits until the running members agree: one leader, the rest
// followers. It returns the leader.
func leaderOf(t *testing.T, ms []*member) *member {
	t.Helper()
	if lead := findLeader(ms, time.Now().Add(startDeadline)); lead != nil {
		return lead
	}
	for _, m := range ms {
		t.Logf("server %d:\n%s", m.id, m.logTail())
	}
	t.Fatal("the ensemble did not settle on a leader")
	return nil
}

// findLeader is leaderOf without the failure: nil if the members do not
// agree by the deadline.
func findLeader(ms []*member, deadline time.Time) *member {
	for time.Now().Before(deadline) {
		var lead *member
		ok := true
		for _, m := range ms {
			if m.cmd == nil {
				continue
			}
			switch m.mode() {
			case "leader":
				if lead != nil {
					ok = false
				}
				lead = m
			case "follower":
			default:
				ok = false
			}
		}
		if ok && lead != nil {
			return lead
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	return nil
}

func connectString(ms []*member) string {
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.addr)
	}
	return strings.Join(addrs, ",")
}

// Ref: issue "The ensemble", multi-process tests: three zoo server
// processes from zoo.cfg files; kill -9 of the leader and of a follower
// under write load. Clients fail over, writes resume, and every
// acknowledged write survives, on every server.
func TestEnsembleKill9LosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zoo server processes")
	}
	ms := startEnsemble(t, 3)
	leaderOf(t, ms)
	c := connect(t, connectString(ms), writerTimeout)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := c.Create(ctx, "/ens", nil, zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}

	var acked ackLog
	write := acked.writer(c)
	victims := []string{"leader", "follower", "leader"}
	for round, victim := range victims {
		lead := leaderOf(t, ms)
		target := lead
		if victim == "follower" {
			target = ms[0]
			if target == lead {
				target = ms[1]
			}
		}
		stopWriters := startLoad(ctx, write)
		acked.more(t, 20)
		killed := time.Now()
		target.kill()
		// The first write that succeeds after the kill: it may have to wait
		// for an election and for the client to move.
		if err := untilOK(ctx, write); err != nil {
			t.Fatalf("round %d: no write succeeded after killing the %s: %v", round, victim, err)
		}
		t.Logf("round %d: kill -9 of the %s (server %d): first write after %v",
			round, victim, target.id, time.Since(killed).Round(time.Millisecond))
		acked.more(t, 20)
		stopWriters()
		target.start()
		leaderOf(t, ms)
	}
	verifyEnsemble(t, ms, acked.all())
}

// startLoad runs two writers until the returned function is called.
// Their errors (ConnectionLoss during a failover) are expected.
func startLoad(ctx context.Context, write func(context.Context) error) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_ = write(ctx)
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// untilOK retries op until it succeeds or ctx ends.
func untilOK(ctx context.Context, op func(context.Context) error) error {
	for {
		err := op(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}

// ackLog records the sequential creates under /ens that were acknowledged.
type ackLog struct {
	mu    sync.Mutex
	paths []string
}

// writer returns a write through c for startLoad and untilOK.
func (a *ackLog) writer(c *zk.Client) func(context.Context) error {
	return func(ctx context.Context) error {
		p, _, err := c.Create(ctx, "/ens/n-", nil, zk.PersistentSequential, acl)
		if err == nil {
			a.mu.Lock()
			a.paths = append(a.paths, p)
			a.mu.Unlock()
		}
		return err
	}
}

func (a *ackLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.paths)
}

// more waits until n more writes than now are acknowledged.
func (a *ackLog) more(t *testing.T, n int) {
	t.Helper()
	want := a.count() + n
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := a.count()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes acknowledged; want %d", got, want)
		}
		time.Sleep(5 * time.Millisecond) // polling the writers' progress
	}
}

func (a *ackLog) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.paths)
}

// syncedChildren reads /ens's children on m after a sync, in a session
// of its own. A connection lost meanwhile (the client gave up on a slow
// reply, the server dropped it) is retried on a new connection, as a
// ZooKeeper application retries ConnectionLoss, until ctx ends.
func syncedChildren(ctx context.Context, t *testing.T, m *member) ([]string, error) {
	t.Helper()
	for {
		c := connect(t, m.addr, writerTimeout)
		err := c.Sync(ctx, "/ens")
		var kids []string
		if err == nil {
			kids, _, err = c.Children(ctx, "/ens")
		}
		c.Close()
		if !errors.Is(err, zk.ErrConnectionLoss) || ctx.Err() != nil {
			return kids, err
		}
		t.Logf("server %d: %v; again on a new connection", m.id, err)
	}
}

// verifyEnsemble reads /ens's children from each member, after a sync,
// and checks that every acknowledged create is there and that all members
// hold the same children.
func verifyEnsemble(t *testing.T, ms []*member, acked []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var first []string
	for _, m := range ms {
		kids, err := syncedChildren(ctx, t, m)
		if err != nil {
			t.Fatalf("sync and children on server %d: %v", m.id, err)
		}
		sort.Strings(kids)
		for _, p := range acked {
			if _, ok := slices.BinarySearch(kids, strings.TrimPrefix(p, "/ens/")); !ok {
				t.Fatalf("server %d lacks acknowledged %s", m.id, p)
			}
		}
		if first == nil {
			first = kids
		} else if !slices.Equal(first, kids) {
			t.Fatalf("server %d has %d children; server 1 has %d", m.id, len(kids), len(first))
		}
	}
	t.Logf("%d acknowledged writes on all %d servers", len(acked), len(ms))
}
