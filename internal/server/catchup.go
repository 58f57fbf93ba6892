package server

import (
	"sync/atomic"

	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/watch"
)

// snapshotInstalled follows a follower's install of its leader's snapshot
// (replica.Restored; ev.State and ev.Prev are write-locked). The state
// jumped from ev.Prev at ev.PrevZxid to ev.State at ev.Zxid without
// applying the changes in between, one by one. The clients stay
// connected, as Apache's do (its leader never re-syncs a connected
// follower mid-stream): the server does what each client's reconnection
// would do.
//   - A session the new state no longer has expired or was closed in
//     between: its connection closes, and the client's next attempt is
//     told so (SessionExpired).
//   - Every one-time watch is re-evaluated as setWatches with the last
//     zxid before the jump would (watch.Registry.Rebase): the events the
//     skipped changes owe fire now, before any read of the new state.
//   - Requests in flight were failed (Dropped) by the replica before the
//     jump, and their connections closed: what they waited for may be
//     inside the snapshot, unseen; ConnectionLoss allows either outcome.
//
// Session expiry is tracked afresh from the new state's sessions.
func (s *Server) snapshotInstalled(ev replica.Event) {
	s.catchup.installs.Add(1)
	// The membership may have changed in between: the peers (whom the
	// transport takes messages from) and whether this server is still a
	// member follow the snapshot's, as they follow an applied reconfig.
	if membership, _, err := ev.State.Tree.Get(tree.ConfigPath); err == nil {
		s.reconfigured(membership)
	}
	s.trackSessions(ev.State)
	var gone []*conn
	s.mu.Lock()
	for sid, c := range s.bySess {
		if _, ok := ev.State.Sessions[sid]; !ok {
			gone = append(gone, c)
			s.forgetSessionConn(sid)
		}
	}
	s.mu.Unlock()
	for _, c := range gone {
		s.log.Info("the snapshot from the leader ends the session; closing its connection",
			"session", sessionHex(c.sessionID()))
		s.watches.RemoveWatcher(watch.Watcher(c.id))
		c.out.finish(nil)
	}
	ds := s.watches.Rebase(ev.PrevZxid, ev.Zxid, ev.Prev.Tree, ev.State.Tree)
	s.catchup.events.Add(int64(len(ds)))
	for _, d := range ds {
		// No ACL check, as for setWatches (see watch.Registry.SetWatches).
		if c := s.conn(uint64(d.Watcher)); c != nil {
			c.send(eventFrame(d.Event.Type, d.Event.Path))
		}
	}
	s.log.Info("installed a snapshot from the leader; clients kept",
		"from", ev.PrevZxid, "to", ev.Zxid, "sessions_ended", len(gone), "watch_events", len(ds))
}

// catchupStats counts the snapshots installed from the leader and the
// watch events they fired.
type catchupStats struct {
	installs, events atomic.Int64
}
