// Command leaderselector takes part in a Curator-compatible
// LeaderSelector: when it leads it works for -work, gives up leadership
// and queues again (AutoRequeue). Start several to see them take turns.
//
//	go run ./examples/leaderselector -server 127.0.0.1:2181 -id a
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
	path := flag.String("path", "/examples/leaderselector", "election path")
	id := flag.String("id", "go-"+time.Now().Format("150405.000"), "participant id")
	work := flag.Duration("work", 2*time.Second, "how long to lead each time")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	s := recipe.NewLeaderSelector(c, *path, *id, func(ctx context.Context, token recipe.FencingToken) error {
		log.Printf("%s leads (fencing token %d)", *id, token)
		select {
		case <-time.After(*work):
			log.Printf("%s gives up leadership", *id)
		case <-ctx.Done(): // lost: connection or session gone, or ^C
			log.Printf("%s lost leadership: %v", *id, ctx.Err())
		}
		return nil
	}, nil)
	s.AutoRequeue()
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	<-ctx.Done()
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}
