package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// startLinkedMembers starts a three-voter ensemble whose peer traffic to
// and from member 3 goes through links, and returns the members and the
// function that cuts member 3 off from the others (true) or heals it.
func startLinkedMembers(t *testing.T, edit ...func(*Config)) (map[uint64]*testServer, func(cut bool)) {
	t.Helper()
	quorum := map[uint64]net.Listener{}
	addrs := map[uint64]string{}
	membership := ""
	for id := uint64(1); id <= 3; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		quorum[id], addrs[id] = ln, ln.Addr().String()
		membership += fmt.Sprintf("server.%d=%s:%d:participant\n", id, addrs[id], id)
	}
	membership += "version=0"
	var links []*zktest.Link
	out := map[uint64]*testServer{}
	for id := uint64(1); id <= 3; id++ {
		e := Ensemble{Voters: []uint64{1, 2, 3}, Peers: map[uint64]string{}, Listener: quorum[id], Membership: membership}
		for other, a := range addrs {
			if other == id {
				continue
			}
			if id == 3 || other == 3 {
				l, err := zktest.NewLink(a)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(l.Close)
				links = append(links, l)
				a = l.Addr()
			}
			e.Peers[other] = a
		}
		out[id] = startMember(t, id, e, edit...)
	}
	return out, func(cut bool) {
		for _, l := range links {
			l.SetCut(cut)
		}
	}
}

func waitIsro(t *testing.T, addr, want string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() error {
		out, err := zktest.FourLetter(addr, "isro", time.Second)
		if err != nil || out != want {
			return fmt.Errorf("isro = %q, %v; want %q", out, err, want)
		}
		return nil
	})
}

