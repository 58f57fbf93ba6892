package zktest

import (
	"io"
	"net"
	"sync"
)

// Link is a TCP forwarder that a test can cut: it stands for the network
// between two processes. Point one side's configuration at Addr instead
// of the other side's address; SetCut(true) closes every connection
// through it and turns new ones away until SetCut(false), as a partition
// would.
type Link struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// NewLink listens on a free loopback port and forwards to target.
func NewLink(target string) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Link{ln: ln, target: target, conns: map[net.Conn]bool{}}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the address to dial instead of the target.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// SetCut cuts the link (closing what is open) or heals it.
func (l *Link) SetCut(cut bool) {
	l.mu.Lock()
	l.cut = cut
	var open []net.Conn
	if cut {
		for c := range l.conns {
			open = append(open, c)
		}
	}
	l.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// Close stops the link and waits for its goroutines.
func (l *Link) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	_ = l.ln.Close()
	l.SetCut(true)
	l.wg.Wait()
}

func (l *Link) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", l.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !l.track(c, s) {
			_ = c.Close()
			_ = s.Close()
			continue
		}
		l.wg.Add(2)
		go l.pump(c, s)
		go l.pump(s, c)
	}
}

// track registers a connection pair unless the link is cut or closed.
func (l *Link) track(conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut || l.closed {
		return false
	}
	for _, c := range conns {
		l.conns[c] = true
	}
	return true
}

// pump copies one direction; when either side ends, both close.
func (l *Link) pump(dst, src net.Conn) {
	defer l.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	l.mu.Lock()
	delete(l.conns, dst)
	delete(l.conns, src)
	l.mu.Unlock()
}
