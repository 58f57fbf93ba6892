package interop

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
)

// TestStatLifecycle checks every Stat field after each kind of change.
// Zxids are shared by all tests running on a server, so relations between
// zxids are checked, not their values.
// Ref: programmer's guide, "ZooKeeper Stat Structure".
func TestStatLifecycle(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := e.p("p")
		check := func(what string, got, want zk.Stat) {
			t.Helper()
			if got != want {
				t.Errorf("%s: %s:\n got stat %+v\nwant stat %+v", tg.Name, what, got, want)
			}
		}

		before := time.Now().UnixMilli()
		c.create(t, p, []byte("hello"), 0)
		s0 := c.stat(t, p)
		if s0.Czxid <= 0 || s0.Ctime < before-60_000 || s0.Ctime > time.Now().UnixMilli()+60_000 {
			t.Errorf("%s: created stat %+v: want czxid > 0 and ctime near now", tg.Name, s0)
		}
		check("after create", s0, zk.Stat{
			Czxid: s0.Czxid, Mzxid: s0.Czxid, Pzxid: s0.Czxid,
			Ctime: s0.Ctime, Mtime: s0.Ctime, DataLength: 5,
		})
		root := c.stat(t, e.root)
		if root.Cversion != 1 || root.NumChildren != 1 || root.Pzxid != s0.Czxid {
			t.Errorf("%s: parent after child create %+v: want cversion 1, numChildren 1, pzxid = child czxid %d", tg.Name, root, s0.Czxid)
		}

		s1, err := c.Set(p, []byte("hello!"), 0)
		must(t, tg.Name, "set", err)
		if s1.Mzxid <= s0.Mzxid || s1.Mtime < s0.Mtime {
			t.Errorf("%s: set stat %+v: want mzxid > %d and mtime >= %d", tg.Name, *s1, s0.Mzxid, s0.Mtime)
		}
		want := s0
		want.Version, want.DataLength, want.Mzxid, want.Mtime = 1, 6, s1.Mzxid, s1.Mtime
		check("set's reply", *s1, want)
		check("after set", c.stat(t, p), want)

		// setACL changes aversion only: not mzxid, not mtime.
		s2, err := c.SetACL(p, zk.WorldACL(zk.PermAll), 0)
		must(t, tg.Name, "setACL", err)
		want.Aversion = 1
		check("setACL's reply", *s2, want)
		check("after setACL", c.stat(t, p), want)

		// A child create changes cversion, numChildren and pzxid only.
		c.create(t, p+"/c", []byte("x"), 0)
		cs := c.stat(t, p+"/c")
		if cs.Czxid <= s1.Mzxid {
			t.Errorf("%s: child czxid %d not after the parent's last change %d", tg.Name, cs.Czxid, s1.Mzxid)
		}
		want.Cversion, want.NumChildren, want.Pzxid = 1, 1, cs.Czxid
		check("after child create", c.stat(t, p), want)

		// A child's data change does not touch the parent.
		_, err = c.Set(p+"/c", []byte("y"), -1)
		must(t, tg.Name, "set child", err)
		check("after child set", c.stat(t, p), want)

		eph := c.create(t, p+"/e", nil, zk.FlagEphemeral)
		es := c.stat(t, eph)
		check("ephemeral child", es, zk.Stat{
			Czxid: es.Czxid, Mzxid: es.Czxid, Pzxid: es.Czxid,
			Ctime: es.Ctime, Mtime: es.Ctime, EphemeralOwner: c.SessionID(),
		})
		want.Cversion, want.NumChildren, want.Pzxid = 2, 2, es.Czxid
		check("after ephemeral child create", c.stat(t, p), want)

		// A child delete bumps cversion too and moves pzxid to the delete.
		must(t, tg.Name, "delete child", c.Delete(p+"/c", -1))
		s5 := c.stat(t, p)
		if s5.Pzxid <= es.Czxid {
			t.Errorf("%s: pzxid %d after child delete; want > %d", tg.Name, s5.Pzxid, es.Czxid)
		}
		want.Cversion, want.NumChildren, want.Pzxid = 3, 1, s5.Pzxid
		check("after child delete", s5, want)
	})
}

