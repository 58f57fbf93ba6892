//go:build race

package server

// raceEnabled: the race detector is on, and it enlarges goroutine stacks
// and allocations, so memory bounds are measured without it.
const raceEnabled = true
