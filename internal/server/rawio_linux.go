package server

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Socket reads and writes as raw system calls (issue 14).
//
// Go's net package issues a socket's read and writev through
// syscall.Syscall, which tells the scheduler the goroutine may block: its
// P is marked as in a system call, and the runtime's monitor thread
// (sysmon), waking every 20 µs while it finds such Ps, hands the P of any
// call that outlasts a wake-up to another thread if goroutines wait on
// it. A loaded server's reads always have goroutines waiting, so it paid
// for a thread hand-off, and for sysmon's own wake-ups, again and again:
// at 100% reads, sysmon was 12.5% of the server's CPU and a read cost 0.13
// futex calls, 0.07 sysmon sleeps and 0.31 context switches.
//
// A socket of the net package is non-blocking: read and writev return
// EAGAIN instead of waiting, and the wait is the poller's (RawConn's
// Read and Write park the goroutine until the socket is ready, and honour
// its deadlines). So these calls cannot block, and a raw system call,
// which keeps the P, is safe. With them the counts fell to 0.025, 0.002
// and 0.09 per read, and the server's CPU per read by a third
// (perf/CPU.md, session 20).

// tcpReader returns a reader for a connection's socket: raw reads for a
// TCP socket, the connection itself otherwise.
func tcpReader(nc net.Conn) io.Reader {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	return rawReader{rc}
}

// rawReader reads a non-blocking socket with raw read calls.
type rawReader struct{ rc syscall.RawConn }

func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		n, errno = rawCall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		return errno != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// rawCall makes a raw system call that cannot block, again if a signal
// (the runtime's preemption) interrupted it.
func rawCall(trap, a1, a2, a3 uintptr) (uintptr, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(trap, a1, a2, a3)
		if errno != syscall.EINTR {
			return n, errno
		}
	}
}

// maxIovecs is the most buffers one writev takes (IOV_MAX).
const maxIovecs = 1024

var iovecs = sync.Pool{New: func() any { s := make([]syscall.Iovec, 0, 64); return &s }}

// writevTCP writes frames to a TCP socket with raw writev calls, as many
// as it takes.
func writevTCP(tc *net.TCPConn, frames [][]byte) error {
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	ip := iovecs.Get().(*[]syscall.Iovec)
	defer func() { clear(*ip); iovecs.Put(ip) }()
	iov := (*ip)[:0]
	for _, f := range frames {
		if len(f) > 0 {
			iov = append(iov, syscall.Iovec{Base: &f[0], Len: uint64(len(f))})
		}
	}
	*ip = iov
	for len(iov) > 0 {
		var n uintptr
		var errno syscall.Errno
		err := rc.Write(func(fd uintptr) bool {
			n, errno = rawCall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(min(len(iov), maxIovecs)))
			return errno != syscall.EAGAIN
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return os.NewSyscallError("writev", errno)
		}
		iov = consumed(iov, uint64(n))
	}
	return nil
}

// consumed drops the first n bytes from iov.
func consumed(iov []syscall.Iovec, n uint64) []syscall.Iovec {
	for len(iov) > 0 && n >= iov[0].Len {
		n -= iov[0].Len
		iov = iov[1:]
	}
	if n > 0 {
		iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
		iov[0].Len -= n
	}
	return iov
}
