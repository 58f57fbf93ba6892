// Package server is the client edge of a Zoo server: it accepts client
// connections, runs each session's requests through a FIFO pipeline (reads
// from the local replica, writes through replica's prep and raft), delivers
// watch events, expires sessions, removes empty containers and expired TTL
// nodes, and answers four-letter words.
//
// Goroutines: one accept loop; per connection a reader while it is busy
// (an idle plaintext one is parked with the idle poller, one goroutine for
// them all, on Linux; an idle TLS one rests in a fresh goroutine: rest.go)
// and a writer while it has frames to write; one loop for session expiry
// and container cleanup; the replica's loop. Each is started through
// Server.goroutine and ended by Shutdown.
//
// # The life of a request
//
// A connection's reader takes a throttling token (globalOutstandingLimit;
// it stops reading while none is free), reads one frame and makes it a
// request (request.go), which holds the token from then on. A read with
// none of its session's writes in flight is answered at once from the
// replica's state; otherwise it waits in the registry (registry.go), in
// its connection's FIFO, and is answered in the apply of the last write
// sent before it, from the state that write left. A write, sync or a
// handshake's session txn is registered under a tag and submitted; the
// replica's event with that tag (onApply: Applied, Synced or Dropped)
// takes it out of the registry and completes it, and then releases the
// reads behind it. Every request ends exactly once, by complete (a reply)
// or fail (no reply; the connection closes, so its client sees
// ConnectionLoss), and its token is given back there and nowhere else: a
// write that cannot be submitted fails at once; a closed connection fails
// its waiting reads, and its writes end with their events, their replies
// going nowhere; Shutdown, once the replica has stopped and reported
// everything it took as Dropped, fails what is left (failLeft).
//
// # The request path, and what the simulator runs
//
// Core (core.go) is the part of the request path with no socket,
// goroutine or wall clock: the registry, the watch registry, the reads
// (read.go, over an Endpoint: its id, session and auth ids), reply and
// event encoding, request completion and the replica's Applied, Synced
// and Dropped events. It reaches a connection only through Endpoint,
// which conn implements (endpoint.go). Housekeeper (housekeeper.go) is
// the part of housekeeping with no goroutine or clock: session expiry and
// its retry, activity reports, a new leader's take-over, container and
// TTL cleanup, which session's connection ends when a session txn
// applies, and how long the server has had no leader (checkQuorum); the
// housekeeping goroutine and onApply carry out what it decides. internal/sim runs Core and Housekeeper in every simulated
// member over simulated connections and a simulated clock; it does not
// run conn.go, connread.go, outq.go, the handshake's checks, the
// housekeeping goroutine's timers, read-only mode or catchup.go.
//
// # Locks
//
// Taken in this order, never the other way: the replica's state lock
// (write-held in onApply for an applied txn, read-held in a rep.Read
// callback), Server.ro.mu, Server.mu, then the leaves, which take no other
// lock: Server.smu (the Housekeeper and the session ids), registry.mu,
// conn.authMu, an outq's mu, the watch registry's and the stats' locks. A request is never completed under a
// leaf lock: the registry hands requests back and the caller completes
// them after its lock is released.
package server
