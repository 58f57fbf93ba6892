// Command ipmutex takes Curator's InterProcessMutex on a path, twice
// (it is reentrant), holds it for a while and prints its fencing token.
// Run it beside a Java process holding a Curator InterProcessMutex on
// the same path: they exclude each other.
//
//	go run ./examples/ipmutex -server 127.0.0.1:2181 -path /examples/ipmutex -hold 3s
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

// connect opens a session on -server and stops on ^C.
func connect(server string) (context.Context, *zk.Client, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	c, err := zk.Connect(ctx, server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	return ctx, c, func() { _ = c.Close(); stop() }
}

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address (host:port[,host:port][/chroot])")
	path := flag.String("path", "/examples/ipmutex", "lock path")
	hold := flag.Duration("hold", 3*time.Second, "how long to hold the lock")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	m := recipe.NewInterProcessMutex(c, *path, nil)
	log.Print("waiting for the lock")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	if err := m.Acquire(ctx); err != nil { // reentrant: counted, not queued
		log.Fatal(err)
	}
	// A store that remembers the highest token it saw refuses writes from
	// a holder that lost the lock without knowing it.
	log.Printf("holding %s, fencing token %d", m.Node(), m.Token())
	select {
	case <-time.After(*hold):
	case <-m.Done():
		log.Fatalf("lock lost: %v", m.Err())
	case <-ctx.Done():
	}
	for range 2 {
		if err := m.Release(context.Background()); err != nil {
			log.Fatal(err)
		}
	}
	log.Print("released")
}
