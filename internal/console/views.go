package console

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/zoohq/zoo/internal/metrics"
)

// maxRows bounds the sessions and watched paths one answer lists.
const maxRows = 2000

// sessionRow is one session: its connection to this server when it has
// one (Remote set), its ephemerals and its watches here.
type sessionRow struct {
	ID         string   `json:"id"`
	Remote     string   `json:"remote"`
	Timeout    int32    `json:"timeout"` // ms; 0 when not known here
	Ephemerals []string `json:"ephemerals"`
	Watches    int      `json:"watches"`
	Queued     int64    `json:"queued"`
	Received   int64    `json:"received"`
	Sent       int64    `json:"sent"`
	LastOp     string   `json:"lastOp"`
}

// watchRow is one watched path and the sessions watching it.
type watchRow struct {
	Path     string   `json:"path"`
	Sessions []string `json:"sessions"`
}

type sessionsView struct {
	Sessions  []sessionRow `json:"sessions"`
	Watches   []watchRow   `json:"watches"`
	Truncated bool         `json:"truncated,omitempty"`
}

func (c *Console) sessions(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Source == nil {
		writeJSON(w, http.StatusOK, sessionsView{Sessions: []sessionRow{}, Watches: []watchRow{}})
		return
	}
	writeJSON(w, http.StatusOK, c.sessionsView())
}

func (c *Console) sessionsView() sessionsView {
	src := c.cfg.Source
	rows := map[int64]*sessionRow{}
	row := func(id int64) *sessionRow {
		if s := rows[id]; s != nil {
			return s
		}
		s := &sessionRow{ID: hex(id), Ephemerals: []string{}}
		rows[id] = s
		return s
	}
	for _, cn := range src.Connections() {
		if cn.SessionID == 0 {
			continue // a connection still in its handshake
		}
		s := row(cn.SessionID)
		s.Remote, s.Timeout, s.Queued, s.Received, s.Sent, s.LastOp =
			cn.Remote, cn.Timeout, cn.Queued, cn.Received, cn.Sent, cn.LastOp
	}
	d := src.Dump()
	for _, b := range d.SessionBuckets {
		for _, id := range b.SessionIDs {
			row(id)
		}
	}
	for _, g := range d.GlobalSessions {
		if s := row(g.SessionID); s.Timeout == 0 {
			s.Timeout = g.Timeout
		}
	}
	for id, paths := range d.Ephemerals {
		s := row(id)
		s.Ephemerals = append(s.Ephemerals, paths...)
		slices.Sort(s.Ephemerals)
	}
	byPath := map[string][]string{}
	for _, wt := range src.DataWatches() {
		row(wt.SessionID).Watches++
		byPath[wt.Path] = append(byPath[wt.Path], hex(wt.SessionID))
	}
	var v sessionsView
	ids := make([]int64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if len(v.Sessions) == maxRows {
			v.Truncated = true
			break
		}
		v.Sessions = append(v.Sessions, *rows[id])
	}
	for p, ss := range byPath {
		slices.Sort(ss)
		v.Watches = append(v.Watches, watchRow{Path: p, Sessions: slices.Compact(ss)})
	}
	slices.SortFunc(v.Watches, func(a, b watchRow) int { return cmp.Compare(a.Path, b.Path) })
	if len(v.Watches) > maxRows {
		v.Watches, v.Truncated = v.Watches[:maxRows], true
	}
	if v.Sessions == nil {
		v.Sessions = []sessionRow{}
	}
	if v.Watches == nil {
		v.Watches = []watchRow{}
	}
	return v
}

// ensembleView is GET /api/ensemble's answer.
type ensembleView struct {
	Standalone bool   `json:"standalone"`
	Mode       string `json:"mode"`
	Serving    bool   `json:"serving"`
	Version    string `json:"version"`
	Ensemble
}

func (c *Console) ensemble(w http.ResponseWriter, r *http.Request) {
	var v ensembleView
	if c.cfg.Source != nil {
		st := c.cfg.Source.Stats()
		v.Mode, v.Serving, v.Version, v.Zxid = st.Mode, c.cfg.Source.Serving(), st.Version, st.Zxid
	}
	e, ok := Ensemble{}, false
	if c.cfg.Ensemble != nil {
		e, ok = c.cfg.Ensemble()
	}
	if ok {
		v.Ensemble = e
	} else {
		v.Standalone = true
		v.Members = []Member{{ID: 0, Role: v.Mode, Live: true, Self: true, Match: -1, Lag: -1}}
	}
	if v.Members == nil {
		v.Members = []Member{}
	}
	writeJSON(w, http.StatusOK, v)
}

// sample is one point of the live charts. Counters are cumulative: the
// page takes differences between samples for rates, and between the
// fsync histogram's buckets for its latency quantiles.
type sample struct {
	Time         int64     `json:"time"`     // ms since the epoch
	Received     int64     `json:"received"` // packets, pings included
	Reads        int64     `json:"reads"`
	Writes       int64     `json:"writes"`
	ReadLatency  []int64   `json:"readLatency"`  // ms: p50, p95, p99, p999 of recent reads
	WriteLatency []int64   `json:"writeLatency"` // ms, of recent writes
	Fsync        histogram `json:"fsync"`        // seconds
	Outstanding  int64     `json:"outstanding"`  // requests in flight
	Connections  int       `json:"connections"`
	Lag          int64     `json:"lag"` // the most any member lags (on the leader)
	Zxid         string    `json:"zxid"`
}

// histogram is a cumulative histogram: Counts[i] samples at or below
// Bounds[i]; Count is all samples.
type histogram struct {
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

func (c *Console) stats(w http.ResponseWriter, r *http.Request) {
	s := sample{Time: c.cfg.Now().UnixMilli(), Zxid: "0x0",
		ReadLatency: []int64{}, WriteLatency: []int64{},
		Fsync: histogram{Bounds: []float64{}, Counts: []uint64{}}}
	if src := c.cfg.Source; src != nil {
		st := src.Stats()
		s.Received, s.Outstanding, s.Connections, s.Zxid = st.Received, st.Outstanding, st.Connections, hex(st.Zxid)
	}
	if m := c.cfg.Metrics; m != nil {
		rv, wv := m.Summary("readlatency", true).Value(), m.Summary("updatelatency", true).Value()
		s.Reads, s.ReadLatency = rv.Count, quantiles(rv)
		s.Writes, s.WriteLatency = wv.Count, quantiles(wv)
	}
	if c.cfg.Ensemble != nil {
		if e, ok := c.cfg.Ensemble(); ok {
			for _, mb := range e.Members {
				s.Lag = max(s.Lag, mb.Lag)
			}
		}
	}
	if m := c.cfg.Metrics; m != nil {
		// The server registered it with its bounds; this only looks it up.
		h := m.Histogram("zoo_fsync_duration_seconds", nil).Value()
		s.Fsync.Count, s.Fsync.Sum = h.Count, h.Sum
		for b := range h.Buckets {
			s.Fsync.Bounds = append(s.Fsync.Bounds, b)
		}
		slices.Sort(s.Fsync.Bounds)
		for _, b := range s.Fsync.Bounds {
			s.Fsync.Counts = append(s.Fsync.Counts, h.Buckets[b])
		}
	}
	writeJSON(w, http.StatusOK, s)
}

// quantiles returns p50, p95, p99 and p999 of a summary's recent samples.
func quantiles(v metrics.SummaryValue) []int64 {
	out := make([]int64, 0, len(metrics.MntrQuantiles))
	for _, q := range metrics.MntrQuantiles {
		out = append(out, metrics.Quantile(v.Recent, q))
	}
	return out
}
