package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Ref: issue "The ensemble", dynamic reconfiguration: adding a participant
// under load, as an operator does with Apache: three `zoo server`
// processes run; a fourth is started with a zoo.cfg naming them and
// itself; `reconfig -add` makes it a participant while clients write.
// It follows, then the ensemble of four survives kill -9 of its leader,
// and every acknowledged write is on every server.
func TestEnsembleReconfigAddsAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs zoo server processes")
	}
	ms := newEnsemble(t, 3, 1, nil)
	leaderOf(t, ms[:3])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := zk.Connect(ctx, connectString(ms[:3]), zk.WithSessionTimeout(writerTimeout),
		zk.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Create(ctx, "/ens", nil, zk.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	var acked ackLog
	write := acked.writer(c)
	stopWriters := startLoad(ctx, write)
	defer stopWriters()
	acked.more(t, 50)

	joiner := ms[3]
	joiner.start()
	spec := fmt.Sprintf("server.%d=%s:participant;%s", joiner.id, serverLine(t, joiner), joiner.addr)
	if _, _, err := c.Reconfig(ctx, spec, "", "", -1); err != nil {
		t.Fatalf("reconfig -add %s: %v\n%s", spec, err, joiner.logTail())
	}
	leaderOf(t, ms) // the fourth among the followers
	acked.more(t, 50)

	lead := leaderOf(t, ms)
	killed := time.Now()
	lead.kill()
	if err := untilOK(ctx, write); err != nil {
		t.Fatalf("no write after killing the leader of four: %v", err)
	}
	t.Logf("kill -9 of the leader (server %d) of four: first write after %v", lead.id, time.Since(killed).Round(time.Millisecond))
	acked.more(t, 50)
	stopWriters()
	lead.start()
	leaderOf(t, ms)
	verifyEnsemble(t, ms, acked.all())
}

// serverLine returns the value of member m's own server.N line in its
// zoo.cfg (host:quorumPort:electionPort).
func serverLine(t *testing.T, m *member) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("server.%d=", m.id)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	t.Fatalf("no %s line in server %d's zoo.cfg", prefix, m.id)
	return ""
}
