package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/peer"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
)

// Ensemble says which servers this one replicates with (zoo.cfg's
// server.N lines and myid). The zero value is a standalone server.
type Ensemble struct {
	// Voters are the participants' ids.
	Voters []uint64
	// Learners are the observers' ids: raft learners, which replicate
	// and serve clients but never vote.
	Learners []uint64
	// Peers are the other members' quorum addresses, by id.
	Peers map[uint64]string
	// Listener is this server's bound quorum port; the server owns it.
	Listener net.Listener
	// Membership is what /zookeeper/config holds, in Apache's text form
	// (config.Config.Membership); every member must be given the same.
	Membership string
	// Dial, if not nil, opens connections to peers (quorum TLS:
	// auth.QuorumTLS.Dial, with Listener wrapped by tls.NewListener).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Auth, if not nil, is quorum SASL (quorum.auth.enableSasl) on every
	// connection between members.
	Auth *peer.Auth
}

func (e *Ensemble) enabled() bool { return len(e.Voters)+len(e.Learners) > 1 }

// peerLink adapts the peer transport to the replica's Transport.
type peerLink struct{ t *peer.Transport }

func (l peerLink) Send(to uint64, kind uint8, data []byte) bool {
	return l.t.Send(to, peer.Message{Kind: kind, Data: data})
}

// SendBuffer sends a message held in a bufpool buffer, which the
// transport puts back once it is written.
func (l peerLink) SendBuffer(to uint64, kind uint8, buf *[]byte) bool {
	return l.t.Send(to, peer.Message{Kind: kind, Data: *buf, Buf: buf})
}

func (l peerLink) Connected(id uint64) bool { return l.t.Connected(id) }

func (l peerLink) SendStream(ctx context.Context, to uint64, header []byte, body io.Reader) error {
	return l.t.SendStream(ctx, to, header, body)
}

// newPeers builds the transport between the members; messages go to the
// replica once it exists (start). recovered says this server started
// from a log it had written before.
func (s *Server) newPeers(e Ensemble, recovered bool) (*peer.Transport, error) {
	if e.Listener == nil {
		return nil, fmt.Errorf("server: an ensemble of %d needs a quorum listener", len(e.Voters))
	}
	return peer.New(peer.Config{
		ID:       uint64(s.cfg.ServerID),
		Listener: e.Listener,
		Peers:    e.Peers,
		Dial:     e.Dial,
		Auth:     e.Auth,
		Logger:   s.log.With("component", "peer"),
		// The transport may start before the replica exists (a fresh
		// server asks its peers first, see join): until then messages
		// are dropped, and raft sends them again.
		Handler: func(from uint64, m peer.Message) {
			if r := s.running.Load(); r != nil {
				r.ReceiveBuffer(from, m.Kind, m.Data, m.Buf)
			}
		},
		OnStream: func(from uint64, header []byte, body io.Reader) error {
			r := s.running.Load()
			if r == nil {
				return errNotRunning
			}
			return r.ReceiveSnapshot(from, header, body)
		},
		Established: func() bool {
			r := s.running.Load()
			return r != nil && r.Established()
		},
		// A member with a log, recovered at start or since filled by
		// a quorum, takes links from servers its membership does not
		// name: the leader a reconfig added after its log ends. One
		// that started empty (fresh, joining, wiped) and has applied
		// nothing past a bootstrap takes only those its membership
		// names, zoo.cfg's: a server that a reconfig removed must not
		// win its vote with a log that beats its empty one
		// (internal/peer doc, "Who may connect").
		Admit: func(uint64) bool {
			r := s.running.Load()
			return r != nil && (recovered || r.Established())
		},
	})
}

// errNotRunning refuses a snapshot stream before the replica exists.
var errNotRunning = errors.New("server: not running yet")

