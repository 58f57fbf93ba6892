// Command leaderlatch joins a Curator-compatible LeaderLatch and reports
// when it gains and loses leadership, until ^C. Start several (Go or
// Java) on one path: one leads; stop it and another takes over.
//
//	go run ./examples/leaderlatch -server 127.0.0.1:2181 -id node1
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
	path := flag.String("path", "/examples/leaderlatch", "election path")
	id := flag.String("id", "go-"+time.Now().Format("150405.000"), "participant id")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	l := recipe.NewLeaderLatch(c, *path, *id, nil)
	leading := l.Observe()
	if err := l.Start(); err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	for {
		select {
		case v, ok := <-leading:
			if !ok {
				log.Fatalf("latch ended: %v", l.Err())
			}
			if v {
				log.Printf("%s leads (fencing token %d)", *id, l.Token())
			} else {
				log.Printf("%s does not lead", *id)
			}
		case <-ctx.Done():
			return
		}
	}
}
