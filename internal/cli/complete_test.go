package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Completion under a node whose list of children exceeds the frame
// limit does not cost the connection or the session: it just does not
// complete.
func TestCompleteHugeDirectoryKeepsSession(t *testing.T) {
	t.Parallel()
	s := newShell(t, startZoo(t))
	if s.execute([]string{"create", "/big"}) != exitOK {
		t.Fatal("create /big failed")
	}
	const n, batch = 200_000, 2000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := 0; i < n; i += batch {
		ops := make([]zk.Op, 0, batch)
		for j := i; j < i+batch; j++ {
			ops = append(ops, zk.CreateOp(fmt.Sprintf("/big/child-%07d", j), nil, zk.Persistent, zk.OpenACLUnsafe()))
		}
		if _, err := s.client.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	id := s.client.SessionID()
	if _, _, ok := s.complete("ls /big/child-00", 16); ok {
		t.Fatal("completed among 200k children")
	}
	if st := s.client.State(); st != zk.StateConnected || s.client.SessionID() != id {
		t.Fatalf("state %v, session 0x%x (was 0x%x)", st, s.client.SessionID(), id)
	}
	if ok, _, err := s.client.Exists(ctx, "/big"); err != nil || !ok {
		t.Fatalf("exists after completion: %v, %v", ok, err)
	}
}
