package zk

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Ref: paper section 2.2 (the client API) and programmer's guide section
// 2.3 (the Stat structure): every call, checked against what Apache does.
func TestCreateModes(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()

		p, st, err := c.Create(ctx, e.p("a"), []byte("v"), Persistent, acl)
		must(t, "create persistent", err)
		if p != e.p("a") || st.DataLength != 1 || st.Version != 0 || st.EphemeralOwner != 0 || st.Czxid == 0 || st.Czxid != st.Mzxid {
			t.Errorf("create = %q %+v", p, st)
		}
		if _, got, _ := c.Exists(ctx, e.p("a")); got != st {
			t.Errorf("Stat from create %+v, from exists %+v", st, got)
		}

		_, st, err = c.Create(ctx, e.p("eph"), nil, Ephemeral, acl)
		must(t, "create ephemeral", err)
		if st.EphemeralOwner != c.SessionID() {
			t.Errorf("ephemeral owner %x, session %x", st.EphemeralOwner, c.SessionID())
		}

		seqName := regexp.MustCompile(`^` + regexp.QuoteMeta(e.p("s-")) + `\d{10}$`)
		p1, _, err := c.Create(ctx, e.p("s-"), nil, PersistentSequential, acl)
		must(t, "create sequential", err)
		p2, st, err := c.Create(ctx, e.p("s-"), nil, EphemeralSequential, acl)
		must(t, "create ephemeral sequential", err)
		if !seqName.MatchString(p1) || !seqName.MatchString(p2) || p2 <= p1 || st.EphemeralOwner == 0 {
			t.Errorf("sequential names %q %q (owner %x)", p1, p2, st.EphemeralOwner)
		}
		// A sequential node's prefix may end in a slash: the node's name
		// is then the number alone.
		_, _, err = c.Create(ctx, e.p("dir"), nil, Persistent, acl)
		must(t, "create dir", err)
		p3, _, err := c.Create(ctx, e.p("dir")+"/", nil, PersistentSequential, acl)
		must(t, "create dir/", err)
		if !regexp.MustCompile(`/dir/\d{10}$`).MatchString(p3) {
			t.Errorf("sequential under a slash: %q", p3)
		}

		_, st, err = c.Create(ctx, e.p("cont"), nil, Container, acl)
		must(t, "create container", err)
		if st.Czxid == 0 {
			t.Errorf("container Stat %+v", st)
		}
		_, st, err = c.CreateTTL(ctx, e.p("ttl"), nil, PersistentWithTTL, acl, time.Hour)
		must(t, "create TTL", err)
		// Apache keeps a TTL node's TTL in its ephemeralOwner but shows
		// clients 0 (DataNode.getClientEphemeralOwner).
		if st.EphemeralOwner != 0 || st.Czxid == 0 {
			t.Errorf("TTL node's Stat %+v", st)
		}
		p4, _, err := c.CreateTTL(ctx, e.p("ttls-"), nil, PersistentSequentialWithTTL, acl, time.Minute)
		must(t, "create sequential TTL", err)
		if !strings.HasPrefix(p4, e.p("ttls-")) || len(p4) != len(e.p("ttls-"))+10 {
			t.Errorf("sequential TTL name %q", p4)
		}

		// Client-side refusals, before anything is sent.
		for _, tt := range []struct {
			name string
			err  error
			want error
		}{
			{"ttl mode without ttl", first(c.Create(ctx, e.p("x"), nil, PersistentWithTTL, acl)), ErrBadArguments},
			{"ttl with plain mode", first(c.CreateTTL(ctx, e.p("x"), nil, Persistent, acl, time.Second)), ErrBadArguments},
			{"no acl", first(c.Create(ctx, e.p("x"), nil, Persistent, nil)), ErrInvalidACL},
			{"bad path", first(c.Create(ctx, "x", nil, Persistent, acl)), ErrInvalidPath},
			{"bad mode", first(c.Create(ctx, e.p("x"), nil, CreateMode(9), acl)), ErrBadArguments},
		} {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
	})
}

