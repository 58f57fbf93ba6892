// Command semaphorev2 takes one lease of a Curator-compatible
// InterProcessSemaphoreV2 of -max leases, holds it for a while and
// returns it. Run more than -max at once: the others wait.
//
//	go run ./examples/semaphorev2 -server 127.0.0.1:2181 -max 2
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
	server := flag.String("server", "127.0.0.1:2181", "server address")
	path := flag.String("path", "/examples/semaphorev2", "semaphore path")
	max := flag.Int("max", 2, "number of leases")
	hold := flag.Duration("hold", 3*time.Second, "how long to hold the lease")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	s := recipe.NewInterProcessSemaphoreV2(c, *path, *max, nil)
	log.Print("waiting for a lease")
	lease, err := s.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("holding lease %s", lease.Path)
	select {
	case <-time.After(*hold):
	case <-ctx.Done():
	}
	if err := lease.Close(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("returned")
}
