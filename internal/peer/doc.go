// Package peer is the server-to-server TCP transport of a Zoo ensemble.
//
// It carries opaque messages, a kind byte and a payload, between the servers
// of an ensemble: raft messages, client writes forwarded to the leader and
// their results, session activity. What the bytes mean is the replica
// layer's business; peer only moves them, checks them and bounds them.
//
// # Links
//
// Each pair of servers shares one TCP connection, the link, used in both
// directions. To avoid two links racing each other, the server with the
// larger id dials and the smaller one only accepts. A smaller-id server
// therefore queues messages for a larger peer until that peer dials in. A
// new link from a peer that already has one replaces the old link: the peer
// restarted, or saw the old link die before we did.
//
// Every peer has a bounded outbound queue. Send never blocks: when the queue
// is full, or the peer is unknown, it drops the message and returns false so
// that raft can ReportUnreachable. A slow peer thus costs at most QueueSize
// messages of memory. Messages queued while no link exists are sent when one
// comes up; those queued when a link breaks may be lost, which raft tolerates.
//
// One goroutine per peer owns its link: it dials (with exponential backoff
// and jitter) or waits for the peer to dial in, then writes queued frames in
// batches through a bufio.Writer, flushing once the queue is empty, under a
// write deadline, so that a stuck peer is cut off and reconnected instead of
// blocking forever. A second goroutine per link reads frames and hands them
// to Config.Handler in arrival order. Both sides send a heartbeat frame when
// they have sent nothing for HeartbeatInterval, and close a link on which
// nothing arrived for IdleTimeout.
//
// A server whose larger peer has not dialed in for a while dials that
// peer itself (a nudge: first after Backoff.Min to 2×Backoff.Min without
// a link, then ever more rarely, up to 4×Backoff.Max apart). A peer that
// knows it refuses the link (wrong direction) and keeps dialing it
// itself; a peer that does not know it may take the link (see "Who may
// connect"), which is then the only way between them.
//
// # Who may connect
//
// The acceptor takes a link or a stream from the servers of its list
// (Config.Peers, then SetPeers: the membership the replica last applied).
// A server not in the list is asked about through Config.Admit, after
// the hello and with quorum SASL still required when it is configured.
// The server answers true if it started from a log it had written
// before, or once its replica has applied a quorum's state (a log beyond
// its bootstrap); false while a server that started empty (a fresh,
// joining or wiped member) holds nothing past a bootstrap.
//
// Why both halves. A member restarted with a log older than the reconfig
// that added the current leader does not have the leader in its list;
// refusing it, it would never catch up (simulator seeds 101523, 106795).
// Taking it is safe: such a member's log holds what it acknowledged
// (fsynced before the ack), and raft's vote rule, a candidate's log at
// least as up to date, protects it from any server, listed or not. An
// empty log has no such protection: any candidate's log beats it, so a
// wiped member would vote for a member that a reconfig removed and that
// never learned of it, and the two could make a quorum of a membership
// that is gone. So it listens only to the membership in force, which
// the operator writes in its zoo.cfg when adding it back.
//
// An admitted server is a peer while its link lasts: Send reaches it over
// that link (it carries both ways), the way back to a leader whose address
// this server does not know. When the link ends it is forgotten, unless a
// membership change named it meanwhile: then it is a peer like the
// others (one with a smaller id is dropped and dialed afresh).
//
// Apache 3.8 does the same and more: QuorumCnxManager.handleConnection
// checks no view at all; it keeps a connection from a larger id, and
// answers one from a smaller id by connecting back to the election
// address the initial message carries. FastLeaderElection answers a
// server outside its view with its vote and configuration, from which a
// server with an older configuration learns the newer one.
//
// # Handshake
//
// The dialer opens every connection with a 23-byte hello, all integers big
// endian:
//
//	+--------+---------+------+-----------+-----------+-------+
//	| "ZOOP" | version | type | from (id) | to (id)   | flags |
//	| 4      | 1       | 1    | 8         | 8         | 1     |
//	+--------+---------+------+-----------+-----------+-------+
//
// type is 1 for a link, 2 for a stream. from is the dialer's server id, to
// the id it expects to reach. The acceptor answers with a status byte: 0
// accepts, anything else names the reason for refusing (wrong id, unknown
// peer, wrong direction, unsupported version or type, streams not accepted,
// quorum SASL required; a stream from a server not in the list is refused
// as a link would be), after which it closes the connection; a flags
// byte follows the status. Both sides log a refusal, so a
// misconfigured ensemble is visible in the logs of every server involved.
//
// Flags, in the hello and in the answer: 1 says the sender runs an
// established ensemble, 2 that it runs quorum SASL (Config.Auth). When both sides run SASL, an authentication exchange
// follows the answer before the connection carries anything (auth.go).
//
// # Frames
//
// After the handshake both directions carry frames:
//
//	+------------+------+-------------------+------------+
//	| length     | kind | payload           | CRC32C     |
//	| 4          | 1    | length-1          | 4          |
//	+------------+------+-------------------+------------+
//
// length counts kind and payload, so it is never 0; the CRC (Castagnoli)
// covers kind and payload. On a link, kind 0 is the heartbeat and is never
// delivered; every other kind is the Message.Kind the sender gave. A bad CRC,
// a length of 0 or above MaxFrame+1, or a short read closes that one
// connection and is logged; the transport goes on and the link reconnects.
//
// # Streams
//
// Large payloads (raft snapshots, hundreds of MB) do not go over the link,
// where they would hold up heartbeats and raft traffic for seconds. SendStream
// opens a separate, short-lived connection of type stream and sends
//
//	header frame (kind 1) | data frames (kind 2, ≤256 KiB each) | end frame (kind 3)
//
// The receiver hands the header and a reader over the data frames to
// Config.OnStream and, when it returns, answers with one result frame
// (kind 4): a status byte, 0 for success or 1 for failure, followed by the
// error text. The result may come before the sender has finished (a handler
// that gives up early); the sender then stops sending.
package peer