// join decides, for a server with a fresh log, whether to start a new
// ensemble with the members zoo.cfg names or to join one that runs: it
// listens to its peers' handshakes until it has heard them all, or for
// the transport's SurveyTime (so that a server rebuilt at a new address,
// which its peers do not dial, has nudged them) plus an election timeout
// for the handshakes, and at least two election timeouts. Any peer that
// runs an established ensemble, or does not know this server at all (a
// reconfig has yet to add it), means joining: the leader will send the
// state, membership included. Peers that are all fresh, or silent, mean
// the ensemble is starting, and every member bootstraps the same
// membership.
func (s *Server) join(peers *peer.Transport, n int) bool {
	peers.Start()
	election := electionTimeout(s.cfg.TickTime)
	deadline := time.Now().Add(max(2*election, peers.SurveyTime()+election))
	for {
		heard, established := peers.Survey()
		if established {
			s.log.Info("joining a running ensemble: waiting for the leader to add this server and send its state")
			return true
		}
		if heard >= n || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // polling the handshakes' outcome
	}
}

// reconfigured follows a membership change on the peer links: new
// members are dialled at the quorum address /zookeeper/config gives,
// members that left are dropped. A member that stays keeps the address
// it has (zoo.cfg's, which may differ from the text: a proxy, a NAT); one
// added back while it lingered takes the text's, as a new member does
// (it may have been rebuilt elsewhere). It runs on the replica's loop,
// its only caller.
func (s *Server) reconfigured(data []byte) {
	m, err := member.Parse(string(data))
	if err != nil || len(m.Servers) == 0 || s.peers == nil {
		return // no membership recorded (a log older than it): zoo.cfg's stands
	}
	self := uint64(s.cfg.ServerID)
	peers := make(map[uint64]string, len(m.Servers))
	for _, sv := range m.Servers {
		id := uint64(sv.ID)
		if id == self {
			continue
		}
		if addr, ok := s.peerAddrs[id]; ok && s.listed[id] {
			peers[id] = addr
		} else {
			peers[id] = sv.QuorumAddr()
		}
	}
	s.listed = make(map[uint64]bool, len(m.Servers))
	for _, sv := range m.Servers {
		s.listed[uint64(sv.ID)] = true
	}
	// Servers a reconfig removed that raft still replicates to (they
	// linger as learners, replica's linger.go) keep their links. While
	// the log is replayed at start there is no replica yet: New calls
	// this again once there is.
	inRaft := true
	if s.rep != nil {
		for _, id := range s.rep.Members() {
			if _, listed := peers[id]; listed || id == self {
				continue
			}
			if addr, ok := s.peerAddrs[id]; ok {
				peers[id] = addr
			}
		}
		inRaft = s.rep.IsMember()
	}
	s.peerAddrs = peers
	s.peers.SetPeers(peers)
	_, listed := m.Server(int64(self))
	s.lingering.Store(!listed && inRaft)
	s.setRemoved(!listed && !inRaft)
	s.log.Info("membership changed", "participants", m.Participants(), "observers", m.Observers(),
		"lingering", len(peers)+1-len(m.Servers))
}

// setRemoved records whether this server is out of the ensemble: a
// reconfig removed it and the leader has since dropped it from raft too
// (replica's linger.go). Until then it serves as Apache's removed
// follower does, as a non-voting follower. Once dropped, raft no longer
// sends it the log, so a write forwarded from here would wait for its
// deadline and fail: it lets its clients go once their queued replies
// are written, so that they move to a member, and takes no new ones until
// a reconfig adds it back.
func (s *Server) setRemoved(removed bool) {
	if s.removed.Swap(removed) == removed {
		return
	}
	if !removed {
		s.log.Info("back in the membership: serving clients")
		return
	}
	conns := s.snapshotConns()
	s.log.Warn("out of the ensemble (removed by a reconfig, then dropped by the leader): closing client connections, refusing new ones",
		"connections", len(conns))
	for _, c := range conns {
		c.out.finish(nil)
	}
}

// In an ensemble only the leader expires sessions (DESIGN decision 8):
// the others report the sessions they heard from every half tick
// (Housekeeper).