func first[A, B any](_ A, _ B, err error) error { return err }

func TestReadWriteDelete(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		_, _, err := c.Create(ctx, e.p("n"), []byte("one"), Persistent, acl)
		must(t, "create", err)

		st, err := c.Set(ctx, e.p("n"), []byte("two"), 0)
		must(t, "set", err)
		if st.Version != 1 || st.DataLength != 3 || st.Mzxid <= st.Czxid {
			t.Errorf("set Stat %+v", st)
		}
		data, st2, err := c.Get(ctx, e.p("n"))
		if err != nil || string(data) != "two" || st2 != st {
			t.Errorf("get = %q %+v %v; want two %+v", data, st2, err, st)
		}
		_, err = c.Set(ctx, e.p("n"), []byte("x"), 0)
		if !errors.Is(err, ErrBadVersion) || !strings.Contains(err.Error(), e.p("n")) {
			t.Errorf("set with a stale version: %v; want BadVersion naming the path", err)
		}
		_, err = c.Set(ctx, e.p("n"), []byte{}, -1)
		must(t, "set any version", err)
		// Ref: Apache keeps null data apart from empty data.
		_, _, err = c.Create(ctx, e.p("null"), nil, Persistent, acl)
		must(t, "create null", err)
		if d, _, _ := c.Get(ctx, e.p("null")); d != nil {
			t.Errorf("null data read back as %q", d)
		}
		if d, _, _ := c.Get(ctx, e.p("n")); d == nil || len(d) != 0 {
			t.Errorf("empty data read back as %#v", d)
		}

		for _, name := range []string{"c1", "c2", "c3"} {
			_, _, err := c.Create(ctx, e.p("n/"+name), nil, Persistent, acl)
			must(t, "create child", err)
		}
		kids, st, err := c.Children(ctx, e.p("n"))
		slices.Sort(kids)
		if err != nil || !slices.Equal(kids, []string{"c1", "c2", "c3"}) || st.NumChildren != 3 || st.Cversion != 3 {
			t.Errorf("children = %v %+v %v", kids, st, err)
		}
		n, err := c.GetAllChildrenNumber(ctx, e.root)
		if err != nil || n != 5 {
			t.Errorf("getAllChildrenNumber = %d, %v; want 5", n, err)
		}

		err = c.Delete(ctx, e.p("n"), -1)
		if !errors.Is(err, ErrNotEmpty) {
			t.Errorf("delete a parent: %v", err)
		}
		err = c.Delete(ctx, e.p("n/c1"), 5)
		if !errors.Is(err, ErrBadVersion) {
			t.Errorf("delete with a wrong version: %v", err)
		}
		must(t, "delete", c.Delete(ctx, e.p("n/c1"), 0))
		ok, _, err := c.Exists(ctx, e.p("n/c1"))
		if ok || err != nil {
			t.Errorf("exists after delete = %v, %v", ok, err)
		}

		// Errors carry the operation and the caller's path.
		for _, tt := range []struct {
			err  error
			want error
			text string
		}{
			{first(c.Get(ctx, e.p("missing"))), ErrNoNode, "zk: getData " + e.p("missing") + ": node does not exist"},
			{c.Delete(ctx, e.p("missing"), -1), ErrNoNode, "zk: delete " + e.p("missing")},
			{first(c.Create(ctx, e.p("n"), nil, Persistent, acl)), ErrNodeExists, "zk: create " + e.p("n")},
			{first(c.Create(ctx, e.p("missing/x"), nil, Persistent, acl)), ErrNoNode, "zk: create " + e.p("missing/x")},
			{first(c.Children(ctx, e.p("missing"))), ErrNoNode, "zk: getChildren"},
		} {
			var ze *Error
			if !errors.Is(tt.err, tt.want) || !errors.As(tt.err, &ze) || !strings.HasPrefix(tt.err.Error(), tt.text) {
				t.Errorf("error %v; want %v starting %q", tt.err, tt.want, tt.text)
			}
		}
		_, _, err = c.Create(ctx, e.p("eph"), nil, Ephemeral, acl)
		must(t, "create ephemeral", err)
		_, _, err = c.Create(ctx, e.p("eph/x"), nil, Persistent, acl)
		if !errors.Is(err, ErrNoChildrenForEphemerals) {
			t.Errorf("child of an ephemeral: %v", err)
		}
		eph, err := c.GetEphemerals(ctx, e.root)
		if err != nil || !slices.Equal(eph, []string{e.p("eph")}) {
			t.Errorf("getEphemerals = %v, %v", eph, err)
		}
		must(t, "sync", c.Sync(ctx, e.root))
	})
}

