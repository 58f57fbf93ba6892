package interop

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
)

// TestMultiSuccess runs every op kind go-zookeeper can put in a multi,
// ephemeral and sequential creates included. Later ops see earlier ones,
// and all of them share one zxid.
// Ref: ZooKeeper.multi javadoc; programmer's guide, "ZooKeeper Stat
// Structure" (zxids).
func TestMultiSuccess(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		sid := c.SessionID()
		p := c.create(t, e.p("p"), nil, 0)
		c.create(t, p+"/old", []byte("x"), 0)
		c.create(t, p+"/gone", nil, 0)

		res, err := c.Multi(
			&zk.CreateRequest{Path: p + "/a", Data: []byte("a"), Acl: openACL},
			&zk.CreateRequest{Path: p + "/e", Acl: openACL, Flags: zk.FlagEphemeral},
			&zk.CreateRequest{Path: p + "/s-", Acl: openACL, Flags: zk.FlagEphemeralSequential},
			&zk.CreateRequest{Path: p + "/a/kid", Acl: openACL}, // parent made by op 0
			&zk.SetDataRequest{Path: p + "/old", Data: []byte("y"), Version: 0},
			&zk.CheckVersionRequest{Path: p + "/old", Version: 1}, // sees the set
			&zk.DeleteRequest{Path: p + "/gone", Version: 0},
		)
		must(t, tg.Name, "multi", err)
		// The suffix counts the parent's creates, the two earlier ops of
		// this multi included.
		seq := p + "/s-0000000004"
		wantPaths := []string{p + "/a", p + "/e", seq, p + "/a/kid", "", "", ""}
		if len(res) != len(wantPaths) {
			t.Fatalf("%s: %d results; want %d", tg.Name, len(res), len(wantPaths))
		}
		for i, r := range res {
			if r.Error != nil || r.String != wantPaths[i] || (r.Stat != nil) != (i == 4) {
				t.Errorf("%s: result %d = %+v; want path %q, a stat only for the set", tg.Name, i, r, wantPaths[i])
			}
		}

		z := c.stat(t, p+"/a").Czxid
		for _, path := range []string{p + "/e", seq, p + "/a/kid"} {
			if st := c.stat(t, path); st.Czxid != z {
				t.Errorf("%s: %s czxid %d; want the multi's zxid %d", tg.Name, path, st.Czxid, z)
			}
		}
		for _, path := range []string{p + "/e", seq} {
			if st := c.stat(t, path); st.EphemeralOwner != sid {
				t.Errorf("%s: %s owner %#x; want %#x", tg.Name, path, st.EphemeralOwner, sid)
			}
		}
		if st := c.stat(t, p+"/old"); st.Mzxid != z || st.Version != 1 || *res[4].Stat != st {
			t.Errorf("%s: set node %+v (multi said %+v); want mzxid %d, version 1", tg.Name, st, *res[4].Stat, z)
		}
		if c.exists(t, p+"/gone") {
			t.Errorf("%s: deleted node still exists", tg.Name)
		}
		// 2 creates before, 3 creates and 1 delete in the multi.
		if st := c.stat(t, p); st.Pzxid != z || st.Cversion != 6 || st.NumChildren != 4 {
			t.Errorf("%s: parent %+v; want pzxid %d, cversion 6, numChildren 4", tg.Name, st, z)
		}
	})
}

// TestMultiFailureIsAtomic: when one op fails nothing is applied; Apache
// answers OK for the ops before the failed one, the error for it and
// RuntimeInconsistency for the ops after it, and go-zookeeper returns the
// first error.
func TestMultiFailureIsAtomic(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("p"), nil, 0)
		c.create(t, p+"/old", []byte("x"), 0)
		before := c.stat(t, p)
		oldBefore := c.stat(t, p+"/old")

		res, err := c.Multi(
			&zk.CreateRequest{Path: p + "/new", Acl: openACL},
			&zk.CreateRequest{Path: p + "/s-", Acl: openACL, Flags: zk.FlagSequence},
			&zk.SetDataRequest{Path: p + "/old", Data: []byte("y"), Version: 0},
			&zk.CheckVersionRequest{Path: p + "/old", Version: 0}, // the set made it 1
			&zk.CreateRequest{Path: p + "/after", Acl: openACL},
		)
		wantCode(t, tg.Name, "multi", err, jute.BadVersion)
		want := []jute.Code{jute.OK, jute.OK, jute.OK, jute.BadVersion, jute.RuntimeInconsistency}
		if len(res) != len(want) {
			t.Fatalf("%s: %d results; want %d", tg.Name, len(res), len(want))
		}
		for i, r := range res {
			wantCode(t, tg.Name, "result", r.Error, want[i])
			if r.String != "" || r.Stat != nil {
				t.Errorf("%s: failed multi result %d carries %+v", tg.Name, i, r)
			}
		}
		if got := c.stat(t, p); got != before {
			t.Errorf("%s: parent changed by a failed multi: %+v, was %+v", tg.Name, got, before)
		}
		data, st, err := c.Get(p + "/old")
		if err != nil || string(data) != "x" || *st != oldBefore {
			t.Errorf("%s: set of a failed multi applied: %q %+v %v", tg.Name, data, *st, err)
		}
		// No sequence number was used up.
		if got := c.create(t, p+"/s-", nil, zk.FlagSequence); got != p+"/s-0000000001" {
			t.Errorf("%s: next sequential = %q; want s-0000000001", tg.Name, got)
		}
	})
}

