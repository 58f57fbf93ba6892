package replica

import (
	"errors"
	"slices"

	"github.com/zoohq/zoo/internal/txn"
)

// The core is the Replica stepped by method calls, as raft's RawNode is:
// Tick advances its logical clock, Step and StepSnapshot hand it what
// other members sent, Propose hands it a request, and Process does what
// is ready (send, persist, apply, prep). It starts no goroutine,
// reads no clock but Config.Now (txn times) and Config.Clock (metrics),
// and reaches the network only through Config.Transport's Send and
// SendStream: the running server and the simulator drive the same code.
// A running server's driver (driver.go) owns the goroutine, the ticker and
// the channels around it; only one goroutine may step a core.

// ErrBusy is returned by Propose when Config.MaxPending requests already
// wait to be prepped.
var ErrBusy = errors.New("replica: too many requests waiting")

// Start applies the bootstrap configuration or, after a restart, replays
// the committed log, and a sole voter campaigns at once: raft will not
// campaign with configuration changes pending, and a one-voter group need
// not wait out an election timeout. In a larger group a member that has
// just started waits for the leader's heartbeat or its own election
// timeout.
func (r *Replica) Start() error {
	if err := r.settle(); err != nil {
		return err
	}
	if slices.Equal(r.confState.Voters, []uint64{r.cfg.ID}) {
		if err := r.rn.Campaign(); err != nil {
			r.cfg.Logger.Error("raft campaign", "err", err)
		}
	}
	return nil
}

// Process handles every Ready raft has (see processReady), and preps (as
// leader) or forwards (as follower) the requests waiting, until nothing
// is left to do. An error means the log cannot be written: the replica
// must stop (Close) and nothing of the failed Ready was acknowledged.
func (r *Replica) Process() error {
	if r.lost != nil {
		return r.lost
	}
	for {
		if err := r.settle(); err != nil {
			return err
		}
		r.propose()
		if !r.rn.HasReady() {
			return nil
		}
	}
}

// turn is the driver's Process: it applies until enough says to stop
// (see applySome), so that a long backlog is applied across turns with
// ticks and messages handled in between, and reports whether work is
// left.
func (r *Replica) turn(enough func() bool) (more bool, err error) {
	if r.lost != nil {
		return false, r.lost
	}
	if more, err = r.processReady(enough); err != nil {
		return false, err
	}
	r.propose()
	return more || r.rn.HasReady(), nil
}

// Tick advances the core's logical clock by one tick (Config.Tick):
// raft's elections and heartbeats, request deadlines, and the watch on
// the leader.
func (r *Replica) Tick() {
	// Before raft's tick: at the end of each election timeout, raft's
	// quorum check clears every RecentActive, and a follower heard from
	// only since the last tick must still count as heard.
	r.trackPeers()
	r.rn.Tick()
	r.ticks.Add(1)
	r.expire()
	r.tickSyncs()
	r.lead.since++
	r.recordProgress()
	r.watchLeaderLink()
	r.tidyMembership()
	r.retryCompaction()
}

// Propose queues a request for prep; its outcome comes as an Event with
// the same tag from a later Process. A nonzero tag must be unique among
// this server's requests in flight.
func (r *Replica) Propose(req txn.Request, tag uint64) error {
	if len(r.waiting) >= r.cfg.MaxPending {
		return ErrBusy
	}
	r.waiting = append(r.waiting, proposal{req: req, tag: tag})
	return nil
}

// Step hands the core a message another member sent (Transport.Send's
// kind and data); what cannot be decoded is dropped.
func (r *Replica) Step(from uint64, kind uint8, data []byte) {
	if kind == KindActivity {
		r.activity(from, data)
		return
	}
	r.receive(inbound{from: from, kind: kind, data: data})
}

// activity passes on the sessions another server heard from.
func (r *Replica) activity(from uint64, data []byte) {
	ids, err := decodeActivity(data)
	if err != nil {
		r.cfg.Logger.Warn("dropping a peer message", "from", from, "err", err)
		return
	}
	if r.cfg.OnActivity != nil {
		r.cfg.OnActivity(ids)
	}
}

// Close fails every request still waiting (Dropped) and closes the log. A
// crash is simulated by dropping the core without Close.
func (r *Replica) Close() {
	r.dropAll()
	r.closeLog()
}

// Applied returns the index of the last entry applied (the last zxid).
func (r *Replica) Applied() uint64 { return r.applied }

// Ticks returns how many times Tick was called: the core's logical clock.
func (r *Replica) Ticks() uint64 { return r.ticks.Load() }

// Campaign makes this member start an election now, as raft's
// RawNode.Campaign does; tests and tools use it to choose the leader.
func (r *Replica) Campaign() error { return r.rn.Campaign() }
