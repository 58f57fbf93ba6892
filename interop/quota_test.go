package interop

import (
	"errors"
	"path"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
)

// setQuota does what zkCli's "setquota" does: the limits node, then the
// stats node, under /zookeeper/quota/<path>. The server keeps the stats.
// It returns a function that removes the quota.
func setQuota(t *testing.T, target string, c *client, path, limits string) func() {
	t.Helper()
	dir := "/zookeeper/quota" + path
	createParents(t, target, c, dir)
	c.create(t, dir+"/zookeeper_limits", []byte(limits), 0)
	c.create(t, dir+"/zookeeper_stats", []byte("count=0,bytes=0"), 0)
	return func() {
		for _, n := range []string{"/zookeeper_limits", "/zookeeper_stats"} {
			must(t, target, "delete quota node", c.Delete(dir+n, -1))
		}
	}
}

// createParents creates p and whatever of its ancestors is missing.
func createParents(t *testing.T, target string, c *client, p string) {
	t.Helper()
	_, err := c.Create(p, nil, 0, openACL)
	if errors.Is(err, zk.ErrNoNode) {
		createParents(t, target, c, path.Dir(p))
		_, err = c.Create(p, nil, 0, openACL)
	}
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("%s: create %s: %v", target, p, err)
	}
}

// Ref: admin guide, "Quotas": a hard limit (countHardLimit, set by
// "setquota -N") fails a create past it with QuotaExceeded when the server
// enforces quotas; the soft limit only logs.
func TestHardQuota(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, Options{EnforceQuota: true})
		c := e.connect()
		q := e.p("q")
		c.create(t, q, nil, 0)
		unset := setQuota(t, tg.Name, c, q, "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=3")
		defer unset()
		c.create(t, q+"/a", nil, 0)
		c.create(t, q+"/b", nil, 0) // q, a and b: 3 nodes, the limit
		_, err := c.Create(q+"/c", nil, 0, openACL)
		wantCode(t, tg.Name, "create past a hard count quota", err, jute.QuotaExceeded)
		if c.exists(t, q+"/c") {
			t.Errorf("%s: node created past the hard quota", tg.Name)
		}
		data, _, err := c.Get("/zookeeper/quota" + q + "/zookeeper_stats")
		must(t, tg.Name, "get stats", err)
		if string(data) != "count=3,bytes=0" {
			t.Errorf("%s: quota stats %q; want count=3,bytes=0", tg.Name, data)
		}

		// A soft limit alone never fails a request.
		s := e.p("soft")
		c.create(t, s, nil, 0)
		defer setQuota(t, tg.Name, c, s, "count=1,bytes=-1=;byteHardLimit=-1;countHardLimit=-1")()
		c.create(t, s+"/over", nil, 0)
	})
}