// Ref: programmer's guide section 5 (ACLs, the digest scheme).
func TestACLAndAuth(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ctx := ctx(t)
		alice := e.connect(WithAuth("digest", []byte("alice:secret")))
		anon := e.connect()

		who, err := alice.WhoAmI(ctx)
		if err != nil || !slices.Contains(who, ClientInfo{"digest", "alice"}) {
			t.Errorf("whoAmI = %+v, %v", who, err)
		}
		_, _, err = alice.Create(ctx, e.p("mine"), []byte("s"), Persistent, CreatorAllACL())
		must(t, "create with the creator's ACL", err)
		acl, st, err := alice.GetACL(ctx, e.p("mine"))
		if err != nil || len(acl) != 1 || acl[0] != (ACL{PermAll, "digest", Digest("alice", "secret")}) || st.Aversion != 0 {
			t.Errorf("getACL = %+v %+v %v", acl, st, err)
		}
		if _, _, err := anon.Get(ctx, e.p("mine")); !errors.Is(err, ErrNoAuth) {
			t.Errorf("anonymous read: %v, want NoAuth", err)
		}
		// Auth added later applies to the session's next calls.
		must(t, "addAuth", anon.AddAuth(ctx, "digest", []byte("alice:secret")))
		if _, _, err := anon.Get(ctx, e.p("mine")); err != nil {
			t.Errorf("read after addAuth: %v", err)
		}

		st, err = alice.SetACL(ctx, e.p("mine"), append(DigestACL(PermRead, "bob", "pw"), ACL{PermAll, "digest", Digest("alice", "secret")}), 0)
		if err != nil || st.Aversion != 1 {
			t.Errorf("setACL = %+v, %v", st, err)
		}
		if _, err := alice.SetACL(ctx, e.p("mine"), WorldACL(PermAll), 0); !errors.Is(err, ErrBadVersion) {
			t.Errorf("setACL with a stale version: %v", err)
		}
		bob := e.connect(WithAuth("digest", []byte("bob:pw")))
		if _, _, err := bob.Get(ctx, e.p("mine")); err != nil {
			t.Errorf("bob's read: %v", err)
		}
		if _, err := bob.Set(ctx, e.p("mine"), nil, -1); !errors.Is(err, ErrNoAuth) {
			t.Errorf("bob's write: %v, want NoAuth", err)
		}
		if _, _, err := anon.Create(ctx, e.p("x"), nil, Persistent, []ACL{{PermAll, "digest", "malformed"}}); !errors.Is(err, ErrInvalidACL) {
			t.Errorf("malformed ACL: %v, want InvalidACL", err)
		}
		if _, _, err := e.connect().Create(ctx, e.p("y"), nil, Persistent, CreatorAllACL()); !errors.Is(err, ErrInvalidACL) {
			t.Errorf("creator ACL without credentials: %v, want InvalidACL", err)
		}
	})
}

