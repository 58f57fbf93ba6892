package replica

import (
	"errors"
	"testing"
	"time"
)

// A voter whose data directory is wiped and which starts again with the
// same id (what an Apache operator does to resync a broken follower) is
// still a member with acknowledged entries in the leader's eyes. Raft
// would panic at the leader's next heartbeat, at every restart; the
// replica stops instead with ErrLostLog, which tells the operator what to
// do, and the others go on serving.
func TestWipedVoterStopsWithLostLog(t *testing.T) {
	n, ms := startEnsemble(t, 3)
	lead := leader(t, ms)
	createInOrder(t, lead, "/w-", 20)
	var f *member
	for _, m := range ms {
		if m != lead {
			f = m
			break
		}
	}
	converge(t, ms)
	f.stop()
	f.start(t, n) // a fresh MemFS: its log is gone
	select {
	case <-f.r.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the wiped voter is still running")
	}
	if err := f.r.Err(); !errors.Is(err, ErrLostLog) {
		t.Fatalf("the wiped voter stopped with %v, want ErrLostLog", err)
	}
	var rest []*member
	for _, m := range ms {
		if m != f {
			rest = append(rest, m)
		}
	}
	leader(t, rest) // the other two still have a leader both follow

}
