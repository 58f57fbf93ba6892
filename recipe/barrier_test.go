package recipe

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Ref: recipes guide, "Double Barriers": no one returns from Enter before
// threshold participants entered, no one returns from Leave before all
// left. The last participant is held back until the others are waiting,
// so a barrier that let them through early would be caught.
func TestDoubleBarrier(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		const n = 5
		waiting := make(chan string, 10*n)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		var entered, left atomic.Int32
		lastEnter, lastLeave := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			b := NewDoubleBarrier(newClient(t), dir, fmt.Sprintf("p%d", i), n, nil)
			wg.Go(func() {
				if i == n-1 {
					<-lastEnter
				}
				entered.Add(1)
				if err := b.Enter(ctx); err != nil {
					t.Error(err)
					return
				}
				if got := entered.Load(); got != n {
					t.Errorf("p%d passed Enter with %d entered, want %d", i, got, n)
				}
				if i == n-1 {
					<-lastLeave
				}
				left.Add(1)
				if err := b.Leave(ctx); err != nil {
					t.Error(err)
					return
				}
				if got := left.Load(); got != n {
					t.Errorf("p%d returned from Leave with %d leaving, want %d", i, got, n)
				}
			})
		}
		awaitDistinct(t, waiting, n-1, "participants waiting in Enter")
		close(lastEnter)
		awaitDistinct(t, waiting, n-1, "participants waiting in Leave")
		close(lastLeave)
		wg.Wait()
	})
}

// awaitDistinct waits for k distinct names on ch.
func awaitDistinct(t *testing.T, ch <-chan string, k int, what string) {
	t.Helper()
	ctx := testCtx(t)
	seen := map[string]bool{}
	for len(seen) < k {
		seen[waitCh(t, ctx, ch, what)] = true
	}
}
