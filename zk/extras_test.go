package zk

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestStringers(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{EphemeralSequential, "EphemeralSequential"},
		{Container, "Container"},
		{CreateMode(42), "CreateMode(42)"},
		{StateConnected, "Connected"},
		{StateExpired, "Expired"},
		{EventNodeDataChanged, "NodeDataChanged"},
		{WatchPersistentRecursive, "PersistentRecursive"},
		{WatcherAny, "Any"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

var protectedRE = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-lock-\d{10}$`)

func TestProtectedNames(t *testing.T) {
	id := NewProtectedID()
	name := ProtectedName(id, "lock-") + "0000000007"
	if !protectedRE.MatchString(name) {
		t.Fatalf("%q is not Curator's protected form", name)
	}
	if got, ok := ProtectedID(name); !ok || got != id {
		t.Fatalf("ProtectedID(%q) = %q, %v", name, got, ok)
	}
	if got := StripProtected(name); got != "lock-0000000007" {
		t.Fatalf("StripProtected = %q", got)
	}
	if _, ok := ProtectedID("lock-0000000007"); ok {
		t.Fatal("plain name taken for a protected one")
	}
}

// A protected create whose reply is lost adopts the node it made instead
// of making a second one (Curator's withProtection).
func TestCreateProtectedAfterLostReply(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		other := e.connect()
		dir := e.p("locks")
		must(t, "create dir", errOnly(other.Create(ctx(t), dir, nil, Persistent, OpenACLUnsafe())))
		px := newProxy(t, e.addr)
		c := e.connectTo(px.addr())
		px.setHoldDown(true)
		type res struct {
			p   string
			err error
		}
		got := make(chan res, 1)
		go func() {
			p, err := c.CreateProtected(ctx(t), dir+"/lock-", []byte("x"), EphemeralSequential, OpenACLUnsafe())
			got <- res{p, err}
		}()
		if !waitFor(20*time.Second, func() bool {
			kids, _, err := other.Children(ctx(t), dir)
			return err == nil && len(kids) == 1
		}) {
			t.Fatal("the create did not reach the server")
		}
		px.cut() // the reply is lost with the connection
		px.setHoldDown(false)
		r := <-got
		if r.err != nil {
			t.Fatalf("CreateProtected: %v", r.err)
		}
		kids, _, err := other.Children(ctx(t), dir)
		must(t, "children", err)
		if len(kids) != 1 || dir+"/"+kids[0] != r.p || !protectedRE.MatchString(kids[0]) {
			t.Fatalf("children %v, CreateProtected returned %s", kids, r.p)
		}
	})
}

func errOnly[A, B any](_ A, _ B, err error) error { return err }

// CreateParents makes containers: the server removes them once their
// last child goes.
func TestCreateParentsAreContainers(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		leaf := e.p("a/b/c")
		must(t, "CreateParents", c.CreateParents(ctx(t), leaf, OpenACLUnsafe()))
		must(t, "create leaf", errOnly(c.Create(ctx(t), leaf, nil, Persistent, OpenACLUnsafe())))
		must(t, "CreateParents again", c.CreateParents(ctx(t), leaf, OpenACLUnsafe()))
		must(t, "delete leaf", c.Delete(ctx(t), leaf, -1))
		if !waitFor(20*time.Second, func() bool {
			ok, _, err := c.Exists(ctx(t), e.p("a"))
			return err == nil && !ok
		}) {
			t.Fatal("the parents were not reaped as containers")
		}
	})
}

func TestFourLetterWordHelpers(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ok, err := Ruok(ctx(t), e.addr)
		if err != nil || !ok {
			t.Fatalf("Ruok = %v, %v", ok, err)
		}
		st, err := Srvr(ctx(t), e.addr)
		must(t, "Srvr", err)
		if st.Mode != "standalone" || st.NodeCount < 1 || st.Version == "" || st.Connections < 1 {
			t.Fatalf("Srvr = %+v", st)
		}
		conns, err := Cons(ctx(t), e.addr)
		must(t, "Cons", err)
		found := false
		for _, ci := range conns {
			found = found || ci.SessionID == c.SessionID()
		}
		if !found {
			t.Fatalf("Cons %+v lacks session 0x%x", conns, c.SessionID())
		}
		m, err := Mntr(ctx(t), e.addr)
		must(t, "Mntr", err)
		if m["zk_server_state"] != "standalone" || m["zk_version"] == "" {
			t.Fatalf("Mntr = %v", m)
		}
		if _, err := FourLetterWord(ctx(t), e.addr, "toolong"); err == nil {
			t.Fatal("a five-letter word was sent")
		}
	})
}

func TestParseFourLetterAnswers(t *testing.T) {
	st, err := ParseSrvr(srvrSample)
	if err != nil || st.Mode != "follower" || st.Zxid != 0x100000002 || st.AvgLatency != 0.5 || st.NodeCount != 5 {
		t.Fatalf("ParseSrvr = %+v, %v", st, err)
	}
	if _, err := ParseSrvr("imok"); !errors.Is(err, ErrFourLetterReply) {
		t.Fatalf("ParseSrvr(imok) err = %v", err)
	}
	conns, err := ParseCons(consSample)
	if err != nil || len(conns) != 2 || conns[0].SessionID != 0x10000a4d5e20000 || conns[0].Addr != "127.0.0.1:53214" ||
		conns[0].Fields["lop"] != "GETD" || conns[1].SessionID != 0 {
		t.Fatalf("ParseCons = %+v, %v", conns, err)
	}
	if _, err := ParseCons(" /127.0.0.1:1[1](queued)\n"); !errors.Is(err, ErrFourLetterReply) {
		t.Fatalf("ParseCons(bad) err = %v", err)
	}
	m, err := ParseMntr("zk_version\t3.8.0\nzk_znode_count\t5\n")
	if err != nil || m["zk_znode_count"] != "5" {
		t.Fatalf("ParseMntr = %v, %v", m, err)
	}
}

const srvrSample = `Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC
Latency min/avg/max: 0/0.5/3
Received: 10
Sent: 9
Connections: 1
Outstanding: 0
Zxid: 0x100000002
Mode: follower
Node count: 5
`

const consSample = ` /127.0.0.1:53214[1](queued=0,recved=5,sent=5,sid=0x10000a4d5e20000,lop=GETD,est=1700000000000,to=30000,lcxid=0x4,lzxid=0x2,lresp=1700000000100,llat=0,minlat=0,avglat=0.0,maxlat=1)
 /127.0.0.1:53216[0](queued=0,recved=1,sent=0)

`

func FuzzParseFourLetter(f *testing.F) {
	f.Add(srvrSample)
	f.Add(consSample)
	f.Add("zk_version\t3.8.0\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseSrvr(s)
		_, _ = ParseCons(s)
		_, _ = ParseMntr(s)
	})
}

func TestDNSHostProvider(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		_, port, _ := strings.Cut(e.addr, ":")
		p := NewDNSHostProvider([]string{"localhost:" + port}, nil)
		a, err := p.Next(ctx(t))
		if err != nil || !strings.HasSuffix(a, ":"+port) || strings.HasPrefix(a, "localhost") {
			t.Fatalf("Next = %q, %v; want a resolved address", a, err)
		}
		// Through the option: the client connects to what "localhost" is now.
		c := e.connectTo("127.0.0.1:1,localhost:"+port, WithDNSHostProvider(nil))
		must(t, "exists", errOnly(c.Exists(ctx(t), "/")))
	})
}

func TestDNSHostProviderReportsResolveFailure(t *testing.T) {
	p := NewDNSHostProvider([]string{"no-such-host.invalid:2181"}, nil)
	if _, err := p.Next(context.Background()); err == nil {
		t.Fatal("Next on an unresolvable name succeeded")
	}
}

// Watch ends its watch when its context ends, on the server too.
func TestWatchEndsWithContext(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		p := e.p("w")
		must(t, "create", errOnly(c.Create(ctx(t), p, nil, Persistent, OpenACLUnsafe())))
		wctx, cancel := context.WithCancel(ctx(t))
		ch, err := c.Watch(wctx, p, WatchPersistent)
		must(t, "Watch", err)
		_, err = c.Set(ctx(t), p, []byte("1"), -1)
		must(t, "set", err)
		expectEvent(t, ch, EventNodeDataChanged, p)
		cancel()
		expectEvent(t, ch, EventPersistentWatchRemoved, p)
		expectClosed(t, ch)
		if err := c.RemoveWatches(ctx(t), p, WatcherAny); !errors.Is(err, ErrNoWatcher) {
			t.Fatalf("RemoveWatches after the ctx ended = %v, want ErrNoWatcher (the watch is gone)", err)
		}
	})
}