// A server that rejects credentials ends the session: StateAuthFailed is
// final, and every call says so.
func TestAuthFailed(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		// At connect: Connect itself fails.
		_, err := Connect(ctx(t), e.addr, WithAuth("nosuchscheme", []byte("x")), WithLogger(testLogger(t)))
		if !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("connect with bad credentials: %v, want AuthFailed", err)
		}

		// Later: AddAuth fails and so does everything after it.
		states := newStateLog()
		c := e.connect(states.option())
		_, _, ch, err := c.ExistsW(ctx(t), e.p("w"))
		must(t, "existsW", err)
		if err := c.AddAuth(ctx(t), "nosuchscheme", []byte("x")); !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("addAuth: %v, want AuthFailed", err)
		}
		states.wait(t, StateAuthFailed, 0, 20*time.Second)
		<-c.Done()
		if !errors.Is(c.Err(), ErrAuthFailed) || c.State() != StateAuthFailed {
			t.Errorf("Err %v, State %v", c.Err(), c.State())
		}
		if _, _, err := c.Get(ctx(t), "/"); !errors.Is(err, ErrAuthFailed) {
			t.Errorf("call after auth failure: %v", err)
		}
		if ev := recv(t, ch); ev.Type != EventNotWatching || !errors.Is(ev.Err, ErrAuthFailed) {
			t.Errorf("watch ended with %+v", ev)
		}
	})
}

// Ref: the Java client's chroot handling: paths in calls, results and
// events are relative to the chroot.
func TestChroot(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		ctx := ctx(t)
		c := e.connectTo(e.addr + e.root)
		root := e.connect()

		p, _, err := c.Create(ctx, "/a", []byte("x"), Persistent, OpenACLUnsafe())
		if err != nil || p != "/a" {
			t.Fatalf("create in chroot = %q, %v", p, err)
		}
		if ok, _, _ := root.Exists(ctx, e.p("a")); !ok {
			t.Errorf("%s missing", e.p("a"))
		}
		seq, _, err := c.Create(ctx, "/a/s-", nil, EphemeralSequential, OpenACLUnsafe())
		if err != nil || !strings.HasPrefix(seq, "/a/s-") {
			t.Errorf("sequential in chroot = %q, %v", seq, err)
		}
		if eph, err := c.GetEphemerals(ctx, "/"); err != nil || !slices.Equal(eph, []string{seq}) {
			t.Errorf("getEphemerals in chroot = %v, %v", eph, err)
		}
		kids, _, err := c.Children(ctx, "/")
		if err != nil || !slices.Equal(kids, []string{"a"}) {
			t.Errorf("children of the chroot = %v, %v", kids, err)
		}
		_, _, ch, err := c.GetW(ctx, "/a")
		must(t, "getW", err)
		_, err = root.Set(ctx, e.p("a"), nil, -1)
		must(t, "set", err)
		expectEvent(t, ch, EventNodeDataChanged, "/a")
		res, err := c.Multi(ctx, CreateOp("/b", nil, Persistent, OpenACLUnsafe()))
		if err != nil || res[0].Path != "/b" {
			t.Errorf("multi create in chroot = %+v, %v", res, err)
		}
		if err := c.Delete(ctx, "/missing", -1); err == nil || !strings.Contains(err.Error(), "delete /missing:") {
			t.Errorf("error names the chroot-relative path: %v", err)
		}
	})
}

