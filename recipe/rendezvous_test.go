package recipe

import (
	"errors"
	"testing"

	"github.com/zoohq/zoo/zk"
)

// Ref: paper section 2.4, "Rendezvous": workers wait for the master to fill
// in the rendezvous node, and learn of a master that fails first.
func TestRendezvous(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		starter, master, worker := newClient(t), newClient(t), newClient(t)
		rz, err := NewRendezvous(ctx, starter, dir+"/rz", zk.Persistent, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			data, err := Await(ctx, worker, rz.Path())
			if err != nil {
				t.Errorf("Await: %v", err)
			}
			got <- data
		}()
		if err := Fill(ctx, master, rz.Path(), nil); err == nil {
			t.Error("Fill with empty info accepted")
		}
		if err := Fill(ctx, master, rz.Path(), []byte("master at 10.0.0.1:9000")); err != nil {
			t.Fatal(err)
		}
		if v := waitCh(t, ctx, got, "worker to learn the master"); string(v) != "master at 10.0.0.1:9000" {
			t.Fatalf("worker got %q", v)
		}
		if err := rz.Close(ctx); err != nil {
			t.Fatal(err)
		}

		// An ephemeral rendezvous ends with its creator's session, and a
		// waiting worker hears of it instead of waiting forever.
		owner := newClient(t)
		eph, err := NewRendezvous(ctx, owner, dir+"/eph", zk.Ephemeral, nil)
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := Await(ctx, worker, eph.Path())
			errc <- err
		}()
		if err := owner.Close(); err != nil {
			t.Fatal(err)
		}
		if err := waitCh(t, ctx, errc, "worker to hear the rendezvous is gone"); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("Await after the creator left: %v; want ErrNoNode", err)
		}
	})
}
