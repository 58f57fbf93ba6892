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
// What runs where. Each member runs internal/server's request path,
// server.Core: its clients send jute request frames to Core.Handle (and
// handshakes to Core.Connect), and get back the frames it encodes; the
// Core's registry holds writes by tag and reads behind their session's
// writes, completes each request once, fires watches before the reply,
// and consumes the replica's Applied, Synced and Dropped events. So the
// checks cover the server's reply matching, FIFO, completion and watch
// firing too (TestMutations plants defects there).
//
// Whom a member takes messages from is internal/peer's rule with
// internal/server's Admit (member.go, accepts): the servers of the
// membership it last applied (or, joining with an empty log, the
// membership in force, from its zoo.cfg) and, if it started from a log
// it wrote before or has since applied a quorum's state, any server. The network is a model, not the peer
// transport: a message from a server the member takes goes both ways, as
// the transport answers an admitted server over the link it opened, and
// a smaller leader's nudge (a dial after up to Backoff.Max) takes no time.
//
// What the simulator does not run: the rest of internal/server, which is
// bound to sockets and goroutines. Not its connection reader and writer
// (conn.go, connread.go, outq.go: framing, throttling tokens, the
// out-queue's limits, auth, SASL, read-only mode, the handshake's
// checks); not its reads (read.go takes a *conn: each member answers
// getData and getChildren with a ReadFunc of its own, registering watches
// in the Core's registry); and not its housekeeping: session expiry with
// session.Tracker on the leader (with Reclose), activity reports,
// container and TTL cleanup, and the closing of a session's connection
// when the session ends or moves away are done in member.go, as
// internal/server/session.go and housekeeping.go do them, on the
// simulated clock. Clients do not re-register watches (setWatches) after
// a reconnect.
package sim
