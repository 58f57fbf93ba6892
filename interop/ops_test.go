package interop

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/zktest"
)

// Ref: programmer's guide, "ZNodes" (Ephemeral Nodes, Sequence Nodes,
// Container Nodes, TTL Nodes).
func TestCreateModes(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		sid := c.SessionID()
		seqName := regexp.MustCompile(`^` + regexp.QuoteMeta(e.root) + `/n-\d{10}$`)
		tests := []struct {
			name      string
			create    func(path string) (string, error)
			path      string
			sequence  bool
			ephemeral bool
		}{
			{"persistent", func(p string) (string, error) { return c.Create(p, []byte("d"), zk.FlagPersistent, openACL) }, "persistent", false, false},
			{"ephemeral", func(p string) (string, error) { return c.Create(p, []byte("d"), zk.FlagEphemeral, openACL) }, "ephemeral", false, true},
			{"sequential", func(p string) (string, error) { return c.Create(p, []byte("d"), zk.FlagSequence, openACL) }, "n-", true, false},
			{"ephemeral-sequential", func(p string) (string, error) { return c.Create(p, []byte("d"), zk.FlagEphemeralSequential, openACL) }, "n-", true, true},
			// Apache reports ephemeralOwner 0 for containers and TTL nodes,
			// although it stores a marker there internally.
			{"container", func(p string) (string, error) { return c.CreateContainer(p, []byte("d"), zk.FlagContainer, openACL) }, "container", false, false},
			{"ttl", func(p string) (string, error) {
				return c.CreateTTL(p, []byte("d"), zk.FlagTTL, openACL, time.Hour)
			}, "ttl", false, false},
			{"ttl-sequential", func(p string) (string, error) {
				return c.CreateTTL(p, []byte("d"), zk.FlagPersistentSequentialWithTTL, openACL, time.Hour)
			}, "n-", true, false},
		}
		for _, tc := range tests {
			got, err := tc.create(e.p(tc.path))
			must(t, tg.Name, tc.name, err)
			if tc.sequence && !seqName.MatchString(got) || !tc.sequence && got != e.p(tc.path) {
				t.Errorf("%s: %s: created %q from %q", tg.Name, tc.name, got, e.p(tc.path))
				continue
			}
			data, st, err := c.Get(got)
			must(t, tg.Name, tc.name+": get", err)
			wantOwner := int64(0)
			if tc.ephemeral {
				wantOwner = sid
			}
			if string(data) != "d" || st.EphemeralOwner != wantOwner || st.DataLength != 1 || st.Version != 0 {
				t.Errorf("%s: %s: get = %q %+v; want data \"d\", ephemeralOwner %#x", tg.Name, tc.name, data, *st, wantOwner)
			}
		}
	})
}

// Ref: programmer's guide, "Container Nodes": a container is deleted once
// its last child is gone.
func TestContainerReaped(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		cont, err := c.CreateContainer(e.p("cont"), nil, zk.FlagContainer, openACL)
		must(t, tg.Name, "create container", err)
		c.create(t, cont+"/child", nil, 0)
		ok, _, watch, err := c.ExistsW(cont)
		if err != nil || !ok {
			t.Fatalf("%s: existsW container = %v, %v", tg.Name, ok, err)
		}
		must(t, tg.Name, "delete child", c.Delete(cont+"/child", -1))
		expectEvent(t, tg.Name, watch, zk.EventNodeDeleted, cont)
		if c.exists(t, cont) {
			t.Errorf("%s: container still exists after its deletion event", tg.Name)
		}
	})
}

// Ref: programmer's guide, "TTL Nodes".
func TestTTLNodeExpires(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p, err := c.CreateTTL(e.p("ttl"), []byte("x"), zk.FlagTTL, openACL, 200*time.Millisecond)
		must(t, tg.Name, "create ttl", err)
		ok, _, watch, err := c.ExistsW(p)
		if err != nil || !ok {
			t.Fatalf("%s: existsW ttl node = %v, %v", tg.Name, ok, err)
		}
		expectEvent(t, tg.Name, watch, zk.EventNodeDeleted, p)
	})
}

