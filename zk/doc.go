// Package zk is a client for ZooKeeper's protocol: it talks to Zoo and to
// Apache ZooKeeper 3.5 and later.
//
// # Sessions
//
// Connect opens a session with one server of an ensemble and returns a
// Client, which keeps the session alive on its own. It pings a server it
// has sent nothing to for a third of the session timeout, and gives up on
// a server it has not heard from for two thirds of it (paper section 4.4);
// it then moves to the next server in its (shuffled) list and reattaches
// the session with its id, password and the last zxid it has seen. The
// session, its ephemeral nodes and its watches survive the move.
//
// State reports where the session stands, and WithStateCallback reports
// every change: Connecting, Connected (or ConnectedReadOnly), then
// Disconnected and Connecting again each time a connection breaks. Three
// states are final: Expired (the server expired the session; the client
// learns it when it reconnects), AuthFailed (a server rejected the
// credentials) and Closed. After them the Client is dead: Done is closed,
// Err says why, every call fails with that error and every watch ends.
//
// # Calls
//
// Every operation of the protocol has a synchronous method, which takes a
// context and waits for the reply, and an asynchronous one (…Async),
// whose callback runs on the Client's callback goroutine. Callbacks run
// one at a time, in the order the calls were made, as in the Java client.
// Any number of calls may be in flight on one connection (up to
// WithMaxInFlight); no lock is held while the network is used.
//
// A call that was in flight when its connection broke fails with
// ErrConnectionLoss: it may or may not have taken effect, and the client
// does not send it again. Calls made while the client is between
// connections wait for the next one. Once the session has ended calls
// fail at once with ErrSessionExpired, ErrAuthFailed or ErrClosed.
//
// Errors from calls are *Error values naming the operation and path; each
// ZooKeeper error code has a sentinel (ErrNoNode, ErrBadVersion, ...) to
// test with errors.Is. Context errors are returned unchanged.
//
// # Watches
//
// GetW, ExistsW and ChildrenW set one-time watches: each returns a channel
// that receives one Event, for the next change, and is then closed.
// AddWatch sets a persistent watch (optionally recursive), whose channel
// receives every change until the watch is removed. Watches are kept
// across reconnections: the client registers them again with the last
// zxid it saw, and the server sends the one-time watches the events they
// missed. (A node created and deleted while the client was away goes
// unnoticed, as with every ZooKeeper client.) The server does not replay
// what persistent watches missed, so their channels also carry
// EventSession events: StateDisconnected when a connection is lost and
// StateConnected when the session is back, the cue to re-read.
//
// Events go to channels as soon as they arrive, ahead of any later reply:
// when a call returns data newer than a change a watch was waiting for,
// the watch's event is already in its channel (paper section 2.3).
//
// When a watch ends for a reason other than its node changing, its last
// event has type EventNotWatching and an Err: ErrSessionExpired,
// ErrAuthFailed, ErrClosed, or ErrWatchOverflow. The last means the
// consumer of a persistent watch let its channel fill up (WithWatchBuffer):
// the client does not buffer without bound and does not drop events
// silently, so it ends the watch and says so. One-time watches cannot
// overflow. RemoveWatch and RemoveWatches end watches with an
// EventDataWatchRemoved, EventChildWatchRemoved or
// EventPersistentWatchRemoved event.
//
// Watch is AddWatch for a watch that lives as long as a context, as
// etcd's Watch(ctx): when the context ends the watch is removed.
//
// # Recipes' building blocks
//
// CreateProtected names a node as Curator's withProtection does
// ("_c_<uuid>-name") and, after a lost reply, finds the node it made
// instead of making a second one. CreateParents creates missing
// ancestors as container nodes (persistent ones on servers without
// containers); CreateContainer makes one container.
//
// # Servers
//
// Ruok, Srvr, Cons and Mntr send a four-letter word to a server and
// parse its answer. WithDNSHostProvider makes the client resolve the
// connect string's names again each round, so it follows servers that
// come back at new addresses; WithHostProvider takes any HostProvider.
//
// # Chroot
//
// A connect string may end in a path ("zk1:2181,zk2:2181/app"): the
// client then works below it, and every path in calls, results, errors
// and events is relative to it.
package zk
