package server

import (
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// housekeeping expires sessions and removes empty containers and expired
// TTL nodes, each as a txn through the log like any other change. It runs
// until Shutdown.
func (s *Server) housekeeping() {
	expiry := time.NewTimer(s.cfg.TickTime)
	defer expiry.Stop()
	containers := time.NewTicker(s.cfg.ContainerCheck)
	defer containers.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-expiry.C:
			expiry.Reset(s.expireSessions())
		case <-containers.C:
			s.cleanContainers()
		}
	}
}

// cleanContainers deletes, through the log, containers whose last child
// is gone and TTL nodes past their time, at most ContainerMaxPerMinute per
// minute as Apache's ContainerManager does.
func (s *Server) cleanContainers() {
	if s.cfg.Ensemble.enabled() && !s.rep.IsLeader() {
		return // the leader does it for everyone
	}
	var paths []string
	now := s.nowMs()
	s.rep.Read(func(st *txn.State, _ int64) {
		paths = append(st.Tree.ContainersToDelete(), st.Tree.ExpiredTTL(now)...)
	})
	limit := int(int64(s.cfg.ContainerMaxPerMinute) * int64(s.cfg.ContainerCheck) / int64(time.Minute))
	if limit < 1 {
		limit = 1
	}
	for i, p := range paths {
		if i >= limit {
			break
		}
		req := txn.Request{Op: jute.OpDeleteContainer, Record: &jute.PathRequest{Path: p}}
		if err := s.rep.Submit(s.baseCtx, req, 0); err != nil {
			return
		}
	}
}

// quotaWarning logs a write that takes a subtree past its quota, as
// Apache logs "Quota exceeded". It runs on the replica's loop.
func (s *Server) quotaWarning(o tree.QuotaOverrun) {
	what := "bytes"
	if o.Count {
		what = "count"
	}
	s.log.Warn("quota exceeded", "quota", o.Prefix, "limit", what, "value", o.Value, "allowed", o.Limit, "hard", o.Hard)
}
