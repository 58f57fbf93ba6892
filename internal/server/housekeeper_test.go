package server

import (
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

const hkTick = 100 // ms

func createSession(sid int64, timeoutMs int32) *txn.Txn {
	return &txn.Txn{Type: jute.OpCreateSession, SessionID: sid, Body: &txn.CreateSessionTxn{TimeoutMs: timeoutMs}}
}

// A session expires once its timeout passes with no traffic, is handed out
// once, and, while its closeSession does not apply, again every
// recloseTicks; once it applies, never again.
func TestHousekeeperExpiry(t *testing.T) {
	h := NewHousekeeper(hkTick, false, 0)
	h.Applied(createSession(1, 1000), jute.OK, 1, 0)
	h.Applied(createSession(2, 1000), jute.OK, 1, 0)
	if e := h.Expire(900); len(e.Expired) != 0 || e.Next == 0 {
		t.Fatalf("Expire before the timeout = %+v; want nothing expired and a next deadline", e)
	}
	if !h.Touch(2, 900) {
		t.Fatal("Touch of a live session = false")
	}
	e := h.Expire(1100)
	if !slices.Equal(e.Expired, []int64{1}) {
		t.Fatalf("Expire at 1100 = %v; want session 1 (2 was touched at 900)", e.Expired)
	}
	if h.Touch(1, 1100) {
		t.Fatal("Touch of a closing session = true; want false (it is being closed)")
	}
	if e := h.Expire(1200); len(e.Expired) != 0 || len(e.Again) != 0 {
		t.Fatalf("Expire at 1200 = %+v; want session 1 handed out once", e)
	}
	// Its closeSession was dropped: it goes again after recloseTicks.
	if e := h.Expire(1100 + recloseTicks*hkTick); !slices.Equal(e.Again, []int64{1}) {
		t.Fatalf("Expire after recloseTicks: Again = %v; want [1]", e.Again)
	}
	if end := h.Applied(&txn.Txn{Type: jute.OpCloseSession, SessionID: 1}, jute.OK, 1, 1700); end != Ended {
		t.Fatalf("Applied(closeSession) = %v; want Ended", end)
	}
	if e := h.Expire(1100 + 3*recloseTicks*hkTick); slices.Contains(e.Again, 1) || slices.Contains(e.Expired, 1) {
		t.Fatalf("Expire after the close applied = %+v; want session 1 gone", e)
	}
}

// A follower reports the sessions heard from, once each; a new leader
// gives every session of the state a full timeout from its take-over.
func TestHousekeeperFollowAndTakeOver(t *testing.T) {
	h := NewHousekeeper(hkTick, true, 0)
	sessions := map[int64]txn.SessionInfo{3: {TimeoutMs: 1000}, 5: {TimeoutMs: 1000}}
	h.Track(sessions, 0)
	h.Touch(5, 10)
	h.Touch(3, 20)
	h.Touch(5, 30)
	if got := h.Follow(); !slices.Equal(got, []int64{3, 5}) || h.Leading() {
		t.Fatalf("Follow = %v, leading %v; want [3 5], not leading", got, h.Leading())
	}
	if got := h.Follow(); len(got) != 0 {
		t.Fatalf("second Follow = %v; want nothing new", got)
	}
	h.TakeOver(sessions, 5000)
	if !h.Leading() {
		t.Fatal("not leading after TakeOver")
	}
	if e := h.Expire(5900); len(e.Expired) != 0 {
		t.Fatalf("Expire within a timeout of the take-over = %v; want none", e.Expired)
	}
	if e := h.Expire(6200); !slices.Equal(e.Expired, []int64{3, 5}) {
		t.Fatalf("Expire a timeout after the take-over = %v; want [3 5]", e.Expired)
	}
	// Another server's report keeps a session alive on the leader.
	h.Track(sessions, 7000)
	h.Activity([]int64{3}, 7900)
	if e := h.Expire(8200); !slices.Equal(e.Expired, []int64{5}) {
		t.Fatalf("Expire after a report for 3 = %v; want [5]", e.Expired)
	}
}

// A session moving here is tracked afresh if the tracker missed it, or if
// a former leader's tracker still marks it closing; the leader refuses a
// session it is closing.
func TestHousekeeperTouchMoved(t *testing.T) {
	h := NewHousekeeper(hkTick, true, 0)
	if !h.TouchMoved(9, 1000, false, 0) {
		t.Fatal("TouchMoved of a session the tracker missed = false; want it tracked")
	}
	h.Expire(1200) // as a leader: 9 is closing
	if h.TouchMoved(9, 1000, true, 1200) {
		t.Fatal("TouchMoved on the leader of a session it is closing = true")
	}
	if !h.TouchMoved(9, 1000, false, 1300) {
		t.Fatal("TouchMoved on a follower of a session a former leader's tracker marks closing = false")
	}
}

// Applied says which session's connection ends here, and tracks only
// sessions whose createSession succeeded.
func TestHousekeeperApplied(t *testing.T) {
	h := NewHousekeeper(hkTick, false, 0)
	for _, tc := range []struct {
		name string
		t    *txn.Txn
		err  jute.Code
		want SessionEnd
	}{
		{"moved away", &txn.Txn{Type: txn.OpSetOwner, SessionID: 4, Body: &txn.SetOwnerTxn{Owner: 2}}, jute.OK, Moved},
		{"moved here", &txn.Txn{Type: txn.OpSetOwner, SessionID: 4, Body: &txn.SetOwnerTxn{Owner: 1}}, jute.OK, Keep},
		{"failed move", &txn.Txn{Type: txn.OpSetOwner, SessionID: 4, Body: &txn.SetOwnerTxn{Owner: 2}}, jute.SessionExpired, Keep},
		{"closed", &txn.Txn{Type: jute.OpCloseSession, SessionID: 4}, jute.OK, Ended},
		{"created", createSession(6, 1000), jute.OK, Keep},
		{"failed create", createSession(7, 1000), jute.SessionExpired, Keep},
	} {
		if got := h.Applied(tc.t, tc.err, 1, 0); got != tc.want {
			t.Errorf("%s: Applied = %v, want %v", tc.name, got, tc.want)
		}
	}
	if e := h.Expire(2000); !slices.Equal(e.Expired, []int64{6}) {
		t.Fatalf("Expire = %v; want only the session whose createSession succeeded", e.Expired)
	}
}

// Cleanup lists empty containers (that had a child) and TTL nodes past
// their time, in path order, up to the limit.
func TestCleanup(t *testing.T) {
	st := txn.NewState(tree.New())
	mk := func(path string, owner, mtime int64) {
		t.Helper()
		// The parent's cversion goes to 1: a container's child was made.
		if _, err := st.Tree.CreateNode(path, nil, openACLs, owner, 1, 1, mtime); err != nil {
			t.Fatal(err)
		}
	}
	mk("/c2", tree.ContainerOwner, 0)
	mk("/c2/x", 0, 0)
	mk("/c1", tree.ContainerOwner, 0)
	mk("/c1/x", 0, 0)
	mk("/c0", tree.ContainerOwner, 0) // never had a child: kept
	mk("/ttl", tree.TTLOwner(500), 1000)
	mk("/young", tree.TTLOwner(5000), 1000)
	for _, p := range []string{"/c1/x", "/c2/x"} {
		if err := st.Tree.DeleteNode(p, 2); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := Cleanup(st, 2000, 0), []string{"/c1", "/c2", "/ttl"}; !slices.Equal(got, want) {
		t.Fatalf("Cleanup = %v, want %v", got, want)
	}
	if got, want := Cleanup(st, 2000, 2), []string{"/c1", "/c2"}; !slices.Equal(got, want) {
		t.Fatalf("Cleanup with limit 2 = %v, want %v", got, want)
	}
}

// Leaderless counts from the first check without a leader, and starts
// again once the server serves.
func TestHousekeeperLeaderless(t *testing.T) {
	h := NewHousekeeper(hkTick, true, 0)
	for _, step := range []struct {
		serving bool
		now     int64
		want    int64
	}{
		{true, 1000, 0},
		{false, 1100, 0}, // lost: counting starts
		{false, 1250, 150},
		{false, 1400, 300},
		{true, 1500, 0},
		{false, 1600, 0}, // lost again: counting starts again
		{false, 1650, 50},
	} {
		if got := h.Leaderless(step.serving, step.now); got != step.want {
			t.Fatalf("Leaderless(%v, %d) = %d, want %d", step.serving, step.now, got, step.want)
		}
	}
}