func TestTTLArguments(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		tests := []struct {
			name string
			ttl  time.Duration
			want jute.Code
		}{
			{"negative", -time.Second, jute.BadArguments},
			{"zero", 0, jute.BadArguments},
			{"1ms", time.Millisecond, jute.OK},
			// EphemeralType.MAX_TTL: the ttl shares 40 bits of the owner field.
			{"max", 0xFF_FFFF_FFFF * time.Millisecond, jute.OK},
			{"max+1", 0x100_0000_0000 * time.Millisecond, jute.BadArguments},
		}
		for _, tc := range tests {
			_, err := c.CreateTTL(e.p(tc.name), nil, zk.FlagTTL, openACL, tc.ttl)
			wantCode(t, tg.Name, "ttl "+tc.name, err, tc.want)
		}
		// Without extendedTypesEnabled Apache refuses TTL nodes with
		// Unimplemented (-6), which go-zookeeper has no sentinel for.
		plain := newEnv(t, tg, plainOpts)
		pc := plain.connect()
		_, err := pc.CreateTTL(plain.p("ttl"), nil, zk.FlagTTL, openACL, time.Minute)
		wantCode(t, tg.Name, "ttl with extended types off", err, jute.Unimplemented)
		// Containers need no extended types.
		_, err = pc.CreateContainer(plain.p("cont"), nil, zk.FlagContainer, openACL)
		wantCode(t, tg.Name, "container with extended types off", err, jute.OK)
	})
}

// Apache keeps null data apart from empty data: a node created or set with
// no data (a -1 length buffer) reads back as null, not as an empty array.
func TestNullAndEmptyData(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		c.create(t, e.p("null"), nil, 0)
		c.create(t, e.p("empty"), []byte{}, 0)
		check := func(what, path string, wantNil bool) {
			t.Helper()
			data, st, err := c.Get(path)
			must(t, tg.Name, what, err)
			if (data == nil) != wantNil || len(data) != 0 || st.DataLength != 0 {
				t.Errorf("%s: %s: data = %#v (dataLength %d); want nil=%v, empty", tg.Name, what, data, st.DataLength, wantNil)
			}
		}
		check("created with null", e.p("null"), true)
		check("created empty", e.p("empty"), false)
		_, err := c.Set(e.p("empty"), nil, -1)
		must(t, tg.Name, "set null", err)
		check("set to null", e.p("empty"), true)
		_, err = c.Set(e.p("null"), []byte{}, -1)
		must(t, tg.Name, "set empty", err)
		check("set to empty", e.p("null"), false)
	})
}

func TestGetSetExists(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("n"), []byte("one"), 0)

		data, st, err := c.Get(p)
		must(t, tg.Name, "get", err)
		if string(data) != "one" || st.Version != 0 {
			t.Errorf("%s: get = %q v%d; want \"one\" v0", tg.Name, data, st.Version)
		}
		st1, err := c.Set(p, []byte("two"), 0)
		must(t, tg.Name, "set v0", err)
		st2, err := c.Set(p, []byte("three"), -1) // -1 matches any version
		must(t, tg.Name, "set any version", err)
		if st1.Version != 1 || st2.Version != 2 {
			t.Errorf("%s: set versions = %d, %d; want 1, 2", tg.Name, st1.Version, st2.Version)
		}
		data, st, err = c.Get(p)
		must(t, tg.Name, "get after set", err)
		if string(data) != "three" || *st != *st2 {
			t.Errorf("%s: get after set = %q %+v; want \"three\" %+v (the stat set returned)", tg.Name, data, *st, *st2)
		}
		ok, est, err := c.Exists(p)
		if err != nil || !ok || *est != *st2 {
			t.Errorf("%s: exists = %v %+v %v; want true %+v", tg.Name, ok, *est, err, *st2)
		}
		ok, _, err = c.Exists(e.p("missing"))
		if err != nil || ok {
			t.Errorf("%s: exists(missing) = %v, %v; want false, nil", tg.Name, ok, err)
		}
	})
}

func TestChildrenAndDelete(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("p"), nil, 0)
		want := []string{"a", "b", "c"}
		for _, n := range want {
			c.create(t, p+"/"+n, nil, 0)
		}
		kids, st, err := c.Children(p)
		must(t, tg.Name, "children", err)
		// The order of children is unspecified (Apache's is a hash set's).
		slices.Sort(kids)
		if !slices.Equal(kids, want) || st.NumChildren != 3 {
			t.Errorf("%s: children = %v (numChildren %d); want %v", tg.Name, kids, st.NumChildren, want)
		}
		kids, _, err = c.Children(p + "/a")
		if err != nil || len(kids) != 0 {
			t.Errorf("%s: children of a leaf = %v, %v; want none", tg.Name, kids, err)
		}
		must(t, tg.Name, "delete v0", c.Delete(p+"/a", 0))
		must(t, tg.Name, "delete any version", c.Delete(p+"/b", -1))
		kids, _, err = c.Children(p)
		if err != nil || !slices.Equal(kids, []string{"c"}) {
			t.Errorf("%s: children after deletes = %v, %v; want [c]", tg.Name, kids, err)
		}
	})
}

