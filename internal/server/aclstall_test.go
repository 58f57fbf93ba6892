package server

import (
	"net/netip"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: issue 13, defect 6: one create carrying 40,000 distinct ACL entries
// (about 1 MB, the default jute.maxbuffer) held up every other session's
// writes for seconds (over 10 s here: the other client timed out), as prep
// deduplicated the list in quadratic time on the replica's loop. Now the
// other session's setData latency while it is prepped stays far below a
// second (about 90 ms measured); the bound leaves room for -race.
func TestLargeACLDoesNotStallOthers(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxFrame = 4 << 20 })
	big := newSession(t, ts.addr)
	other := newSession(t, ts.addr)
	other.create("/n", nil, 0)
	acls := make([]jute.ACL, 40000)
	for i := range acls {
		acls[i] = jute.ACL{Perms: jute.PermAll, ID: jute.Id{Scheme: "ip",
			ID: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()}}
	}
	start := time.Now()
	big.send(jute.OpCreate, &jute.CreateRequest{Path: "/big", ACL: acls})
	var worst time.Duration
	for time.Since(start) < time.Second {
		t0 := time.Now()
		other.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/n", Version: -1}, &jute.StatResponse{}, jute.OK)
		worst = max(worst, time.Since(t0))
	}
	if r := big.readReply(); r.hdr.Err != jute.OK {
		t.Fatalf("create with 40,000 ACL entries: %v", r.hdr.Err)
	}
	t.Logf("worst setData latency during the create: %v", worst)
	if worst > 2*time.Second {
		t.Errorf("a create with 40,000 ACL entries held another session's setData for %v", worst)
	}
}
