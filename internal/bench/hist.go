package bench

import (
	"math/bits"
	"sync"
	"time"
)

// Hist is a log-linear latency histogram in the manner of HdrHistogram:
// values below 2^subBits ns are kept exactly, and every power of two above
// is split into 2^subBits equal buckets, so a recorded value is known to
// within 1/128 (0.8%) of itself at any magnitude up to 2^44 ns (4.9
// hours; longer ones land in the last bucket, and Max stays exact), in a
// fixed 38 KiB.
//
// A Hist is not safe for concurrent use: each worker keeps its own and the
// run merges them at the end, so recording never takes a lock.
type Hist struct {
	counts [numBuckets]int64
	n      int64
	sum    int64 // ns; overflows only after 292 years of latency
	min    int64
	max    int64
}

const (
	subBits    = 7
	subCount   = 1 << subBits
	topBits    = 44
	numBuckets = subCount + (topBits-subBits)*subCount
	maxTracked = 1<<topBits - 1
)

// bucket returns the index of the bucket holding v (v >= 0).
func bucket(v int64) int {
	v = min(v, maxTracked)
	if v < subCount {
		return int(v)
	}
	// shift is how many low bits the bucket ignores: the value's top
	// subBits+1 bits pick the bucket within its octave.
	shift := bits.Len64(uint64(v)) - subBits - 1
	return subCount + shift*subCount + int(v>>uint(shift)) - subCount
}

// bucketRange returns the smallest and largest values bucket i holds.
func bucketRange(i int) (lo, hi int64) {
	if i < subCount {
		return int64(i), int64(i)
	}
	shift := (i - subCount) / subCount
	mant := int64((i-subCount)%subCount) + subCount
	lo = mant << uint(shift)
	return lo, lo + (int64(1) << uint(shift)) - 1
}

// Record adds one latency; negative durations count as zero.
func (h *Hist) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucket(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += v
}

// Merge adds o's values to h.
func (h *Hist) Merge(o *Hist) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of values recorded.
func (h *Hist) Count() int64 { return h.n }

// Mean is the exact mean of the values recorded.
func (h *Hist) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Min and Max are exact.
func (h *Hist) Min() time.Duration { return time.Duration(h.min) }
func (h *Hist) Max() time.Duration { return time.Duration(h.max) }

// Quantile returns the smallest recorded value v (to the histogram's
// precision) such that a fraction q of the values are <= v, as HdrHistogram
// reports percentiles: the top of the bucket the q-th value falls in,
// clamped to the exact min and max. q is clamped to [0, 1].
func (h *Hist) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := int64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketRange(i)
			return time.Duration(min(max(hi, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

// CDFPoint is one step of a cumulative distribution: a fraction Frac of
// the values are <= Latency.
type CDFPoint struct {
	LatencyMs float64 `json:"latency_ms"`
	Frac      float64 `json:"frac"`
}

// CDF returns the distribution at the top of non-empty buckets, in
// increasing order, from the minimum to the maximum (Frac 1). To keep
// reports small, steps of less than 0.2% are merged, except in the top 1%,
// where the tail latencies a user looks for are kept bucket by bucket.
func (h *Hist) CDF() []CDFPoint {
	var pts []CDFPoint
	var seen int64
	last := -1.0
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		frac := float64(seen) / float64(h.n)
		if last >= 0 && frac-last < 0.002 && frac < 0.99 {
			continue
		}
		last = frac
		_, hi := bucketRange(i)
		v := min(max(hi, h.min), h.max)
		pts = append(pts, CDFPoint{LatencyMs: ms(time.Duration(v)), Frac: frac})
	}
	return pts
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// syncHist is a Hist that the request streams of one session share: one
// Hist per stream would cost 38 KiB each, times thousands of streams, and
// a lock per completed call is nothing beside its round trip.
type syncHist struct {
	mu sync.Mutex
	h  Hist
}

func (s *syncHist) Record(d time.Duration) {
	s.mu.Lock()
	s.h.Record(d)
	s.mu.Unlock()
}
