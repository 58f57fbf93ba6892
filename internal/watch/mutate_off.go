//go:build !simmutate

package watch

// mutated reports whether a planted defect is switched on; only builds
// with the simmutate tag have any (mutate_on.go). Here it is constant
// false and compiles away.
func mutated(Mutation) bool { return false }
