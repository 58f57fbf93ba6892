// Command delayqueue puts a few items into a DistributedDelayQueue with
// growing delays, then takes them, each when it is due.
//
//	go run ./examples/delayqueue -server 127.0.0.1:2181
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
	path := flag.String("path", "/examples/delayqueue", "queue path")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	q := recipe.NewDistributedDelayQueue(c, *path, nil)
	start := time.Now()
	for i, d := range []time.Duration{2 * time.Second, 0, time.Second} {
		item := []byte{'a' + byte(i)}
		if err := q.Put(ctx, item, start.Add(d)); err != nil {
			log.Fatal(err)
		}
		log.Printf("put %s, due in %v", item, d)
	}
	for range 3 {
		item, err := q.Take(ctx)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("took %s after %v", item, time.Since(start).Round(100*time.Millisecond))
	}
}
