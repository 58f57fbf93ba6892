//go:build !simmutate

package replica

// mutated reports whether a planted defect is switched on; only builds
// with the simmutate tag have any (mutate_on.go), so that the simulator
// can prove it catches them. Here it is constant false and compiles away.
func mutated(Mutation) bool { return false }
