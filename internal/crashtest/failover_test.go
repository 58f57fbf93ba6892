package crashtest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// ensembleSession is the session timeout of the clients of the SIGSTOP and
// partition tests. A client gives up on a silent server after two thirds
// of it, and a new leader gives every session a full timeout from when it
// takes over, so the client has a third of it (2 s) to reattach elsewhere
// before its session could expire: room for a slow, shared test machine.
const ensembleSession = 6 * time.Second

// pause stops the member with SIGSTOP: it keeps its sockets and answers
// nothing, as a process stuck in a long GC pause or swapped out would.
func (m *member) pause() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		m.t.Fatal(err)
	}
}

// resume continues a paused member with SIGCONT.
func (m *member) resume() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		m.t.Fatal(err)
	}
}

// waitMode polls the member's srvr until it reports mode.
func waitMode(t *testing.T, ms []*member, m *member, mode string) {
	t.Helper()
	deadline := time.Now().Add(startDeadline)
	for m.mode() != mode {
		if time.Now().After(deadline) {
			dumpLogs(t, ms)
			t.Fatalf("server %d does not report mode %q within %v", m.id, mode, startDeadline)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

func dumpLogs(t *testing.T, ms []*member) {
	t.Helper()
	for _, m := range ms {
		t.Logf("server %d:\n%s", m.id, m.logTail())
	}
}

// without returns ms without x.
func without(ms []*member, x *member) []*member {
	return slices.DeleteFunc(slices.Clone(ms), func(m *member) bool { return m == x })
}

// pinDialer sends a client's first connection to one chosen server (the
// others are refused until then) and records where the client is
// connected, so that a test can put a client on the leader while giving it
// every server in its connect string.
type pinDialer struct {
	mu     sync.Mutex
	pin    string // until the first session is established, dial only this
	dialed string // the last address a connection was made to
	cur    string // the server of the current session; "" between them
}

func (d *pinDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	pin := d.pin
	d.mu.Unlock()
	if pin != "" && addr != pin {
		return nil, fmt.Errorf("crashtest: the first connection goes to %s", pin)
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		d.mu.Lock()
		d.dialed = addr
		d.mu.Unlock()
	}
	return c, err
}

// state is the client's state callback: the connection last made is the
// one a Connected session runs on.
func (d *pinDialer) state(s zk.State) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch s {
	case zk.StateConnected:
		d.pin, d.cur = "", d.dialed
	default:
		d.cur = ""
	}
}

func (d *pinDialer) server() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur
}

// connectPinned connects a client whose connect string lists every member,
// starting with first (so clients list them in different orders), and
// whose first session is on first.
func connectPinned(t *testing.T, ms []*member, first *member, timeout time.Duration) (*zk.Client, *pinDialer) {
	t.Helper()
	i := slices.Index(ms, first)
	order := append(slices.Clone(ms[i:]), ms[:i]...)
	d := &pinDialer{pin: first.addr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, connectString(order), zk.WithSessionTimeout(timeout),
		zk.WithDialer(d.dial), zk.WithStateCallback(d.state))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, d
}

// failover is a fault done to the leader of a running ensemble, and its
// repair.
type failover struct {
	name   string
	inject func(lead *member)
	repair func(lead *member)
	// refuses: while the fault lasts, the old leader still answers srvr
	// and must say it is not serving.
	refuses bool
}

// runFailover puts one writing client on the leader and one on a
// follower, injects the fault under write load, and checks that both
// clients get writes through the other two members (the one on the leader
// having moved), that the repaired leader rejoins as a follower, and that
// every acknowledged write is then on every member.
func runFailover(t *testing.T, ms []*member, f failover) {
	lead := leaderOf(t, ms)
	others := without(ms, lead)
	onLead, dl := connectPinned(t, ms, lead, ensembleSession)
	onFollower, df := connectPinned(t, ms, others[0], ensembleSession)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := onLead.Create(ctx, "/ens", nil, zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	a := &ackLog{}
	stopLead := startLoad(ctx, a.writer(onLead))
	stopFollower := startLoad(ctx, a.writer(onFollower))
	a.more(t, 20)

	began := time.Now()
	f.inject(lead)
	var wg sync.WaitGroup
	for _, cl := range []struct {
		name string
		c    *zk.Client
		d    *pinDialer
	}{{"leader's", onLead, dl}, {"follower's", onFollower, df}} {
		wg.Go(func() {
			if err := untilOK(ctx, a.writer(cl.c)); err != nil {
				t.Errorf("%s: no write through the %s client: %v", f.name, cl.name, err)
				return
			}
			t.Logf("%s of the leader (server %d): first write through the %s client after %v, on %s",
				f.name, lead.id, cl.name, time.Since(began).Round(time.Millisecond), cl.d.server())
		})
	}
	next := findLeader(others, time.Now().Add(startDeadline))
	elected := time.Since(began)
	wg.Wait()
	if next == nil {
		t.Errorf("%s: the other two did not settle on a leader", f.name)
	}
	if t.Failed() {
		dumpLogs(t, ms)
		t.FailNow()
	}
	t.Logf("%s: server %d leads after %v", f.name, next.id, elected.Round(time.Millisecond))
	if s := dl.server(); s == lead.addr {
		t.Fatalf("%s: the leader's client wrote through the old leader %s", f.name, s)
	}
	if f.refuses {
		// Ref: issue "The ensemble": a member without quorum drops its
		// clients and takes no new ones (srvr says it is not serving).
		waitMode(t, ms, lead, "")
	}
	a.more(t, 20)

	repaired := time.Now()
	f.repair(lead)
	waitMode(t, ms, lead, "follower")
	t.Logf("%s repaired: server %d follows after %v", f.name, lead.id, time.Since(repaired).Round(time.Millisecond))
	leaderOf(t, ms)
	a.more(t, 20)
	stopLead()
	stopFollower()
	verifyEnsemble(t, ms, a.all())
}

// Ref: issue "The ensemble", multi-process tests: SIGSTOP of the leader
// under write load. Its clients hear nothing, give up on it after two
// thirds of their session timeout and move; the other two elect a leader
// and writes resume. After SIGCONT the old leader finds a newer term,
// steps down, catches up, and every acknowledged write is on every server.
// Ref: programmer's guide, "ZooKeeper Guarantees" (Reliability).
func TestEnsembleSIGSTOPLeaderLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zoo server processes")
	}
	ms := startEnsemble(t, 3)
	runFailover(t, ms, failover{
		name:   "SIGSTOP",
		inject: (*member).pause,
		repair: (*member).resume,
	})
}

// Ref: issue "The ensemble", multi-process tests: a partition isolates the
// leader (every peer link to and from it is cut). It loses its quorum,
// steps down (raft's CheckQuorum) and, after an election timeout without
// a leader, drops its clients, which move to the majority, where writes
// resume. Once the links heal the old leader follows, catches up, and
// every acknowledged write is on every server.
func TestEnsemblePartitionedLeaderLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zoo server processes")
	}
	ms, pn := startLinkedEnsemble(t, 3)
	runFailover(t, ms, failover{
		name:    "partition",
		inject:  func(m *member) { pn.isolate(m.id, true) },
		repair:  func(m *member) { pn.isolate(m.id, false) },
		refuses: true,
	})
}
