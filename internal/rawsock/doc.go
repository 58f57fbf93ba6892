// Package rawsock reads and writes TCP sockets with raw system calls, on
// Linux, for the connections that carry a server's load: its clients' and
// its peers' (issue 14).
//
// Go's net package issues a socket's read and write through
// syscall.Syscall, which tells the scheduler the goroutine may block: its
// P is marked as in a system call, and the runtime's monitor thread
// (sysmon), waking every 20 µs while it finds such Ps, hands the P of any
// call that outlasts a wake-up to another thread if goroutines wait on
// it. A loaded server always has goroutines waiting, so it paid for a
// thread hand-off, and for sysmon's own wake-ups, again and again: at 100%
// reads, sysmon was 12.5% of a standalone server's CPU, and a read cost
// 0.13 futex calls, 0.07 sysmon sleeps and 0.31 context switches.
//
// A socket of the net package is non-blocking: read and write return
// EAGAIN instead of waiting, and the wait is the poller's (RawConn's Read
// and Write park the goroutine until the socket is ready, and honour its
// deadlines). So these calls cannot block, and a raw system call, which
// keeps the P, is safe. With them the counts fell to 0.025, 0.002 and 0.09
// per read, and the server's CPU per read by a third (perf/CPU.md,
// session 20). Elsewhere, and for anything but a *net.TCPConn, the
// functions fall back to the connection's own methods.
package rawsock
