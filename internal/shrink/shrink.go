// Package shrink gives memory back from Go maps that emptied.
//
// A Go map never shrinks: one that held 100,000 sessions holds their
// buckets after the sessions are gone (issue 17: a server's memory grew
// with every wave of sessions and was not returned). Map rebuilds a map
// once most of what it held at its peak is deleted, so the memory a map
// holds follows what it holds, for a copy cost that is amortized over the
// deletes (a rebuild copies at most a quarter of the deletes since the
// last one).
package shrink

// minPeak is the size below which a map is never rebuilt: small maps cost
// little and would be rebuilt often.
const minPeak = 256

// Map returns m, or a copy of m once it has dropped to a quarter of
// *peak, the largest size seen since the last copy. Call it after
// deleting from m, and store the result in place of m; *peak is the
// caller's, kept beside the map and zero to start.
func Map[K comparable, V any](m map[K]V, peak *int) map[K]V {
	n := len(m)
	if n+1 > *peak {
		*peak = n + 1 // m held at least one more before the delete
	}
	if *peak < minPeak || n > *peak/4 {
		return m
	}
	out := make(map[K]V, n)
	for k, v := range m {
		out[k] = v
	}
	*peak = n
	return out
}
