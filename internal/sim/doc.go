// Package sim is Zoo's deterministic simulator: it runs N whole members
// (the replica core of internal/replica with txn prep and apply, on the
// wal and snap code over vfs.MemFS disks) and simulated clients in one
// goroutine, over a simulated network and clock, and injects faults:
// message delay, loss, duplication and reordering, partitions (one-way
// too), crashes (unsynced writes lost, torn writes), fsync errors, a full
// disk, bit rot in snapshots and log segments (the last one too), pauses
// and clock jumps.
//
// One seeded math/rand/v2 source drives everything, so a seed always
// gives the same history: Run(Options{Seed: n}) twice yields the same
// Result.Hash. After every run the history is checked (check.go):
// linearizability of writes and of sync+read (porcupine), FIFO order per
// session, zxids that never go backwards for a client, the same state
// digest on every member at every applied index (which is also how an
// acknowledged write lost in a crash shows), no ephemeral of an ended
// session left, and watch events that match a change, come in zxid order
// and are not lost while the client stays connected.
//
// What the simulator does not run: internal/server. Its connection,
// pipeline and throttling code is bound to sockets and goroutines, so
// the simulator has a small server layer of its own (member.go) that does
// what internal/server/apply.go and session.go do with the replica's
// events: replies by tag, watch firing through watch.Registry, session
// expiry with session.Tracker on the leader, activity reports, container
// and TTL cleanup, and session moves (setOwner) on reconnect.
package sim
