package server

import (
	"errors"

	"github.com/zoohq/zoo/internal/jute"
)

// codeOf translates an error from the core packages into the wire code the
// client gets. It is the one place where that happens.
func codeOf(err error) jute.Code {
	if err == nil {
		return jute.OK
	}
	var code jute.Code
	if errors.As(err, &code) {
		return code
	}
	return jute.SystemError
}
