package recipe

import "testing"

// Each new holder of a Mutex or leader of an Election gets a larger
// fencing token; none is held after Unlock or Resign.
func TestMutexAndElectionTokensGrow(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		a, b := NewMutex(newClient(t), root+"/lock", nil), NewMutex(newClient(t), root+"/lock", nil)
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		ta := a.Token()
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if ta <= 0 || b.Token() <= ta || a.Token() != 0 {
			t.Fatalf("tokens: first %d, second %d, released %d", ta, b.Token(), a.Token())
		}
		_ = b.Unlock(ctx)

		e1 := NewElection(newClient(t), root+"/election", []byte("1"), nil)
		e2 := NewElection(newClient(t), root+"/election", []byte("2"), nil)
		if err := e1.Campaign(ctx); err != nil {
			t.Fatal(err)
		}
		t1 := e1.Token()
		done := make(chan error, 1)
		go func() { done <- e2.Campaign(ctx) }()
		if err := e1.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, done, "second leader"); err != nil {
			t.Fatal(err)
		}
		if t1 <= 0 || e2.Token() <= t1 {
			t.Fatalf("election tokens %d then %d", t1, e2.Token())
		}
		_ = e2.Resign(ctx)
	})
}
