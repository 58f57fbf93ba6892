//go:build simmutate

package watch

import "sync/atomic"

var mutations [8]atomic.Bool

// mutated reports whether a planted defect is switched on.
func mutated(m Mutation) bool { return mutations[m].Load() }

// SetMutation switches a planted defect on or off (simmutate builds only).
func SetMutation(m Mutation, on bool) { mutations[m].Store(on) }