// Ref: programmer's guide, "ACLs".
func TestACLOps(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("n"), nil, 0)

		acl, st, err := c.GetACL(p)
		must(t, tg.Name, "getACL", err)
		if !slices.Equal(acl, openACL) || st.Aversion != 0 {
			t.Errorf("%s: getACL = %v aversion %d; want %v aversion 0", tg.Name, acl, st.Aversion, openACL)
		}
		readOnly := zk.WorldACL(zk.PermRead | zk.PermAdmin)
		st, err = c.SetACL(p, readOnly, 0)
		must(t, tg.Name, "setACL v0", err)
		if st.Aversion != 1 {
			t.Errorf("%s: setACL aversion = %d; want 1", tg.Name, st.Aversion)
		}
		_, err = c.SetACL(p, readOnly, 0)
		wantCode(t, tg.Name, "setACL with a stale aversion", err, jute.BadVersion)
		acl, st, err = c.GetACL(p)
		must(t, tg.Name, "getACL after setACL", err)
		if !slices.Equal(acl, readOnly) || st.Aversion != 1 {
			t.Errorf("%s: getACL = %v aversion %d; want %v aversion 1", tg.Name, acl, st.Aversion, readOnly)
		}
		// Apache stores perms as given, bits beyond ALL included, and drops
		// duplicate entries (keeping the first).
		odd := []zk.ACL{
			{Perms: 0xff, Scheme: "world", ID: "anyone"},
			{Perms: zk.PermRead, Scheme: "ip", ID: "10.0.0.0/8"},
			{Perms: zk.PermRead, Scheme: "ip", ID: "10.0.0.0/8"},
		}
		_, err = c.Create(e.p("odd"), nil, 0, odd)
		must(t, tg.Name, "create with odd ACL", err)
		acl, _, err = c.GetACL(e.p("odd"))
		must(t, tg.Name, "getACL odd", err)
		if !slices.Equal(acl, odd[:2]) {
			t.Errorf("%s: getACL = %v; want %v", tg.Name, acl, odd[:2])
		}
	})
}

func TestSync(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		for _, p := range []string{e.root, e.p("missing")} {
			// Apache does not look the path up: sync of a missing node
			// succeeds and echoes the path.
			got, err := c.Sync(p)
			if err != nil || got != p {
				t.Errorf("%s: sync(%s) = %q, %v; want the path back", tg.Name, p, got, err)
			}
		}
	})
}

// Ref: admin guide, "The Four Letter Words". Targets must whitelist them.
func TestFourLetterWords(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		if ok := zk.FLWRuok([]string{e.addr}, 5*time.Second); !ok[0] {
			t.Errorf("%s: ruok did not answer imok", tg.Name)
		}

		out, err := zktest.FourLetter(e.addr, "srvr", 5*time.Second)
		must(t, tg.Name, "srvr", err)
		// Apache 3.8's layout. Its date is yyyy-MM-dd, which go-zookeeper's
		// FLWSrvr (written for 3.4's MM/dd/yyyy) cannot parse, so FLWSrvr
		// fails against Apache 3.8: a target that matches Apache fails it too.
		mode := cmp.Or(tg.Mode, "standalone")
		srvr := regexp.MustCompile(`^Zookeeper version: \S+, built on \d{4}-\d\d-\d\d \d\d:\d\d \S+\n` +
			`Latency min/avg/max: \d+/[0-9.]+/\d+\n` +
			`Received: \d+\nSent: \d+\nConnections: \d+\nOutstanding: \d+\n` +
			`Zxid: 0x[0-9a-f]+\nMode: ` + mode + `\nNode count: \d+\n`)
		if !srvr.MatchString(out) {
			t.Errorf("%s: srvr output not in Apache 3.8's layout:\n%s", tg.Name, out)
		}
		if stats, ok := zk.FLWSrvr([]string{e.addr}, 5*time.Second); ok || stats[0].Error == nil {
			t.Errorf("%s: FLWSrvr parsed srvr (ok=%v); Apache 3.8's date format makes it fail", tg.Name, ok)
		}

		// cons lists every connection. Apache includes the connection asking
		// for cons itself, as " /ip:port[0](queued=0,recved=1,sent=0)" with
		// no session fields: FLWCons cannot parse that line and reports
		// ok=false, but still returns the sessions it could parse.
		cons, ok := zk.FLWCons([]string{e.addr}, 5*time.Second)
		if ok || cons[0].Error != nil {
			t.Errorf("%s: FLWCons ok=%v err=%v; want ok=false (its own connection's line), err=nil", tg.Name, ok, cons[0].Error)
		}
		found := false
		for _, cl := range cons[0].Clients {
			if cl.SessionID == c.SessionID() {
				found = true
				if cl.Timeout != 15000 || cl.Addr == "" {
					t.Errorf("%s: cons entry %+v; want timeout 15000 and an address", tg.Name, *cl)
				}
			}
		}
		if !found {
			t.Errorf("%s: cons does not list session %#x", tg.Name, c.SessionID())
		}
		raw, err := zktest.FourLetter(e.addr, "cons", 5*time.Second)
		must(t, tg.Name, "cons", err)
		self := regexp.MustCompile(`(?m)^ /127\.0\.0\.1:\d+\[0\]\(queued=0,recved=1,sent=0\)$`)
		if !self.MatchString(raw) {
			t.Errorf("%s: cons does not list its own connection as Apache does:\n%s", tg.Name, raw)
		}
	})
}

