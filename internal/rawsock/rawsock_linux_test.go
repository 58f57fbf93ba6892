package rawsock

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

// TestWritevWholeAndInOrder: a batch larger than the socket's buffers
// and than one writev's limit of buffers arrives whole and in order
// (partial writes, EAGAIN and the wait for the socket are all taken).
func TestWritevWholeAndInOrder(t *testing.T) {
	a, b := tcpPair(t)
	var frames [][]byte
	var want bytes.Buffer
	for i := range 3000 { // > maxIovecs
		f := bytes.Repeat([]byte{byte(i)}, 1+i%5000)
		frames = append(frames, f)
		want.Write(f)
	}
	frames = append(frames, nil) // empty frames are skipped
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(b)
		got <- b
	}()
	if err := Writev(a, frames); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if g := <-got; !bytes.Equal(g, want.Bytes()) {
		t.Fatalf("read %d bytes, not the %d written, or not in order", len(g), want.Len())
	}
}

// TestWritevDeadline: a peer that reads nothing cannot hold a writer
// past its write deadline.
func TestWritevDeadline(t *testing.T) {
	a, _ := tcpPair(t)
	_ = a.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	big := make([]byte, 1<<20)
	frames := [][]byte{big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big}
	err := Writev(a, frames)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writev of 32 MiB to a peer that reads nothing: %v, want a deadline error", err)
	}
}

// TestRawReader: reads return what arrived, wait for more, give up at the
// read deadline and end with io.EOF when the peer closes.
func TestRawReader(t *testing.T) {
	a, b := tcpPair(t)
	r := Reader(b)
	if _, ok := r.(rawReader); !ok {
		t.Fatalf("Reader of a TCP connection is %T, want rawReader", r)
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // the reader waits on the poller first
		_, _ = a.Write([]byte("hello"))
	}()
	p := make([]byte, 16)
	n, err := r.Read(p)
	if err != nil || string(p[:n]) != "hello" {
		t.Fatalf("read %q, %v; want hello", p[:n], err)
	}
	_ = b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := r.Read(p); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a deadline error", err)
	}
	_ = b.SetReadDeadline(time.Time{})
	a.Close()
	if n, err := r.Read(p); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed: %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
}

// TestErrorsAsTheNetPackage: a failed call is a *net.OpError naming the
// connection, as the net package's own calls fail.
func TestErrorsAsTheNetPackage(t *testing.T) {
	a, b := tcpPair(t)
	_ = b.SetLinger(0)
	b.Close() // a reset: the next write or read fails
	var err error
	for range 100 {
		if err = Writev(a, [][]byte{make([]byte, 1024)}); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "writev" || oe.Addr.String() != a.RemoteAddr().String() {
		t.Fatalf("writev to a reset connection: %v, want a *net.OpError naming %s", err, a.RemoteAddr())
	}
}

// TestWriteWhole: Write hands over all of a buffer larger than the
// socket's, as net.Conn's Write does, and reports it.
func TestWriteWhole(t *testing.T) {
	a, b := tcpPair(t)
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(b)
		got <- b
	}()
	if n, err := Write(a, want); n != len(want) || err != nil {
		t.Fatalf("write: %d, %v; want %d, nil", n, err, len(want))
	}
	a.Close()
	if g := <-got; !bytes.Equal(g, want) {
		t.Fatalf("read %d bytes, not the %d written", len(g), len(want))
	}
}
