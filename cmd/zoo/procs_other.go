//go:build !unix

package main

import "time"

// processCPU reports that this system's process CPU time is not read
// here: the parallelism tuner does not run.
func processCPU() (time.Duration, bool) { return 0, false }
