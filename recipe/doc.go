// Package recipe implements the coordination recipes of the ZooKeeper
// paper (section 2.4) and of the recipes guide ("ZooKeeper Recipes and
// Solutions") on top of the public client, package zk.
//
// The primitives:
//
//   - Mutex: exclusive lock, FIFO, no herd effect ("Locks").
//   - Election: leader election with Resign, no herd effect.
//   - DoubleBarrier: Enter/Leave with a threshold ("Double Barriers").
//   - Queue and PriorityQueue: Put, blocking Take ("Queues").
//   - RWMutex: shared/exclusive lock ("Shared Locks"); Revoke, Holders and
//     the Revoked channels make it revocable ("Revocable Shared Locks").
//   - Group: membership with a live member list (Watch).
//   - PublishConfig and ConfigWatcher: configuration behind the "ready"
//     znode (paper section 2.3).
//   - Counter: shared integer, compare-and-set on the node version.
//   - Semaphore: at most n holders.
//   - Barrier: single barrier.
//   - BeginTxn and Vote: two-phase commit ("Two-phased Commit").
//
// And Curator's recipes, with Curator 5's node layout and naming, so that
// they work together with Java processes running Curator on the same
// paths (see curator.go):
//
//   - InterProcessMutex: reentrant lock.
//   - LeaderLatch (listeners, Observe) and LeaderSelector (requeue).
//   - InterProcessSemaphoreV2: leases.
//   - SharedCount: shared 32-bit integer with listeners.
//   - CuratorCache and NodeCache: a local copy of a subtree or a node,
//     kept current with persistent watches, rebuilt after reconnects and
//     (WithSessionRenewal) session expiry.
//   - PersistentNode and PersistentTtlNode.
//   - ServiceDiscovery: ServiceInstance JSON as Curator writes it.
//   - DistributedDelayQueue.
//
// Lock and leadership holders get a FencingToken that a downstream store
// can check to refuse a holder that lost its lock without knowing it.
//
// Every primitive works under a directory znode of its own, created on
// first use; the lock-like ones (Mutex, Election, RWMutex, Semaphore and
// the Curator recipes) create it as a container node, which the server
// removes once its last contender has gone (a persistent node on servers
// without containers). Every blocking call takes a context and waits on watches,
// never by polling.
//
// # Herd effect
//
// Where the guide avoids the herd effect, so does this package: a Mutex,
// an Election, a RWMutex and a DoubleBarrier's Leave make each waiter
// watch only the one node whose removal can let it proceed, so releasing
// a lock wakes exactly one waiter. Queue, Semaphore, Barrier and the
// double barrier's Enter watch a shared node, as the guide does.
//
// # Recoverable errors
//
// A create of a sequential node whose reply is lost (zk.ErrConnectionLoss)
// may or may not have taken effect, and its name is unknown. Every
// sequential node made here therefore carries a random GUID in its name
// ("<guid>-lock-0000000007"); after a lost reply the recipe lists the
// directory and adopts its node if the create took effect, instead of
// leaving an orphan that would block everyone behind it. Other calls that
// fail with zk.ErrConnectionLoss are idempotent here and are retried: the
// client waits for its next connection.
//
// # Session loss
//
// Holding a lock or leadership is tied to an ephemeral node, hence to
// the session. When the node disappears or the session ends (expired,
// closed), the holder's Done channel is closed and Err returns ErrLost.
// A primitive never reports "held" after the client has learned of the
// loss. Note that a client learns of the expiry of its session only when
// it reconnects (paper section 4.4): while disconnected, a holder cannot
// know whether the server has already expired it, so a careful holder
// also stops work when its own connection is down for longer than the
// session timeout.
package recipe