// TestMultiOpErrors: the error code of each kind of failed op.
func TestMultiOpErrors(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		n := c.create(t, e.p("n"), nil, 0)
		c.create(t, n+"/kid", nil, 0)
		eph := c.create(t, e.p("eph"), nil, zk.FlagEphemeral)
		ro := c.create(t, e.p("ro"), nil, 0)
		_, err := c.SetACL(ro, zk.WorldACL(zk.PermRead), -1)
		must(t, tg.Name, "setACL", err)

		tests := []struct {
			name string
			op   any
			want jute.Code
		}{
			{"create existing", &zk.CreateRequest{Path: n, Acl: openACL}, jute.NodeExists},
			{"create without parent", &zk.CreateRequest{Path: e.p("none/x"), Acl: openACL}, jute.NoNode},
			{"create under ephemeral", &zk.CreateRequest{Path: eph + "/x", Acl: openACL}, jute.NoChildrenForEphemerals},
			{"create with empty ACL", &zk.CreateRequest{Path: e.p("x"), Acl: []zk.ACL{}}, jute.InvalidACL},
			{"create without permission", &zk.CreateRequest{Path: ro + "/x", Acl: openACL}, jute.NoAuth},
			{"set missing", &zk.SetDataRequest{Path: e.p("none"), Version: -1}, jute.NoNode},
			{"set bad version", &zk.SetDataRequest{Path: n, Version: 7}, jute.BadVersion},
			{"set without permission", &zk.SetDataRequest{Path: ro, Version: -1}, jute.NoAuth},
			{"delete missing", &zk.DeleteRequest{Path: e.p("none"), Version: -1}, jute.NoNode},
			{"delete non-empty", &zk.DeleteRequest{Path: n, Version: -1}, jute.NotEmpty},
			{"delete bad version", &zk.DeleteRequest{Path: n + "/kid", Version: 7}, jute.BadVersion},
			{"check missing", &zk.CheckVersionRequest{Path: e.p("none"), Version: -1}, jute.NoNode},
			{"check bad version", &zk.CheckVersionRequest{Path: n, Version: 7}, jute.BadVersion},
		}
		for _, tc := range tests {
			res, err := c.Multi(tc.op)
			wantCode(t, tg.Name, tc.name, err, tc.want)
			if len(res) != 1 {
				t.Errorf("%s: %s: %d results; want 1", tg.Name, tc.name, len(res))
				continue
			}
			wantCode(t, tg.Name, tc.name+" (result)", res[0].Error, tc.want)
		}
		res, err := c.Multi()
		if err != nil || len(res) != 0 {
			t.Errorf("%s: empty multi = %v, %v; want no results, no error", tg.Name, res, err)
		}
	})
}

// TestMultiContainerAndTTLFlags covers creates whose flags ask for a
// container or a TTL node inside a multi (go-zookeeper sends them as plain
// create ops).
func TestMultiContainerAndTTLFlags(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()

		// Apache creates a container and answers with a createContainer
		// (19) result, path and stat, which go-zookeeper cannot decode:
		// it reports ErrAPIError although the multi succeeded.
		cont := e.p("cont")
		_, err := c.Multi(&zk.CreateRequest{Path: cont, Acl: openACL, Flags: zk.FlagContainer})
		if !errors.Is(err, zk.ErrAPIError) {
			t.Errorf("%s: multi container create: %v; want go-zookeeper's ErrAPIError", tg.Name, err)
		}
		c.create(t, cont+"/kid", nil, 0)
		_, _, gone, err := c.ExistsW(cont)
		must(t, tg.Name, "existsW", err)
		must(t, tg.Name, "delete kid", c.Delete(cont+"/kid", -1))
		expectEvent(t, tg.Name, gone, zk.EventNodeDeleted, cont)

		// A TTL flag without a TTL (a plain create op has none) makes
		// Apache fail the whole request with MarshallingError (-5): no
		// per-op results, nothing created.
		res, err := c.Multi(&zk.CreateRequest{Path: e.p("ttl"), Acl: openACL, Flags: zk.FlagTTL})
		wantCode(t, tg.Name, "multi ttl create", err, jute.MarshallingError)
		if len(res) != 0 || c.exists(t, e.p("ttl")) {
			t.Errorf("%s: multi ttl create: results %v, node exists %v; want neither", tg.Name, res, c.exists(t, e.p("ttl")))
		}
	})
}
