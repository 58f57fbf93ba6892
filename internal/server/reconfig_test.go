package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// superDigest is the digest of super:test.
const superDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="

// leaderOf waits for the one member srvr calls leader and returns its id.
func leaderOf(t *testing.T, ms map[uint64]*testServer) uint64 {
	t.Helper()
	var lead uint64
	waitFor(t, 20*time.Second, func() error {
		var leads []uint64
		for id, ts := range ms {
			if modeOf(ts.addr) == "leader" {
				leads = append(leads, id)
			}
		}
		switch len(leads) {
		case 0:
			return errors.New("no leader")
		case 1:
			lead = leads[0]
			return nil
		default:
			// A deposed leader says so until it hears of the new term:
			// wait for it rather than pick one at random.
			return fmt.Errorf("servers %v all say they lead", leads)
		}
	})
	return lead
}

// followerOf returns the id of a member other than lead.
func followerOf(ms map[uint64]*testServer, lead uint64) uint64 {
	for id := range ms {
		if id != lead {
			return id
		}
	}
	return 0
}

// quorumSize is what the member's mntr says of the voters.
func quorumSize(t *testing.T, ts *testServer) string {
	t.Helper()
	out, err := zktest.FourLetter(ts.addr, "mntr", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(out, "zk_quorum_size\t")
	size, _, _ := strings.Cut(after, "\n")
	return size
}

// Ref: issue "The ensemble", dynamic reconfiguration; Apache 3.8 behaviour
// (observed against QuorumPeerMain, see member's tests): only the super
// user (or WRITE on /zookeeper/config) may reconfig; fromConfig is a
// compare-and-set on the version; a change that leaves no quorum is
// refused; an observer becomes a participant and a participant leaves,
// under write load, each committed through raft and shown in
// /zookeeper/config with the reconfig's zxid as the version, firing its
// watch.
func TestReconfigUnderLoad(t *testing.T) {
	ms := startMembers(t, 3, 1, "", func(c *Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = superDigest
	})
	lead := leaderOf(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	anon, err := zk.Connect(ctx, ms[lead].addr, zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, _, err := anon.Reconfig(ctx, "", "4", "", -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without super: %v; want NoAuth", err)
	}

	// The super user's client is on a follower: its reconfig is forwarded.
	var via uint64
	for id := range ms {
		if id != lead && id != 4 && via == 0 {
			via = id
		}
	}
	su, err := zk.Connect(ctx, ms[via].addr, zk.WithSessionTimeout(4*time.Second), zk.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	data, st, events, err := su.GetW(ctx, "/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := member.Parse(string(data))
	if err != nil {
		t.Fatalf("/zookeeper/config %q: %v", data, err)
	}
	if _, _, err := su.Reconfig(ctx, "", "4", "", cur.Version+12345); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("reconfig from a wrong version: %v; want BadVersion", err)
	}
	others := []string{}
	for id := range ms {
		if id != 4 && id != lead {
			others = append(others, fmt.Sprint(id))
		}
	}
	if _, _, err := su.Reconfig(ctx, "", strings.Join(others, ","), "", -1); !errors.Is(err, zk.ErrBadArguments) {
		t.Errorf("reconfig leaving %v (one participant left): %v; want BadArguments", others, err)
	}

	// Writes through the leader go on throughout.
	var wrote, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := anon.Create(ctx, fmt.Sprintf("/load-%d", i), nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
				failed.Add(1)
			} else {
				wrote.Add(1)
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	// The observer becomes a participant.
	obs, _ := cur.Server(4)
	spec := fmt.Sprintf("server.4=%s:%d:%d:participant;%s", obs.Host, obs.QuorumPort, obs.ElectionPort, ms[4].addr)
	newData, newStat, err := su.Reconfig(ctx, spec, "", "", cur.Version)
	if err != nil {
		t.Fatalf("reconfig promoting the observer: %v", err)
	}
	next, err := member.Parse(string(newData))
	if err != nil || len(next.Participants()) != 4 || next.Version != newStat.Mzxid {
		t.Fatalf("after promoting: %q (%v); want 4 participants and version = mzxid %#x", newData, err, newStat.Mzxid)
	}
	if ev := <-events; ev.Type != zk.EventNodeDataChanged || ev.Path != "/zookeeper/config" {
		t.Errorf("the /zookeeper/config watch got %+v", ev)
	}
	waitFor(t, 10*time.Second, func() error {
		if m := modeOf(ms[4].addr); m != "follower" {
			return fmt.Errorf("the promoted observer says %q", m)
		}
		if q := quorumSize(t, ms[lead]); q != "4" {
			return fmt.Errorf("the leader's quorum size is %s", q)
		}
		return nil
	})

	// A participant other than the leader and the client's server leaves.
	var gone uint64
	for id := range ms {
		if id != lead && id != via && id != 4 {
			gone = id
		}
	}
	if st.Version != -1 {
		t.Errorf("/zookeeper/config's stat version %d; want -1 as Apache keeps it", st.Version)
	}
	leftData, _, err := su.Reconfig(ctx, "", fmt.Sprint(gone), "", next.Version)
	if err != nil {
		t.Fatalf("reconfig removing server %d: %v", gone, err)
	}
	if strings.Contains(string(leftData), fmt.Sprintf("server.%d=", gone)) {
		t.Errorf("server %d still in %q", gone, leftData)
	}
	waitFor(t, 10*time.Second, func() error {
		if q := quorumSize(t, ms[lead]); q != "3" {
			return fmt.Errorf("the leader's quorum size is %s", q)
		}
		return nil
	})
	for _, id := range []uint64{lead, via, 4} {
		c, err := zk.Connect(ctx, ms[id].addr, zk.WithSessionTimeout(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Sync(ctx, "/zookeeper/config"); err != nil {
			t.Fatalf("sync on server %d: %v", id, err)
		}
		if got, _, err := c.Get(ctx, "/zookeeper/config"); err != nil || string(got) != string(leftData) {
			t.Errorf("server %d: /zookeeper/config %q, %v; want %q", id, got, err, leftData)
		}
		c.Close()
	}

	// One bulk change that takes the removed server back and turns the
	// promoted one into an observer again: two changes at once, which
	// raft makes through a joint configuration.
	var lines []string
	for _, sv := range cur.Servers {
		lines = append(lines, fmt.Sprintf("server.%d=%s", sv.ID, sv))
	}
	left, _ := member.Parse(string(leftData))
	bulkData, _, err := su.Reconfig(ctx, "", "", strings.Join(lines, ","), left.Version)
	if err != nil {
		t.Fatalf("bulk reconfig back to the first membership: %v", err)
	}
	bulk, _ := member.Parse(string(bulkData))
	bulk.Version = cur.Version
	if bulk.String() != cur.String() {
		t.Errorf("after the bulk reconfig:\n%s\nwant:\n%s", bulk, cur)
	}
	waitFor(t, 20*time.Second, func() error {
		if m := modeOf(ms[4].addr); m != "observer" {
			return fmt.Errorf("server 4 says %q", m)
		}
		if m := modeOf(ms[gone].addr); m != "follower" {
			return fmt.Errorf("server %d, back, says %q", gone, m)
		}
		if q := quorumSize(t, ms[lead]); q != "3" {
			return fmt.Errorf("the leader's quorum size is %s", q)
		}
		return nil
	})

	before := wrote.Load()
	waitFor(t, 10*time.Second, func() error {
		if wrote.Load() < before+20 {
			return errors.New("writes stopped after the reconfig")
		}
		return nil
	})
	if n := failed.Load(); n > 0 {
		t.Errorf("%d writes failed during the reconfigs (%d succeeded)", n, wrote.Load())
	}
}

// Ref: issue "The ensemble", dynamic reconfiguration (adding a
// participant): a brand-new server, whose zoo.cfg names the running
// members and itself, does not start an ensemble of its own: its peers
// do not know it, so it waits, empty, until a reconfig adds it; then the
// leader sends it the state and it follows, with every write made before.
func TestReconfigAddsANewServer(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) { testAddServer(t, durable) })
	}
}

func testAddServer(t *testing.T, durable bool) {
	dataDir := func(c *Config) {
		if durable {
			c.DataDir = t.TempDir()
			c.DataLogDir = c.DataDir
			c.PreAllocSize = 1 << 20
		}
	}
	ms := startMembers(t, 3, 0, "", func(c *Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = superDigest
	}, dataDir)
	lead := leaderOf(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	su, err := zk.Connect(ctx, ms[lead].addr, zk.WithSessionTimeout(4*time.Second), zk.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	for i := range 50 {
		if _, _, err := su.Create(ctx, fmt.Sprintf("/before-%d", i), []byte("x"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	data, _, err := su.Get(ctx, "/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := member.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	peers := map[uint64]string{}
	for _, sv := range cur.Servers {
		peers[uint64(sv.ID)] = sv.QuorumAddr()
	}
	joiner := startMember(t, 4, Ensemble{Voters: []uint64{1, 2, 3, 4}, Peers: peers, Listener: ln,
		Membership: string(data)}, func(c *Config) { c.ReconfigEnabled = true }, dataDir)
	// Not a member yet: it serves no one and leads nothing.
	if m := modeOf(joiner.addr); m == "leader" || m == "follower" {
		t.Fatalf("the new server says %q before it was added", m)
	}

	spec := fmt.Sprintf("server.4=%s:4:participant;%s", ln.Addr(), joiner.addr)
	if _, _, err := su.Reconfig(ctx, spec, "", "", -1); err != nil {
		t.Fatalf("reconfig adding server 4: %v", err)
	}
	waitFor(t, 20*time.Second, func() error {
		if m := modeOf(joiner.addr); m != "follower" {
			return fmt.Errorf("the new server says %q", m)
		}
		if q := quorumSize(t, ms[lead]); q != "4" {
			return fmt.Errorf("the leader's quorum size is %s", q)
		}
		return nil
	})
	c, err := zk.Connect(ctx, joiner.addr, zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	kids, _, err := c.Children(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kids); n != 51 { // 50 and /zookeeper
		t.Errorf("the new server has %d children of /; want 51", n)
	}
	got, _, err := c.Get(ctx, "/zookeeper/config")
	if err != nil || !strings.Contains(string(got), "server.4=") {
		t.Errorf("the new server's /zookeeper/config %q, %v", got, err)
	}
	if _, _, err := c.Create(ctx, "/through-4", nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Errorf("write through the new server: %v", err)
	}
}
