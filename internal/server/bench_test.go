package server

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// The benchmarks drive one connection over loopback with the raw client,
// keeping up to benchWindow requests in flight, so they measure the
// server's per-request cost (allocs/op counts the server's allocations:
// it runs in this process) rather than round trips. Profile the server with
//
//	go test -run=^$ -bench=GetData1K -cpuprofile=cpu.out ./internal/server

const benchWindow = 256

func benchServer(b *testing.B) *testServer {
	cfg := baseConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	ts := newTestServer(b, cfg)
	b.Cleanup(func() {
		if err := ts.shutdown(10 * time.Second); err != nil {
			b.Error(err)
		}
	})
	return ts
}

// benchPipelined sends b.N copies of one request, with xids 1..b.N, and
// checks every reply.
func benchPipelined(b *testing.B, c *rawClient, op jute.Op, rec jute.Record) {
	template := appendRequest(nil, 0, op, rec)
	batch := make([]byte, 0, benchWindow*len(template))
	sent, got := 0, 0
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for got < b.N {
		if sent-got <= benchWindow/2 && sent < b.N {
			batch = batch[:0]
			for sent < b.N && sent-got < benchWindow {
				sent++
				off := len(batch)
				batch = append(batch, template...)
				binary.BigEndian.PutUint32(batch[off+4:], uint32(sent))
			}
			c.writeRaw(batch)
		}
		frame, err := c.readFrame()
		if err != nil {
			b.Fatalf("reply %d: %v", got+1, err)
		}
		got++
		if xid := int32(binary.BigEndian.Uint32(frame)); xid != int32(got) {
			b.Fatalf("reply %d has xid %d", got, xid)
		}
		if code := jute.Code(binary.BigEndian.Uint32(frame[12:])); code != jute.OK {
			b.Fatalf("reply %d: %v", got, code)
		}
	}
	b.StopTimer()
	// On a shared machine wall time per op mostly measures the other
	// tenants; the process's CPU time per op (server and the light raw
	// client together) is the figure to compare.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkGetData1K(b *testing.B) {
	ts := benchServer(b)
	c := newSession(b, ts.addr)
	data := bytes.Repeat([]byte("g"), 1024)
	c.create("/bench", data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	benchPipelined(b, c, jute.OpGetData, &jute.PathWatch{Path: "/bench"})
}

func BenchmarkSetData1K(b *testing.B) {
	ts := benchServer(b)
	c := newSession(b, ts.addr)
	data := bytes.Repeat([]byte("s"), 1024)
	c.create("/bench", nil, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	benchPipelined(b, c, jute.OpSetData, &jute.SetDataRequest{Path: "/bench", Data: data, Version: -1})
}
