//go:build !linux

package server

// idlePoller parks nothing off Linux: resting readers wait in goroutines
// (rest.go). See idlepoll_linux.go.
type idlePoller struct{}

func (p *idlePoller) park(*conn) bool   { return false }
func (p *idlePoller) unpark(*conn) bool { return false }
func (p *idlePoller) stop()             {}

func parkable(*conn) bool { return false }