// Ref: the Java client's multi: all ops or none, and a failed multi
// reports each op's fate.
func TestMulti(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		res, err := c.Multi(ctx,
			CreateOp(e.p("m"), []byte("0"), Persistent, acl),
			CreateOp(e.p("m/s-"), nil, PersistentSequential, acl),
			CreateOp(e.p("m/cont"), nil, Container, acl),
			CreateTTLOp(e.p("m/ttl"), nil, PersistentWithTTL, acl, time.Hour),
			SetDataOp(e.p("m"), []byte("1"), 0),
			CheckOp(e.p("m"), 1),
			DeleteOp(e.p("m/ttl"), -1),
		)
		must(t, "multi", err)
		if len(res) != 7 || res[0].Path != e.p("m") || !strings.HasPrefix(res[1].Path, e.p("m/s-")) ||
			res[2].Stat.Czxid == 0 || res[3].Stat.Czxid == 0 || res[4].Stat.Version != 1 {
			t.Errorf("multi results %+v", res)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Errorf("result %d: %v", i, r.Err)
			}
		}
		// All ops share one zxid: the multi is one transaction.
		if res[4].Stat.Mzxid != res[2].Stat.Czxid {
			t.Errorf("ops in separate transactions: %d %d", res[4].Stat.Mzxid, res[2].Stat.Czxid)
		}

		res, err = c.Multi(ctx,
			CreateOp(e.p("new"), nil, Persistent, acl),
			SetDataOp(e.p("m"), []byte("2"), 7),
			DeleteOp(e.p("m"), -1),
		)
		if !errors.Is(err, ErrBadVersion) || !strings.Contains(err.Error(), e.p("m")) {
			t.Fatalf("failed multi: %v; want BadVersion on %s", err, e.p("m"))
		}
		if len(res) != 3 || res[0].Err != nil || !errors.Is(res[1].Err, ErrBadVersion) || !errors.Is(res[2].Err, ErrRuntimeInconsistency) {
			t.Errorf("failed multi results %+v", res)
		}
		if ok, _, _ := c.Exists(ctx, e.p("new")); ok {
			t.Errorf("a failed multi applied its first op")
		}
		if _, err := c.Multi(ctx, CheckOp("bad", 0)); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("multi with a bad path: %v", err)
		}
		if _, err := c.Multi(ctx, Op{}); !errors.Is(err, ErrBadArguments) {
			t.Errorf("multi with a zero Op: %v", err)
		}

		rr, err := c.MultiRead(ctx, GetDataOp(e.p("m")), GetChildrenOp(e.p("m")), GetDataOp(e.p("nope")))
		must(t, "multiRead", err)
		slices.Sort(rr[1].Children)
		if string(rr[0].Data) != "1" || rr[0].Stat.Version != 1 || len(rr[1].Children) != 2 ||
			!errors.Is(rr[2].Err, ErrNoNode) || rr[0].Err != nil || rr[1].Err != nil {
			t.Errorf("multiRead = %+v", rr)
		}
	})
}

// Ref: a standalone Apache server has reconfig disabled (reconfigEnabled
// is false by default): the request goes out and the code comes back.
func TestReconfigDisabled(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		_, _, err := e.connect().Reconfig(ctx(t), "", "", "server.1=127.0.0.1:2888:3888;2181", -1)
		if !errors.Is(err, ErrReconfigDisabled) {
			t.Errorf("reconfig: %v, want ReconfigDisabled", err)
		}
	})
}

