package console

import "github.com/zoohq/zoo/internal/server"

// EnsembleOf describes srv's ensemble for Config.Ensemble: the membership
// (/zookeeper/config) with each member's role, and this server's link to
// each and, on the leader, how far each member's log is.
func EnsembleOf(srv *server.Server) func() (Ensemble, bool) {
	return func() (Ensemble, bool) {
		q, ok := srv.Quorum()
		if !ok {
			return Ensemble{}, false
		}
		e := Ensemble{MyID: q.MyID, LeaderID: q.LeaderID, Term: q.Term, Zxid: q.LastZxid}
		for _, m := range q.Members {
			role := "follower"
			switch {
			case m.Observer:
				role = "observer"
			case m.ID == q.LeaderID:
				role = "leader"
			}
			ps := srv.Peer(uint64(m.ID))
			if m.ID == q.MyID {
				// Its own log is where it has applied; the leader lags
				// no one.
				ps.Match = q.LastZxid
				if q.IsLeader {
					ps.Lag = 0
				}
			}
			e.Members = append(e.Members, Member{ID: m.ID, Role: role,
				QuorumAddr: m.QuorumAddr, ClientAddr: m.ClientAddr,
				Match: ps.Match, Lag: ps.Lag, Live: ps.Live || m.ID == q.MyID, Self: m.ID == q.MyID})
		}
		return e, true
	}
}
