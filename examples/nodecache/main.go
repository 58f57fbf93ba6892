// Command nodecache prints the data of one node each time it changes,
// until ^C.
//
//	go run ./examples/nodecache -server 127.0.0.1:2181 -path /examples/config
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
	path := flag.String("path", "/examples/config", "node to follow")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	nc := recipe.NewNodeCache(c, *path)
	nc.AddListener(func(recipe.CacheEvent) {
		if d, ok := nc.Current(); ok {
			log.Printf("%s = %q (version %d)", *path, d.Data, d.Stat.Version)
		} else {
			log.Printf("%s does not exist", *path)
		}
	})
	if err := nc.Start(); err != nil {
		log.Fatal(err)
	}
	<-ctx.Done()
	_ = nc.Close()
}