// Ref: programmer's guide, "Builtin ACL Schemes" (digest, auth, super).
func TestAddAuth(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		alice := e.connect()
		must(t, tg.Name, "addAuth alice", alice.AddAuth("digest", []byte("alice:pw")))
		must(t, tg.Name, "addAuth bob", alice.AddAuth("digest", []byte("bob:pw")))
		// The "auth" scheme expands to every digest identity of the session;
		// the id given with it is ignored.
		_, err := alice.Create(e.p("mine"), []byte("secret"), 0, []zk.ACL{
			{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
			{Perms: zk.PermAll, Scheme: "auth", ID: "ignored"},
		})
		must(t, tg.Name, "create with auth ACL", err)
		acl, _, err := alice.GetACL(e.p("mine"))
		must(t, tg.Name, "getACL", err)
		want := []zk.ACL{
			{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
			{Perms: zk.PermAll, Scheme: "digest", ID: "alice:" + digestOf("alice", "pw")},
			{Perms: zk.PermAll, Scheme: "digest", ID: "bob:" + digestOf("bob", "pw")},
		}
		// Identity order follows Apache's internal set; compare sorted.
		sortACL := func(a []zk.ACL) {
			slices.SortFunc(a, func(x, y zk.ACL) int {
				return strings.Compare(x.Scheme+x.ID, y.Scheme+y.ID)
			})
		}
		sortACL(acl)
		sortACL(want)
		if !slices.Equal(acl, want) {
			t.Errorf("%s: auth ACL expanded to %v; want %v", tg.Name, acl, want)
		}

		// A malformed digest credential is accepted (it just matches no ACL).
		other := e.connect()
		must(t, tg.Name, "addAuth malformed digest", other.AddAuth("digest", []byte("no-colon")))
		_, err = other.Set(e.p("mine"), nil, -1)
		wantCode(t, tg.Name, "set with a malformed credential", err, jute.NoAuth)

		// An unknown scheme fails with AuthFailed and Apache closes the
		// connection; the session survives and the client reconnects to it.
		sid := other.SessionID()
		from := other.events.len()
		err = other.AddAuth("nosuchscheme", []byte("x"))
		wantCode(t, tg.Name, "addAuth unknown scheme", err, jute.AuthFailed)
		i := other.events.waitState(t, tg.Name, zk.StateDisconnected, from, 20*time.Second)
		other.events.waitState(t, tg.Name, zk.StateHasSession, i, 20*time.Second)
		if other.SessionID() != sid {
			t.Errorf("%s: session %#x after auth failure; want the same session %#x", tg.Name, other.SessionID(), sid)
		}
		data, _, err := other.Get(e.p("mine"))
		if err != nil || !bytes.Equal(data, []byte("secret")) {
			t.Errorf("%s: get after reconnect = %q, %v", tg.Name, data, err)
		}
	})
}

// Ref: programmer's guide, "Builtin ACL Schemes": the super user of
// DigestAuthenticationProvider.superDigest passes every ACL check.
func TestSuperDigest(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		owner := e.connect()
		_, err := owner.Create(e.p("locked"), []byte("x"), 0, zk.DigestACL(zk.PermAll, "alice", "pw"))
		must(t, tg.Name, "create locked", err)

		wrong := e.connect()
		must(t, tg.Name, "addAuth wrong super", wrong.AddAuth("digest", []byte("super:wrong")))
		_, _, err = wrong.Get(e.p("locked"))
		wantCode(t, tg.Name, "get with a wrong super password", err, jute.NoAuth)

		super := e.connect()
		must(t, tg.Name, "addAuth super", super.AddAuth("digest", []byte("super:superpw")))
		_, _, err = super.Get(e.p("locked"))
		wantCode(t, tg.Name, "super get", err, jute.OK)
		_, err = super.Set(e.p("locked"), []byte("y"), -1)
		wantCode(t, tg.Name, "super set", err, jute.OK)
		_, err = super.Create(e.p("locked/kid"), nil, 0, openACL)
		wantCode(t, tg.Name, "super create child", err, jute.OK)
		_, err = super.SetACL(e.p("locked"), openACL, -1)
		wantCode(t, tg.Name, "super setACL", err, jute.OK)
	})
}