// followerTick reports activity on a server that does not lead, and
// returns how long to wait before the next.
func (s *Server) followerTick() time.Duration {
	s.smu.Lock()
	ids := s.hk.Follow()
	s.smu.Unlock()
	s.rep.ReportActivity(ids)
	return s.cfg.TickTime / 2
}

// takeOver restarts expiry tracking on a server that has just become the
// leader: every live session is due one timeout from now.
func (s *Server) takeOver() {
	now := s.nowMs()
	var n int
	// Under the state's lock, so no createSession applies in between.
	s.rep.Read(func(st *txn.State, _ int64) {
		s.smu.Lock()
		s.hk.TakeOver(st.Sessions, now)
		s.smu.Unlock()
		n = len(st.Sessions)
	})
	s.log.Info("leading: tracking session expiry", "sessions", n)
}

// onActivity touches the sessions another server heard from.
func (s *Server) onActivity(ids []int64) {
	now := s.nowMs()
	s.smu.Lock()
	defer s.smu.Unlock()
	s.hk.Activity(ids, now)
}

// serving reports whether this server may take clients: standalone, or a
// member that knows a leader. A member cut off from the quorum refuses
// clients and drops the ones it has, so they move to a server in the
// majority (Apache's followers shut their client service down likewise).
func (s *Server) serving() bool {
	return !s.cfg.Ensemble.enabled() || s.rep.Leader() != 0 && !s.removed.Load()
}

// checkQuorum closes every client connection once the server has been
// without a leader for a whole election timeout, and, with read-only
// mode, turns read-only after readOnlyDelay.
func (s *Server) checkQuorum() {
	serving := s.serving()
	s.smu.Lock()
	lost := time.Duration(s.hk.Leaderless(serving, s.nowMs())) * time.Millisecond
	s.smu.Unlock()
	if serving {
		s.exitReadOnly()
		return
	}
	if lost < electionTimeout(s.cfg.TickTime) {
		return
	}
	if s.cfg.ReadOnlyMode && lost >= readOnlyDelay(s.cfg.TickTime) {
		s.enterReadOnly()
		return
	}
	s.closeClients("no leader")
}

// closeClients closes every client connection; the clients reconnect,
// here or elsewhere, with their sessions.
func (s *Server) closeClients(why string) {
	conns := s.snapshotConns()
	if len(conns) > 0 {
		s.log.Warn("closing client connections", "why", why, "connections", len(conns))
	}
	for _, c := range conns {
		c.close()
	}
}

// Raft's clock is derived from tickTime: a heartbeat every tickTime/50
// (40ms at 2000), an election after 8 to 16 of those (320–640ms). The
// followers' first timeout, hence a frozen leader's replacement, comes
// after about 1.33 x 320ms; a dead leader's closed connections make them
// campaign sooner (replica's watchLeaderLink). Heartbeats never wait for a
// disk or a long apply (the replica writes its log beside its loop and
// applies in slices), which is what lets the timeout be this short
// without false elections on a loaded machine.
//
// A small tickTime (tests use 200-500 ms) would scale the timeout down to
// tens of milliseconds, shorter than a scheduling delay on a loaded
// machine: the timeout never goes below minElectionTimeout, in more
// ticks.
const (
	minElectionTicks   = 8
	minElectionTimeout = 300 * time.Millisecond
)

func raftTick(tickTime time.Duration) time.Duration {
	return max(tickTime/50, 5*time.Millisecond)
}

// electionTicks is how many raft ticks make the base election timeout.
func electionTicks(tickTime time.Duration) int {
	tick := raftTick(tickTime)
	return max(minElectionTicks, int((minElectionTimeout+tick-1)/tick))
}

func electionTimeout(tickTime time.Duration) time.Duration {
	return raftTick(tickTime) * time.Duration(electionTicks(tickTime))
}

var (
	_ replica.Transport = peerLink{}
	_ replica.LinkState = peerLink{}
)
