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
// session left, no session left once its client went quiet (it expired),
// no connection of an ended session left open, and watch events checked
// against a naive model of the watches each client holds (watches.go):
// one-time data, exist and child watches (getData, exists, getChildren
// and getChildren2), persistent and persistent-recursive ones (addWatch),
// taken off with removeWatches and probed with checkWatches. Walking the
// triggers its member applied, in order, the client knows the events it
// is owed: each event must be the next one owed (none extra, none lost,
// zxid order), every reply must come after the events of the changes it
// saw, and across a reconnect the setWatches2 must fire exactly what
// Apache's DataTree.setWatches fires for the changes the client missed
// (by mzxid, existence and pzxid; nothing for persistent watches, which it
// registers again).
//
// What runs where. Each member runs internal/server's request path,
// server.Core: its clients send jute request frames to Core.Handle (and
// handshakes to Core.Connect), and get back the frames it encodes; the
// Core's registry holds writes by tag and reads behind their session's
// writes, completes each request once, fires watches before the reply,
// and consumes the replica's Applied, Synced and Dropped events. Reads
// (getData, exists, getChildren, addWatch, removeWatches, checkWatches,
// setWatches) are answered by the Core's own read handlers
// (internal/server/read.go), the ones the Server's connections call, with
// watches registered in the Core's registry only when Apache would. A
// client that moves its session to another member re-registers its
// watches with a SetWatches2 frame right behind the handshake (relative
// zxid: the last a reply brought it), as Apache's client does, and the
// events owed for changes it missed are checked to arrive.
// Housekeeping decisions are server.Housekeeper's, the Server's own:
// session expiry on the leader (with the closeSession proposed again when
// it did not apply), activity reports from the others, a new leader's
// take-over, the tracking of moved sessions, container and TTL cleanup,
// which session's connection ends when a createSession, setOwner or
// closeSession applies, and how long a member has served no clients (no
// leader, or out of the membership: past an election timeout it drops
// its clients, as checkQuorum does); the member carries them out on the
// simulated clock. So the checks cover the server's reply matching, FIFO,
// completion, reads, watch firing and re-registration, and expiry too
// (TestMutations plants defects there).
//
// Whom a member takes messages from is internal/peer's rule with
// internal/server's Admit (member.go, accepts): the servers of the
// membership it last applied (or, joining with an empty log, the
// membership in force, from its zoo.cfg), the servers a reconfig removed
// that raft still replicates to (they linger as learners), and, if it
// started from a log it wrote before or has since applied a quorum's
// state, any server. The network is a model, not the peer transport: a
// message from a server the member takes goes both ways, as the
// transport answers an admitted server over the link it opened, and a
// smaller leader's nudge (a dial after up to Backoff.Max) takes no time.
//
// What the simulator does not run: the parts of internal/server bound to
// sockets, goroutines and the wall clock. Not its connection reader and
// writer (conn.go, connread.go, outq.go: framing, throttling tokens, the
// out-queue's limits, auth, SASL, read-only mode, the handshake's checks
// such as the refusal of a client whose zxid is ahead, which the
// simulated client applies itself); not the housekeeping goroutine's
// timers (the member calls the Housekeeper every 5 ticks, its cleanup
// every 20, with no per-minute limit), read-only mode, or memory release.
// On a snapshot from the leader a member drops its client connections,
// where the Server keeps them and rebases their watches (catchup.go).
// A removeWatches of one watcher type takes half of a persistent watch
// away (Apache 3.8 keeps one in each of its tables); the client still
// lists such a watch in its setWatches, and the server registers it whole
// again, as Apache's does.
//
// ACLs (auth.go): each client has one identity for good, given to the
// request path as its connection's auth ids (no addauth or SASL is run):
// two are the super user (one of them sends the reconfigs), one is the
// digest user that owns the guarded keys, one another digest user. Each
// key's ACL is fixed by its path (/k1: its owner only; /k2: anyone reads,
// its owner writes; /k0 open), so the linearizability model knows where
// NoAuth is due, in Apache's order of checks (node, then ACL, then
// version; a delete or create needs the open root's permission only), and
// the watch model withholds the events of a node the client may not read,
// using up its one-time watches all the same, as Apache does. ACLs are
// never changed (no setACL) and every other node is open.
package sim
