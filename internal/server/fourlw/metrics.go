package fourlw

import (
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/metrics"
)

// MetricLines returns the mntr lines of a metric set, keys without the zk_
// prefix, as Apache's ServerMetrics prints them after the standard lines: a
// counter as its value; a summary as avg_, min_, max_, cnt_ and sum_ lines
// (AvgMinMaxCounter), plus p50_, p95_, p99_ and p999_ when it keeps
// quantiles (AvgMinMaxPercentileCounter). Gauges are left out: mntr's
// standard lines and the server's own extra lines show those values.
func MetricLines(set *metrics.Set) []KV {
	var out []KV
	set.EachRecorded(func(m metrics.Metric) {
		switch m.Kind {
		case metrics.KindCounter:
			out = append(out, KV{m.Name, i64(int64(m.Value))})
		case metrics.KindSummary:
			v := m.Summary
			out = append(out,
				KV{"avg_" + m.Name, javaDouble(avg4(v.Sum, v.Count))},
				KV{"min_" + m.Name, i64(v.Min)},
				KV{"max_" + m.Name, i64(v.Max)},
				KV{"cnt_" + m.Name, i64(v.Count)},
				KV{"sum_" + m.Name, i64(v.Sum)})
			for i, q := range v.Quantiles {
				out = append(out, KV{quantileKey(metrics.MntrQuantiles[i]) + "_" + m.Name, i64(q)})
			}
		}
	})
	return out
}

// quantileKey is mntr's name for a quantile: 0.5 is p50, 0.999 p999.
func quantileKey(q float64) string {
	s := strconv.FormatFloat(q, 'f', -1, 64)
	return "p" + strings.TrimPrefix(s, "0.") + strings.Repeat("0", max(0, 2-len(strings.TrimPrefix(s, "0."))))
}