// Every asynchronous call completes through its callback, with the same
// results as the synchronous one.
func TestAsyncCalls(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		done := make(chan string, 32)
		added := make(chan struct{})
		check := func(name string, err error) {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			done <- name
		}
		calls := []struct {
			name string
			run  func() error
		}{
			{"create", func() error {
				return c.CreateAsync(ctx, e.p("a"), []byte("x"), Persistent, acl, func(p string, _ Stat, err error) {
					if p != e.p("a") {
						err = errors.Join(err, errors.New("path "+p))
					}
					check("create", err)
				})
			}},
			{"createTTL", func() error {
				return c.CreateTTLAsync(ctx, e.p("t"), nil, PersistentWithTTL, acl, time.Hour, func(_ string, _ Stat, err error) { check("createTTL", err) })
			}},
			{"set", func() error {
				return c.SetAsync(ctx, e.p("a"), []byte("y"), 0, func(st Stat, err error) { check("set", err) })
			}},
			{"get", func() error {
				return c.GetAsync(ctx, e.p("a"), func(d []byte, _ Stat, err error) {
					if string(d) != "y" {
						err = errors.Join(err, errors.New("data "+string(d)))
					}
					check("get", err)
				})
			}},
			{"getW", func() error {
				return c.GetWAsync(ctx, e.p("a"), func(_ []byte, _ Stat, ch <-chan Event, err error) {
					if ch == nil {
						err = errors.Join(err, errors.New("no channel"))
					}
					check("getW", err)
				})
			}},
			{"exists", func() error {
				return c.ExistsAsync(ctx, e.p("nope"), func(ok bool, _ Stat, err error) { check("exists", err) })
			}},
			{"existsW", func() error {
				return c.ExistsWAsync(ctx, e.p("nope"), func(ok bool, _ Stat, _ <-chan Event, err error) { check("existsW", err) })
			}},
			{"children", func() error {
				return c.ChildrenAsync(ctx, e.root, func(k []string, _ Stat, err error) { check("children", err) })
			}},
			{"childrenW", func() error {
				return c.ChildrenWAsync(ctx, e.root, func(k []string, _ Stat, _ <-chan Event, err error) { check("childrenW", err) })
			}},
			{"getACL", func() error {
				return c.GetACLAsync(ctx, e.p("a"), func(_ []ACL, _ Stat, err error) { check("getACL", err) })
			}},
			{"setACL", func() error {
				return c.SetACLAsync(ctx, e.p("a"), acl, -1, func(_ Stat, err error) { check("setACL", err) })
			}},
			{"sync", func() error { return c.SyncAsync(ctx, "/", func(err error) { check("sync", err) }) }},
			{"multi", func() error {
				return c.MultiAsync(ctx, []Op{CheckOp(e.p("a"), 1)}, func(_ []OpResult, err error) { check("multi", err) })
			}},
			{"multiRead", func() error {
				return c.MultiReadAsync(ctx, []ReadOp{GetDataOp(e.p("a"))}, func(_ []ReadResult, err error) { check("multiRead", err) })
			}},
			{"addAuth", func() error {
				return c.AddAuthAsync(ctx, "digest", []byte("u:p"), func(err error) { check("addAuth", err) })
			}},
			{"getEphemerals", func() error {
				return c.GetEphemeralsAsync(ctx, "/", func(_ []string, err error) { check("getEphemerals", err) })
			}},
			{"count", func() error {
				return c.GetAllChildrenNumberAsync(ctx, e.root, func(_ int, err error) { check("count", err) })
			}},
			{"addWatch", func() error {
				return c.AddWatchAsync(ctx, e.p("a"), WatchPersistent, func(_ <-chan Event, err error) {
					check("addWatch", err)
					close(added)
				})
			}},
			{"removeWatches", func() error {
				return c.RemoveWatchesAsync(ctx, e.p("a"), WatcherAny, func(err error) { check("removeWatches", err) })
			}},
			{"whoAmI", func() error {
				return c.WhoAmIAsync(ctx, func(_ []ClientInfo, err error) { check("whoAmI", err) })
			}},
			{"reconfig", func() error {
				return c.ReconfigAsync(ctx, "", "", "x", -1, func(_ []byte, _ Stat, err error) {
					if errors.Is(err, ErrReconfigDisabled) {
						err = nil
					}
					check("reconfig", err)
				})
			}},
			{"delete", func() error { return c.DeleteAsync(ctx, e.p("t"), -1, func(err error) { check("delete", err) }) }},
		}
		for _, call := range calls {
			// RemoveWatches checks for a local watch before it sends.
			if call.name == "removeWatches" {
				<-added
			}
			if err := call.run(); err != nil {
				t.Fatalf("%s: %v", call.name, err)
			}
		}
		// Callbacks run in the order of the calls.
		for i := range calls {
			if got := <-done; got != calls[i].name {
				t.Errorf("completion %d is %s, want %s", i, got, calls[i].name)
			}
		}
	})
}

// A context that ends before the reply returns its error unchanged; the
// client stays usable.
func TestContextCancel(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := c.Get(cctx, "/"); !errors.Is(err, context.Canceled) {
			t.Errorf("get with a cancelled context: %v", err)
		}
		if _, _, _, err := c.GetW(cctx, "/"); !errors.Is(err, context.Canceled) {
			t.Errorf("getW with a cancelled context: %v", err)
		}
		if _, _, err := c.Get(ctx(t), "/"); err != nil {
			t.Errorf("get afterwards: %v", err)
		}
	})
}
