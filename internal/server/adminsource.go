package server

import (
	"cmp"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/server/fourlw"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// Source is the server as the four-letter words and the AdminServer see
// it.
func (s *Server) Source() fourlw.Source { return source{s} }

// SetTraceMask sets the trace mask gtmk and get_trace_mask report.
func (s *Server) SetTraceMask(mask int64) { s.traceMask.Store(mask) }

// LastSnapshot returns the zxid (the raft index it is labelled with) and
// the modification time of the newest snapshot file; ok is false without
// a data directory or a snapshot.
func (s *Server) LastSnapshot() (zxid int64, at time.Time, ok bool) {
	if s.cfg.DataDir == "" && s.cfg.DataLogDir == "" {
		return 0, time.Time{}, false
	}
	fs := s.cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	dir := filepath.Join(cmp.Or(s.cfg.DataDir, s.cfg.DataLogDir), "snap")
	infos, err := snap.List(fs, dir)
	for i := len(infos) - 1; err == nil && i >= 0; i-- {
		if infos[i].Err != nil {
			continue
		}
		fi, serr := fs.Stat(filepath.Join(dir, infos[i].Name))
		if serr != nil {
			continue
		}
		return int64(infos[i].Meta.Index), fi.ModTime(), true
	}
	return 0, time.Time{}, false
}

// QuorumInfo is what the AdminServer's quorum commands show.
type QuorumInfo struct {
	MyID          int64
	IsLeader      bool
	LeaderID      int64
	LeaderAddr    string
	Voting        bool
	QuorumAddr    string
	ClientAddr    string
	LastZxid      int64
	Term          int64
	Members       []QuorumMember
	ObserverCount int
}

// QuorumMember is one line of the membership (/zookeeper/config).
type QuorumMember struct {
	ID                                   int64
	QuorumAddr, ElectionAddr, ClientAddr string
	Observer                             bool
}

// Quorum describes the ensemble; ok is false on a standalone server.
func (s *Server) Quorum() (q QuorumInfo, ok bool) {
	if !s.cfg.Ensemble.enabled() {
		return q, false
	}
	var membership []byte
	s.rep.Read(func(st *txn.State, _ int64) { membership, _, _ = st.Tree.Get(tree.ConfigPath) })
	q = QuorumInfo{
		MyID:     s.cfg.ServerID,
		IsLeader: s.mode() == fourlw.ModeLeader,
		LeaderID: int64(s.rep.Leader()),
		Voting:   !s.rep.IsLearner(),
		LastZxid: s.rep.LastZxid(),
		Term:     int64(s.rep.Term()),
		Members:  parseMembership(string(membership)),
	}
	for _, m := range q.Members {
		if m.Observer {
			q.ObserverCount++
		}
		if m.ID == q.LeaderID {
			q.LeaderAddr = m.QuorumAddr
		}
		if m.ID == q.MyID {
			q.QuorumAddr, q.ClientAddr = m.QuorumAddr, m.ClientAddr
		}
	}
	return q, true
}

// parseMembership reads "server.1=host:2888:3888:participant;host:2181"
// lines; the version line and anything unparsable are skipped.
func parseMembership(text string) []QuorumMember {
	var out []QuorumMember
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		id, err := strconv.ParseInt(strings.TrimPrefix(key, "server."), 10, 64)
		if !ok || !strings.HasPrefix(key, "server.") || err != nil {
			continue
		}
		addrs, client, _ := strings.Cut(val, ";")
		host := ""
		if strings.HasPrefix(addrs, "[") { // [::1]:2888:3888
			end := strings.Index(addrs, "]")
			if end < 0 {
				continue
			}
			host, addrs = addrs[:end+1], strings.TrimPrefix(addrs[end+1:], ":")
		} else {
			host, addrs, _ = strings.Cut(addrs, ":")
		}
		parts := strings.Split(addrs, ":")
		if len(parts) < 2 {
			continue
		}
		m := QuorumMember{ID: id, ClientAddr: client,
			QuorumAddr:   host + ":" + parts[0],
			ElectionAddr: host + ":" + parts[1]}
		m.Observer = len(parts) > 2 && parts[2] == "observer"
		out = append(out, m)
	}
	return out
}
