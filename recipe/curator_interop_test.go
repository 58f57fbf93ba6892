package recipe

import (
	"testing"
	"time"
)

// A Go InterProcessMutex and a Java (Curator) InterProcessMutex on the
// same path exclude each other, in both orders.
func TestCuratorInteropMutex(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/lock"
		java := newCuratorPeer(t)
		m := NewInterProcessMutex(newClient(t), dir, nil)

		java.do("lock "+dir, "locked")
		got := make(chan error, 1)
		go func() { got <- m.Acquire(ctx) }()
		waitParticipants(t, ctx, m, 2)
		select {
		case err := <-got:
			t.Fatalf("Go acquired while Java holds the lock (err %v)", err)
		default:
		}
		java.do("unlock", "unlocked")
		if err := waitCh(t, ctx, got, "Go Acquire after Java's release"); err != nil {
			t.Fatal(err)
		}

		java.send("lock " + dir)
		waitParticipants(t, ctx, m, 2)
		java.nothing(500 * time.Millisecond) // Java waits behind Go
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
		java.expect("locked")
		java.do("unlock", "unlocked")
	})
}

// A Go and a Java LeaderLatch on the same path elect one leader, and
// leadership passes between them.
func TestCuratorInteropLeaderLatch(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/latch"
		java := newCuratorPeer(t)
		java.do("latch "+dir+" java", "started")
		java.expect("leader java")
		g, r := startLatch(t, newClient(t), dir, "go")
		if !pollFor(ctx, func() bool { ps, err := g.Participants(ctx); return err == nil && len(ps) == 2 }) {
			t.Fatal("Go latch never joined")
		}
		if l, err := g.Leader(ctx); err != nil || l.ID != "java" || g.HasLeadership() {
			t.Fatalf("Leader = %v, %v; Go leads %v", l, err, g.HasLeadership())
		}
		java.do("unlatch", "closed") // Curator's default close is silent
		if err := g.Await(ctx); err != nil {
			t.Fatal(err)
		}
		r.waitFor(t, ctx, true)
		java.do("latch "+dir+" java2", "started")
		if got := java.do("leader", "leaderis"); got != "go" {
			t.Fatalf("Java sees leader %q, want go", got)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		java.expect("leader java2")
	})
}

// A Go and a Java InterProcessSemaphoreV2 share the leases of one path.
func TestCuratorInteropSemaphoreV2(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/sem"
		java := newCuratorPeer(t)
		s := NewInterProcessSemaphoreV2(newClient(t), dir, 2, nil)
		java.do("sem "+dir+" 2", "leased")
		l1, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		var l2 *Lease
		go func() {
			var err error
			l2, err = s.Acquire(ctx)
			got <- err
		}()
		if !pollFor(ctx, func() bool { ps, err := s.ParticipantNodes(ctx); return err == nil && len(ps) == 3 }) {
			t.Fatal("third lease never queued")
		}
		select {
		case err := <-got:
			t.Fatalf("a third lease was granted (err %v)", err)
		default:
		}
		java.do("unsem", "returned")
		if err := waitCh(t, ctx, got, "Go lease after Java returned its"); err != nil {
			t.Fatal(err)
		}
		java.send("sem " + dir + " 2")
		java.nothing(500 * time.Millisecond) // both leases are Go's
		if err := l1.Close(ctx); err != nil {
			t.Fatal(err)
		}
		java.expect("leased")
		if err := l2.Close(ctx); err != nil {
			t.Fatal(err)
		}
		java.do("unsem", "returned")
	})
}

// A Java SharedCount's update reaches a Go SharedCount's listener.
func TestCuratorInteropSharedCount(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/count"
		s := NewSharedCount(newClient(t), p, 1, nil)
		heard := make(chan int32, 10)
		s.AddListener(func(v int32) { heard <- v })
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		java := newCuratorPeer(t)
		if got := java.do("count "+p+" 42", "counted"); got != "42" {
			t.Fatalf("Java count %s", got)
		}
		if got := waitCh(t, ctx, heard, "Go listener"); got != 42 {
			t.Fatalf("Go heard %d", got)
		}
	})
}

// Go finds the instances Java registers, and Java finds Go's; the JSON
// Go writes is byte for byte the JSON Curator writes.
func TestCuratorInteropServiceDiscovery(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, base := testCtx(t), testRoot(t)+"/services"
		java := newCuratorPeer(t)
		javaJSON := java.do("register "+base+" api j1 10.0.0.1 8080", "registered")
		d := NewServiceDiscovery(newClient(t), base, nil)
		insts, err := d.QueryForInstances(ctx, "api")
		if err != nil || len(insts) != 1 || insts[0].ID != "j1" || insts[0].Address != "10.0.0.1" || *insts[0].Port != 8080 {
			t.Fatalf("Go sees %+v, %v", insts, err)
		}
		if again, err := MarshalInstance(insts[0]); err != nil || string(again) != javaJSON {
			t.Fatalf("Go writes\n%s\nCurator wrote\n%s", again, javaJSON)
		}
		g := NewServiceInstance("api", "10.0.0.2", 9090)
		g.ID = "g1"
		g.UriSpec = ParseUriSpec("{scheme}://foo.com:{port}")
		if err := d.RegisterService(ctx, g); err != nil {
			t.Fatal(err)
		}
		got := java.do("query "+base+" api", "instances")
		if got != "g1@10.0.0.2:9090 j1@10.0.0.1:8080" && got != "j1@10.0.0.1:8080 g1@10.0.0.2:9090" {
			t.Fatalf("Java sees %q", got)
		}
	})
}

// Items put by Java's DistributedDelayQueue are taken by Go's when due,
// and the other way round: the node names and item encoding agree.
func TestCuratorInteropDelayQueue(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/queue"
		java := newCuratorPeer(t)
		q := NewDistributedDelayQueue(newClient(t), dir, nil)
		start := time.Now()
		java.do("delayput "+dir+" from-java 700", "put")
		it, err := q.Take(ctx)
		if err != nil || string(it) != "from-java" {
			t.Fatalf("Go took %q, %v", it, err)
		}
		if time.Since(start) < 700*time.Millisecond {
			t.Fatal("Go took Java's item before it was due")
		}
		if err := q.Put(ctx, []byte("from-go"), time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := java.do("delaytake "+dir, "took"); got != "from-go" {
			t.Fatalf("Java took %q", got)
		}
	})
}
