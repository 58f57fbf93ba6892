package fourlw

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// javaDouble formats v as Java's Double.toString does, which is how Apache
// prints averages: at least one digit after the point ("0.0", "6.5"), and
// computerized scientific notation outside [1e-3, 1e7) ("1.0E7").
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	// Shortest digits in Go's e-format: "-1.2345e+07" -> "-1.2345E7".
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// avg4 is Apache's AvgMinMaxCounter.getAvg: total/count as a double, then
// rounded half-up to four decimals on its exact binary value
// (new BigDecimal(avg).setScale(4, HALF_UP).doubleValue()).
func avg4(total, count int64) float64 {
	if count <= 0 {
		return 0
	}
	avg := float64(total) / float64(count)
	if math.IsInf(avg, 0) || math.IsNaN(avg) {
		return avg
	}
	x := new(big.Float).SetPrec(256).SetFloat64(avg) // exact
	x.Mul(x, big.NewFloat(10000))
	neg := x.Sign() < 0
	if neg {
		x.Neg(x)
	}
	x.Add(x, big.NewFloat(0.5))
	q, _ := x.Int(nil) // truncates toward zero: floor, as x >= 0
	if neg {
		q.Neg(q)
	}
	f, _ := new(big.Float).SetInt(q).Float64()
	return f / 10000
}

// BuildTimeLayout is the layout FullVersion uses for the build time:
// Apache 3.5+'s ("2024-02-12 20:59 UTC"), which tools written for current
// Apache parse. go-zookeeper's FLWSrvr accepts only 3.4's "02/12/2024 20:59
// GMT" and so fails against Zoo exactly as it fails against Apache 3.8;
// kazoo reads only the leading version digits.
const BuildTimeLayout = "2006-01-02 15:04 UTC"

// FullVersion builds the version string srvr, stat, mntr and envi print, in
// Apache's form "<version>, built on <time>", e.g.
// FullVersion("3.9.2-zoo", t) = "3.9.2-zoo, built on 2024-02-12 20:59 UTC".
func FullVersion(version string, built time.Time) string {
	return version + ", built on " + built.UTC().Format(BuildTimeLayout)
}