// TestSequentialNumbering pins down Apache's sequence suffixes. The suffix
// is the parent's count of child creates so far, while the cversion that
// Apache reports counts creates and deletes: Apache keeps only the create
// count and reports cversion as 2*creates - numChildren. So after a delete
// the suffix no longer equals the reported cversion.
// Ref: programmer's guide, "Sequence Nodes -- Unique Naming".
func TestSequentialNumbering(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("p"), nil, 0)
		seq := func(name string, flags int32) func() (string, error) {
			return func() (string, error) { return c.Create(p+"/"+name, nil, flags, openACL) }
		}
		plain := func(name string) func() (string, error) { return seq(name, 0) }
		del := func(name string) func() (string, error) {
			return func() (string, error) { return "", c.Delete(p+"/"+name, -1) }
		}
		multi := func(fail bool) func() (string, error) {
			return func() (string, error) {
				ops := []any{
					&zk.CreateRequest{Path: p + "/m-", Acl: openACL, Flags: zk.FlagSequence},
					&zk.CreateRequest{Path: p + "/m-", Acl: openACL, Flags: zk.FlagSequence},
				}
				if fail {
					ops = append(ops, &zk.CheckVersionRequest{Path: p, Version: 99})
				}
				res, err := c.Multi(ops...)
				if err != nil {
					return "", err
				}
				return res[0].String + "," + res[1].String, nil
			}
		}
		steps := []struct {
			what     string
			do       func() (string, error)
			wantPath string // relative to p; "" for none
			wantCode jute.Code
			cversion int32 // parent's reported cversion afterwards
		}{
			{"first sequential", seq("s-", zk.FlagSequence), "s-0000000000", jute.OK, 1},
			{"second sequential", seq("s-", zk.FlagSequence), "s-0000000001", jute.OK, 2},
			{"plain child", plain("x"), "x", jute.OK, 3},
			{"sequential after plain", seq("s-", zk.FlagSequence), "s-0000000003", jute.OK, 4},
			{"delete plain child", del("x"), "", jute.OK, 5},
			{"sequential after delete", seq("s-", zk.FlagSequence), "s-0000000004", jute.OK, 6},
			{"delete sequential child", del("s-0000000000"), "", jute.OK, 7},
			{"failed create", plain("s-0000000001"), "", jute.NodeExists, 7},
			{"empty prefix (path ends in /)", seq("", zk.FlagSequence), "0000000005", jute.OK, 8},
			{"ephemeral sequential", seq("e-", zk.FlagEphemeralSequential), "e-0000000006", jute.OK, 9},
			{"two in one multi", multi(false), p + "/m-0000000007," + p + "/m-0000000008", jute.OK, 11},
			{"failed multi", multi(true), "", jute.BadVersion, 11},
			{"sequential after failed multi", seq("s-", zk.FlagSequence), "s-0000000009", jute.OK, 12},
			// The counter is the parent's, not the prefix's, and a name it
			// will produce may already be taken: then the create fails with
			// NodeExists and consumes no number.
			{"plain child with a future name", plain("s-0000000011"), "s-0000000011", jute.OK, 13},
			{"sequential colliding", seq("s-", zk.FlagSequence), "", jute.NodeExists, 13},
			{"other prefix, same number", seq("t-", zk.FlagSequence), "t-0000000011", jute.OK, 14},
		}
		for _, s := range steps {
			got, err := s.do()
			wantCode(t, tg.Name, s.what, err, s.wantCode)
			if s.wantPath != "" {
				wantPath := s.wantPath
				if wantPath[0] != '/' {
					wantPath = p + "/" + wantPath
				}
				if got != wantPath {
					t.Errorf("%s: %s: created %q; want %q", tg.Name, s.what, got, wantPath)
				}
			}
			if st := c.stat(t, p); st.Cversion != s.cversion {
				t.Errorf("%s: %s: parent cversion %d; want %d", tg.Name, s.what, st.Cversion, s.cversion)
			}
		}
		// Another parent has its own counter.
		if got := c.create(t, e.p("q"), nil, 0); got != "" {
			if s := c.create(t, got+"/s-", nil, zk.FlagSequence); s != got+"/s-0000000000" {
				t.Errorf("%s: first sequential under a new parent = %q", tg.Name, s)
			}
		}
	})
}
