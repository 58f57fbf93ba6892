//go:build !linux

package rawsock

import (
	"io"
	"net"
)

// Reader returns nc: raw socket calls are Linux's (rawsock_linux.go).
func Reader(nc net.Conn) io.Reader { return nc }

// Writev writes bufs to nc with net.Buffers.
func Writev(nc net.Conn, bufs [][]byte) error {
	b := net.Buffers(bufs)
	_, err := b.WriteTo(nc)
	return err
}

// Write writes p to nc.
func Write(nc net.Conn, p []byte) (int, error) { return nc.Write(p) }
