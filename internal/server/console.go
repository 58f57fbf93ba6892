package server

// PeerStatus is another member as this server sees it: whether its link
// is up and, on the leader, how far its log is (Match, Lag; -1 when not
// known here).
type PeerStatus struct {
	Live       bool
	Match, Lag int64
}

// Peer returns member id's status, for the web console's ensemble view.
// On a standalone server, or for this server itself, Live is false.
func (s *Server) Peer(id uint64) PeerStatus {
	ps := PeerStatus{Match: -1, Lag: -1}
	if s.peers == nil || s.rep == nil || id == uint64(s.cfg.ServerID) {
		return ps
	}
	ps.Live = s.peers.Connected(id)
	for _, p := range s.rep.Progress() {
		if p.ID == id {
			ps.Match, ps.Lag = int64(p.Match), int64(p.Lag)
		}
	}
	return ps
}
