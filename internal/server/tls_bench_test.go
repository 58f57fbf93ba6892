package server

import (
	"bytes"
	"crypto/tls"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// The TLS benchmarks are BenchmarkGetData1K and BenchmarkSetData1K over a
// TLS connection (TLS 1.3, ECDSA P-256, AES-GCM), and full handshakes. The
// client runs in the same process, so ns/op counts both ends' TLS work:
// compare with the plaintext benchmarks for the cost TLS adds.

func benchTLSClient(b *testing.B) *rawClient {
	e := newTLSEnv(b)
	ts := benchServer(b)
	addr := serveTLS(b, ts, &Secure{TLS: e.serverConfig(tls.RequireAndVerifyClientCert), X509: true})
	c, err := dialTLS(b, addr, e.clientConfig(e.client))
	if err != nil {
		b.Fatal(err)
	}
	c.handshake(connectReq(30000))
	return c
}

func BenchmarkGetData1KTLS(b *testing.B) {
	c := benchTLSClient(b)
	data := bytes.Repeat([]byte("g"), 1024)
	c.create("/bench", data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	benchPipelined(b, c, jute.OpGetData, &jute.PathWatch{Path: "/bench"})
}

func BenchmarkSetData1KTLS(b *testing.B) {
	c := benchTLSClient(b)
	data := bytes.Repeat([]byte("s"), 1024)
	c.create("/bench", nil, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	benchPipelined(b, c, jute.OpSetData, &jute.SetDataRequest{Path: "/bench", Data: data, Version: -1})
}

// BenchmarkTLSHandshake: one op is a connection with a full TLS 1.3
// handshake and client certificate, a session, and its close.
func BenchmarkTLSHandshake(b *testing.B) {
	e := newTLSEnv(b)
	ts := benchServer(b)
	addr := serveTLS(b, ts, &Secure{TLS: e.serverConfig(tls.RequireAndVerifyClientCert), X509: true})
	cfg := e.clientConfig(e.client)
	cfg.ClientSessionCache = nil
	b.ResetTimer()
	for range b.N {
		c, err := dialTLS(b, addr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.handshake(connectReq(30000))
		_ = c.nc.Close()
	}
}
