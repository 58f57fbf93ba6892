package server

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: issue 13, defect 5 (10 sessions pipelining getData of 4 KB and
// reading nothing took the server from 176 MB to 923 MB; Apache stops
// reading such sockets). Sessions that send many reads and read no reply
// are not read either once their replies pile up: the bytes the server
// holds for clients stay under the per-connection pause (and the total
// under MaxOutboundTotal), other clients are served meanwhile, and the
// memory is given back when the connections go.
func TestUnreadRepliesPauseTheirConnection(t *testing.T) {
	const sessions, reads = 4, 5000 // 80 MB of replies if nothing stopped them
	tests := []struct {
		name  string
		pause int
		total int64
		bound int64
	}{
		{"per connection", 256 << 10, 64 << 20, sessions * (256<<10 + 16<<10)},
		{"over all connections", 1 << 20, 512 << 10, 512<<10 + sessions*(16<<10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) {
				c.OutboundPause = tt.pause
				c.MaxOutboundTotal = tt.total
			})
			other := newSession(t, ts.addr)
			root := testRoot(t, other)
			data := bytes.Repeat([]byte("d"), 4<<10)
			other.create(root+"/n", data, 0)

			var wg sync.WaitGroup
			for range sessions {
				c := dialSmallBuffer(t, ts.addr)
				c.handshake(connectReq(30000))
				var out []byte
				for range reads {
					_, f := c.request(jute.OpGetData, &jute.PathWatch{Path: root + "/n"})
					out = append(out, f...)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = c.nc.Write(out) // blocks once the server stops reading; the close below ends it
				}()
				t.Cleanup(func() { c.close(); wg.Wait() })
			}

			// Until every pipeline has stalled, the other client is served
			// and the bytes held stay under the bound.
			var peak int64
			stalled := 0
			for last := int64(-1); stalled < 20; {
				if got := other.getData(root + "/n"); !bytes.Equal(got, data) {
					t.Fatal("the other client got wrong data")
				}
				ob := ts.srv.OutboundBytes()
				peak = max(peak, ob)
				if ob > tt.bound {
					t.Fatalf("the server holds %d bytes for clients that do not read; want at most %d", ob, tt.bound)
				}
				if ob == last {
					stalled++
				} else {
					stalled = 0
				}
				last = ob
			}
			t.Logf("peak %d bytes held for %d sessions that do not read", peak, sessions)
		})
	}
}

// Once the connections that read nothing are gone, so are their bytes.
func TestUnreadRepliesAreReleasedOnClose(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.OutboundPause = 64 << 10 })
	setup := newSession(t, ts.addr)
	root := testRoot(t, setup)
	setup.create(root+"/n", bytes.Repeat([]byte("d"), 4<<10), 0)
	c := dialSmallBuffer(t, ts.addr)
	c.handshake(connectReq(30000))
	var out []byte
	for range 1000 {
		_, f := c.request(jute.OpGetData, &jute.PathWatch{Path: root + "/n"})
		out = append(out, f...)
	}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = c.nc.Write(out) }()
	waitFor(t, ioTimeout, func() error {
		if n := ts.srv.OutboundBytes(); n < 32<<10 {
			return fmt.Errorf("only %d bytes queued so far", n)
		}
		return nil
	})
	c.close()
	<-done
	waitFor(t, ioTimeout, func() error {
		if n := ts.srv.OutboundBytes(); n != 0 {
			return fmt.Errorf("%d bytes still held after the connection closed", n)
		}
		return nil
	})
	setup.getData(root + "/n")
}
