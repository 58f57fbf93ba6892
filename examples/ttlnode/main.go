// Command ttlnode keeps a PersistentTtlNode until ^C. Kill it with -9:
// its node disappears about -ttl later. The server needs
// extendedTypesEnabled=true.
//
//	go run ./examples/ttlnode -server 127.0.0.1:2181 -ttl 5s
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
	path := flag.String("path", "/examples/ttlnode", "node to keep")
	ttl := flag.Duration("ttl", 5*time.Second, "how long the node outlives this process")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	n := recipe.NewPersistentTtlNode(c, *path, *ttl, []byte("alive"), nil)
	if err := n.Start(); err != nil {
		log.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("keeping %s alive", *path)
	<-ctx.Done()
	if err := n.Close(context.Background()); err != nil {
		log.Print(err)
	}
}
