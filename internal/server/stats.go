package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/server/fourlw"
)

// counters are the server-wide statistics of srvr, stat and mntr.
type counters struct {
	received    atomic.Int64
	sent        atomic.Int64
	connections atomic.Int64
	expired     atomic.Int64
	authFailed  atomic.Int64
	slowFsyncs  atomic.Int64 // over fsync.warningthresholdms
	lat         latency
}

func newCounters() *counters { return &counters{} }

func (c *counters) reset() {
	c.received.Store(0)
	c.sent.Store(0)
	c.lat.reset()
}

// latency is a min/avg/max counter in whole milliseconds, as Apache keeps
// it.
type latency struct {
	mu sync.Mutex
	l  fourlw.Latency
}

func (l *latency) add(d time.Duration) {
	ms := d.Milliseconds()
	l.mu.Lock()
	if l.l.Count == 0 || ms < l.l.Min {
		l.l.Min = ms
	}
	l.l.Max = max(l.l.Max, ms)
	l.l.Total += ms
	l.l.Count++
	l.mu.Unlock()
}

func (l *latency) get() fourlw.Latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.l
}

func (l *latency) reset() {
	l.mu.Lock()
	l.l = fourlw.Latency{}
	l.mu.Unlock()
}

// connStats are one connection's statistics, for cons.
type connStats struct {
	established time.Time
	received    atomic.Int64
	sent        atomic.Int64
	lastOp      atomic.Int32 // a jute.Op
	lastCxid    atomic.Int64
	lastZxid    atomic.Int64
	lastReply   atomic.Int64 // ms since the epoch
	lastLatency atomic.Int64 // ms
	lat         latency
	// fourLetter marks the connection asking for a four-letter word, which
	// Apache's cons shows with interest 0.
	fourLetter atomic.Bool
}

// replied records a reply as Apache's ServerCnxn.updateStatsForResponse
// does: every reply, pings (xid -2) included, sets the last cxid and zxid.
func (c *connStats) replied(xid int32, zxid int64, now time.Time) {
	c.lastCxid.Store(int64(xid))
	c.lastZxid.Store(zxid)
	c.lastReply.Store(now.UnixMilli())
}

func (c *connStats) reset() {
	c.received.Store(0)
	c.sent.Store(0)
	c.lastCxid.Store(-1)
	c.lastZxid.Store(-1)
	c.lastLatency.Store(0)
	c.lat.reset()
}
