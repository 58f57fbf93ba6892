package rawsock

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Reader returns a reader of nc's socket with raw reads if nc is a
// *net.TCPConn, else nc itself.
func Reader(nc net.Conn) io.Reader {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	return rawReader{tc, rc}
}

// rawReader reads a non-blocking socket with raw read calls.
type rawReader struct {
	tc *net.TCPConn
	rc syscall.RawConn
}

func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		n, errno = call(syscall.SYS_READ, fd, unsafe.Pointer(&p[0]), len(p))
		return errno != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, opError("read", r.tc, errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// call makes a raw system call on fd's buffer buf of count bytes (or
// iovecs), one that cannot block, again if a signal (the runtime's
// preemption) interrupted it. buf stays an unsafe.Pointer up to the call,
// so that the buffer is kept alive and followed if it is on a stack that
// moves; only the system call's own arguments may hold it as a uintptr.
func call(trap, fd uintptr, buf unsafe.Pointer, count int) (uintptr, syscall.Errno) {
	for {
		r, _, errno := syscall.RawSyscall(trap, fd, uintptr(buf), uintptr(count))
		if errno != syscall.EINTR {
			return r, errno
		}
	}
}

// maxIovecs is the most buffers one writev takes (IOV_MAX).
const maxIovecs = 1024

var iovecs = sync.Pool{New: func() any { s := make([]syscall.Iovec, 0, 64); return &s }}

// Writev writes bufs to nc, all of them or until an error, with raw
// writev calls if nc is a *net.TCPConn (as many as it takes), else with
// net.Buffers.
func Writev(nc net.Conn, bufs [][]byte) error {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		b := net.Buffers(bufs)
		_, err := b.WriteTo(nc)
		return err
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	ip := iovecs.Get().(*[]syscall.Iovec)
	defer func() { clear(*ip); iovecs.Put(ip) }()
	iov := (*ip)[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			iov = append(iov, syscall.Iovec{Base: &b[0], Len: uint64(len(b))})
		}
	}
	*ip = iov
	for len(iov) > 0 {
		var n uintptr
		var errno syscall.Errno
		err := rc.Write(func(fd uintptr) bool {
			n, errno = call(syscall.SYS_WRITEV, fd, unsafe.Pointer(&iov[0]), min(len(iov), maxIovecs))
			return errno != syscall.EAGAIN
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return opError("writev", tc, errno)
		}
		if n == 0 { // never for a TCP socket; not a reason to spin
			return io.ErrShortWrite
		}
		iov = consumed(iov, uint64(n))
	}
	return nil
}

// Write writes p to nc as Writev does, and returns how much it wrote.
func Write(nc net.Conn, p []byte) (int, error) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc.Write(p)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		var n uintptr
		var errno syscall.Errno
		err := rc.Write(func(fd uintptr) bool {
			n, errno = call(syscall.SYS_WRITE, fd, unsafe.Pointer(&p[done]), len(p)-done)
			return errno != syscall.EAGAIN
		})
		if err != nil {
			return done, err
		}
		if errno != 0 {
			return done, opError("write", tc, errno)
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
		done += int(n)
	}
	return done, nil
}

// opError is the error the net package returns for a failed call, so
// that logs keep the connection's addresses.
func opError(op string, tc *net.TCPConn, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
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
