package interop

import (
	"context"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
)

// The Zoo target runs an in-process server per distinct Options, with the
// settings the suite needs: every four-letter word, and no per-IP limit.
func init() { register(Target{Name: "zoo", Start: startZoo}) }

func startZoo(t testing.TB, o Options) (string, func()) {
	srv, err := server.New(zooConfig(o))
	if err != nil {
		t.Fatalf("zoo: new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zoo: listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("zoo: shutdown: %v", err)
		}
		<-served
	}
	return ln.Addr().String(), stop
}

// interopLogger is where the in-process servers log: nowhere, unless
// ZOO_INTEROP_LOG names a level (debug, info, warn, error), then standard
// error, to diagnose a failure of the suite.
func interopLogger() *slog.Logger {
	var level slog.Level
	if v := os.Getenv("ZOO_INTEROP_LOG"); v == "" || level.UnmarshalText([]byte(v)) != nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// zooConfig is the server configuration for Options.
func zooConfig(o Options) server.Config {
	tick := 2000
	if o.TickTimeMs > 0 {
		tick = o.TickTimeMs
	}
	cfg := server.Config{
		Logger:            interopLogger(),
		TickTime:          time.Duration(tick) * time.Millisecond,
		MinSessionTimeout: int32(o.MinSessionTimeoutMs),
		MaxSessionTimeout: int32(o.MaxSessionTimeoutMs),
		SuperDigest:       o.SuperDigest,
		ExtendedTypes:     o.ExtendedTypes,
		EnforceQuota:      o.EnforceQuota,
		FourLetterWords:   []string{"*"},
		Version:           "3.9.2-zoo",
	}
	if o.ContainerCheckIntervalMs > 0 {
		cfg.ContainerCheck = time.Duration(o.ContainerCheckIntervalMs) * time.Millisecond
	}
	return cfg
}
