package zktest

import (
	"runtime"
	"strings"
)

// Goroutines returns the stack of every goroutine, one string each, for
// tests that check that what they started has ended.
func Goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