// Ref: issue 12 §4: a member cut off from the quorum serves reads to
// canBeReadOnly clients, refuses writes with NotReadOnly, says "ro" to
// isro, refuses other clients and, as Apache (RENEW_GLOBAL_SESSION_IN_RO_MODE),
// global sessions; once healed it serves read-write again and the global
// session, kept alive by nobody for less than its timeout, reattaches.
func TestReadOnlyMember(t *testing.T) {
	// The session must outlive the partition: the majority expires it
	// after its timeout, since its pings reach only the cut-off member
	// (as in Apache). 20 ticks of 200ms would be 4s.
	ms, cut := startLinkedMembers(t, func(c *Config) {
		c.ReadOnlyMode, c.LocalSessions, c.MaxSessionTimeout = true, true, 60000
	})
	m3 := ms[3]
	waitIsro(t, m3.addr, "rw")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, m3.addr, zk.WithReadOnly(true), zk.WithSessionTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Create(ctx, "/ro", []byte("before"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	sid, passwd := c.SessionID(), c.SessionPassword()

	cut(true)
	waitIsro(t, m3.addr, "ro")
	if m := modeOf(m3.addr); m != "read-only" {
		t.Errorf("srvr mode = %q, want read-only", m)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	if g, err := zk.Connect(short, m3.addr, zk.WithReadOnly(true), zk.WithSession(sid, passwd)); err == nil {
		g.Close()
		t.Error("a global session reattached to a read-only member")
	}
	if rw, err := zk.Connect(short, m3.addr); err == nil {
		rw.Close()
		t.Error("a client without canBeReadOnly connected to a read-only member")
	}
	cancelShort()
	if st := c.State(); st == zk.StateConnected || st == zk.StateConnectedReadOnly {
		t.Errorf("the global session's client is %v on a read-only member", st)
	}

	r, err := zk.Connect(ctx, m3.addr, zk.WithReadOnly(true), zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if st := r.State(); st != zk.StateConnectedReadOnly {
		t.Errorf("read-only client state %v", st)
	}
	if data, _, err := r.Get(ctx, "/ro"); err != nil || string(data) != "before" {
		t.Errorf("read-only get = %q, %v", data, err)
	}
	if _, _, err := r.Create(ctx, "/ro2", nil, zk.Persistent, zk.OpenACLUnsafe()); !errors.Is(err, zk.ErrNotReadOnly) {
		t.Errorf("create on a read-only member: %v, want ErrNotReadOnly", err)
	}
	if _, err := r.Set(ctx, "/ro", []byte("x"), -1); !errors.Is(err, zk.ErrNotReadOnly) {
		t.Errorf("set on a read-only member: %v, want ErrNotReadOnly", err)
	}
	if err := r.Sync(ctx, "/ro"); !errors.Is(err, zk.ErrNotReadOnly) {
		t.Errorf("sync on a read-only member: %v, want ErrNotReadOnly", err)
	}

	cut(false)
	waitIsro(t, m3.addr, "rw")
	waitFor(t, 30*time.Second, func() error {
		if st := c.State(); st != zk.StateConnected {
			return fmt.Errorf("client state %v", st)
		}
		return nil
	})
	if c.SessionID() != sid {
		t.Errorf("session changed after healing: %#x -> %#x", sid, c.SessionID())
	}
	if _, err := c.Set(ctx, "/ro", []byte("after"), -1); err != nil {
		t.Fatalf("set after healing: %v", err)
	}
	if data, _, err := c.Get(ctx, "/ro"); err != nil || string(data) != "after" {
		t.Errorf("get after healing = %q, %v", data, err)
	}
}

// Ref: issue 12 §4: without localSessionsEnabled a read-only member
// refuses new sessions, as Apache 3.8/3.9 does.
func TestReadOnlyWithoutLocalSessions(t *testing.T) {
	ms, cut := startLinkedMembers(t, func(c *Config) { c.ReadOnlyMode = true })
	m3 := ms[3]
	waitIsro(t, m3.addr, "rw")
	cut(true)
	waitIsro(t, m3.addr, "ro")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c, err := zk.Connect(ctx, m3.addr, zk.WithReadOnly(true)); !errors.Is(err, context.DeadlineExceeded) {
		if c != nil {
			c.Close()
		}
		t.Errorf("new session on a read-only member without local sessions: %v, want refused", err)
	}
}

// Ref: issue 12 §4 (localSessionsEnabled as Apache): a read-only member
// gives new sessions as local sessions; they are gone once the quorum is
// back, and the client gets a new global session.
func TestReadOnlyLocalSessions(t *testing.T) {
	ms, cut := startLinkedMembers(t, func(c *Config) { c.ReadOnlyMode, c.LocalSessions = true, true })
	m3 := ms[3]
	waitIsro(t, m3.addr, "rw")
	cut(true)
	waitIsro(t, m3.addr, "ro")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, m3.addr, zk.WithReadOnly(true), zk.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.State() != zk.StateConnectedReadOnly {
		t.Fatalf("state %v, want ConnectedReadOnly", c.State())
	}
	local := c.SessionID()
	if out, err := zktest.FourLetter(m3.addr, "mntr", time.Second); err != nil || !strings.Contains(out, "zk_local_sessions\t1\n") {
		t.Errorf("mntr with one local session: %v\n%s", err, out)
	}
	if _, _, err := c.Get(ctx, "/zookeeper"); err != nil {
		t.Errorf("read on a local session: %v", err)
	}
	if _, _, err := c.Create(ctx, "/x", nil, zk.Ephemeral, zk.OpenACLUnsafe()); !errors.Is(err, zk.ErrNotReadOnly) {
		t.Errorf("create on a local session: %v, want ErrNotReadOnly", err)
	}

	cut(false)
	waitFor(t, 30*time.Second, func() error {
		if st := c.State(); st != zk.StateConnected {
			return fmt.Errorf("client state %v", st)
		}
		return nil
	})
	if c.SessionID() == local {
		t.Errorf("the local session %#x survived read-only mode", local)
	}
	if _, _, err := c.Create(ctx, "/x", nil, zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
		t.Errorf("create after healing: %v", err)
	}
	if !strings.HasPrefix(modeOf(m3.addr), "f") && modeOf(m3.addr) != "leader" {
		t.Errorf("mode after healing = %q", modeOf(m3.addr))
	}
}

// Ref: issue 12 "How it is tested": Apache's Java client (zkCli.sh -r,
// canBeReadOnly) reads from a member cut off from the quorum and has its
// write refused with NotReadOnly.
func TestReadOnlyJavaClient(t *testing.T) {
	ms, cut := startLinkedMembers(t, func(c *Config) {
		c.ReadOnlyMode, c.LocalSessions = true, true
	})
	m3 := ms[3]
	waitIsro(t, m3.addr, "rw")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, m3.addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, "/ro-java", []byte("seen-read-only"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	c.Close()

	cut(true)
	waitIsro(t, m3.addr, "ro")
	if out := zkCli(t, m3.addr, "", "-r", "get", "/ro-java"); !strings.Contains(out, "seen-read-only") {
		t.Errorf("zkCli.sh -r get on a read-only member:\n%s", out)
	}
	out := zkCli(t, m3.addr, "", "-r", "create", "/ro-java2", "x")
	if !strings.Contains(out, "NotReadOnly") && !strings.Contains(out, "Not a read-only call") {
		t.Errorf("zkCli.sh -r create on a read-only member was not refused with NotReadOnly:\n%s", out)
	}
	if strings.Contains(out, "Created /ro-java2") {
		t.Errorf("a read-only member created a node:\n%s", out)
	}
}
