package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketRangeCoversEveryValue(t *testing.T) {
	// Every value falls in a bucket whose range holds it, and bucket
	// ranges are contiguous: the histogram neither loses nor misplaces a
	// value, at every magnitude up to the largest duration.
	prevHi := int64(-1)
	for i := 0; i < numBuckets; i++ {
		lo, hi := bucketRange(i)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ended at %d", i, lo, prevHi)
		}
		if bucket(lo) != i || bucket(hi) != i {
			t.Fatalf("bucket %d [%d,%d]: bucket(lo)=%d bucket(hi)=%d", i, lo, hi, bucket(lo), bucket(hi))
		}
		if lo >= subCount && float64(hi-lo+1)/float64(lo) > 1.0/subCount+1e-12 {
			t.Fatalf("bucket %d [%d,%d] wider than 1/%d of its values", i, lo, hi, subCount)
		}
		prevHi = hi
	}
	if prevHi != maxTracked {
		t.Fatalf("last bucket ends at %d, want %d", prevHi, maxTracked)
	}
	if b := bucket(1<<63 - 1); b != numBuckets-1 {
		t.Fatalf("max int64 maps to bucket %d, want the last, %d", b, numBuckets-1)
	}
}

func TestQuantilesAgainstSortedValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h Hist
	vals := make([]int64, 20000)
	for i := range vals {
		// log-uniform from 1 µs to 1 s: every octave gets values
		vals[i] = int64(1000 * float64(rng.IntN(1<<20)) * float64(rng.IntN(1000)+1) / float64(1<<20) * 1000)
		h.Record(time.Duration(vals[i]))
	}
	slices.Sort(vals)
	for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
		want := vals[max(int(q*float64(len(vals))+0.5), 1)-1]
		got := int64(h.Quantile(q))
		if got < want || float64(got-want) > float64(want)/subCount+1 {
			t.Errorf("q%.3f = %d, exact %d: outside [exact, exact+1/%d]", q, got, want, subCount)
		}
	}
	if h.Count() != int64(len(vals)) {
		t.Errorf("count %d, want %d", h.Count(), len(vals))
	}
	if h.Max() != time.Duration(vals[len(vals)-1]) || h.Min() != time.Duration(vals[0]) {
		t.Errorf("min/max %v/%v, want %v/%v", h.Min(), h.Max(), vals[0], vals[len(vals)-1])
	}
	var sum int64
	for _, v := range vals {
		sum += v
	}
	if h.Mean() != time.Duration(sum/int64(len(vals))) {
		t.Errorf("mean %v, want %v", h.Mean(), time.Duration(sum/int64(len(vals))))
	}
}

func TestMergeEqualsRecordingAll(t *testing.T) {
	var a, b, all Hist
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i * i * 37)
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var m Hist
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&Hist{})
	if m != all {
		t.Fatalf("merged histogram differs: n=%d/%d min=%d/%d max=%d/%d", m.n, all.n, m.min, all.min, m.max, all.max)
	}
}

func TestCDFIsMonotoneAndEndsAtMax(t *testing.T) {
	var h Hist
	if len(h.CDF()) != 0 || h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("an empty histogram reports values")
	}
	for _, d := range []time.Duration{5 * time.Millisecond, time.Millisecond, time.Millisecond, 300 * time.Microsecond} {
		h.Record(d)
	}
	h.Record(-time.Second) // clock stepped back: counts as zero, not a panic
	pts := h.CDF()
	for i := 1; i < len(pts); i++ {
		if pts[i].LatencyMs <= pts[i-1].LatencyMs || pts[i].Frac <= pts[i-1].Frac {
			t.Fatalf("CDF not increasing at %d: %+v", i, pts)
		}
	}
	if last := pts[len(pts)-1]; last.Frac != 1 || last.LatencyMs != 5 {
		t.Fatalf("last point %+v, want 5 ms at 1", last)
	}
	if pts[0].LatencyMs != 0 || pts[0].Frac != 0.2 {
		t.Fatalf("first point %+v, want 0 ms at 0.2", pts[0])
	}
	// 3 of 5 values are <= 1 ms: p60 is the top of 1 ms's bucket.
	lo, hi := bucketRange(bucket(int64(time.Millisecond)))
	if got := h.Quantile(0.6); got < time.Duration(lo) || got > time.Duration(hi) {
		t.Fatalf("p60 = %v, want within 1 ms's bucket [%d,%d]", got, lo, hi)
	}
}

func TestCDFThinsButKeepsTail(t *testing.T) {
	var h Hist
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond) // uniform 1 µs .. 100 ms
	}
	pts := h.CDF()
	if len(pts) > 1500 {
		t.Fatalf("%d CDF points for one distribution", len(pts))
	}
	tail := 0
	for i, p := range pts {
		if i > 0 && p.Frac-pts[i-1].Frac < 0.002 && pts[i-1].Frac < 0.99 && p.Frac < 0.99 {
			t.Fatalf("step %d of %v below 0.99 kept", i, p.Frac-pts[i-1].Frac)
		}
		if p.Frac >= 0.99 {
			tail++
		}
	}
	// every non-empty bucket of the top 1% is a point
	want := 0
	var seen int64
	for _, c := range h.counts {
		seen += c
		if c > 0 && float64(seen)/float64(h.n) >= 0.99 {
			want++
		}
	}
	if tail != want || want < 2 {
		t.Errorf("%d points in the top 1%%, want %d (one per bucket)", tail, want)
	}
	if last := pts[len(pts)-1]; last.Frac != 1 || last.LatencyMs != 100 {
		t.Errorf("last point %+v, want 100 ms at 1", last)
	}
}
