//go:build !linux

package server

import (
	"io"
	"net"
)

// tcpReader is the connection itself: raw socket calls are Linux's
// (rawio_linux.go).
func tcpReader(nc net.Conn) io.Reader { return nc }

// writevTCP writes frames with the net package's writev.
func writevTCP(tc *net.TCPConn, frames [][]byte) error {
	bufs := net.Buffers(frames)
	_, err := bufs.WriteTo(tc)
	return err
}
