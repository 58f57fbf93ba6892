// Command persistentnode keeps an ephemeral node (under a protected name)
// present until ^C: delete it with `zoo cli` and it comes back.
//
//	go run ./examples/persistentnode -server 127.0.0.1:2181 -path /examples/members/me
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
	path := flag.String("path", "/examples/members/me", "node to keep")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	n := recipe.NewPersistentNode(c, *path, zk.Ephemeral, true, []byte("hello"), nil)
	if err := n.Start(); err != nil {
		log.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("keeping %s", n.ActualPath())
	select {
	case <-ctx.Done():
	case <-n.Done():
		log.Printf("stopped: %v", n.Err())
	}
	if err := n.Close(context.Background()); err != nil {
		log.Print(err)
	}
}
