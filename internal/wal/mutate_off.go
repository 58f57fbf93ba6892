//go:build !simmutate

package wal

// mutTornAlways is off in every normal build (see mutate_on.go).
const mutTornAlways = false
