// Command curatorcache keeps a local copy of a subtree and prints every
// change, until ^C. Change the subtree with `zoo cli` meanwhile; cut the
// network for a moment and the changes made while away are reported when
// it is back. If the session expires, the cache moves to a new one.
// -depth limits the levels cached, as Curator's TreeCache.
//
//	go run ./examples/curatorcache -server 127.0.0.1:2181 -path /examples
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
	path := flag.String("path", "/examples", "subtree to cache")
	depth := flag.Int("depth", -1, "levels below -path to cache, as TreeCache's maxDepth (-1: all)")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	renew := func(ctx context.Context) (*zk.Client, error) {
		log.Print("session expired: rebuilding on a new session")
		return zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	}
	cc := recipe.NewTreeCache(c, *path, *depth, recipe.WithSessionRenewal(renew))
	cc.AddListener(func(ev recipe.CacheEvent) {
		switch {
		case ev.New != nil:
			log.Printf("%v %s = %q", ev.Type, ev.New.Path, ev.New.Data)
		case ev.Old != nil:
			log.Printf("%v %s", ev.Type, ev.Old.Path)
		default:
			log.Printf("%v: %d nodes", ev.Type, cc.Size())
		}
	})
	if err := cc.Start(); err != nil {
		log.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-cc.Done():
		log.Printf("cache stopped: %v", cc.Err())
	}
	_ = cc.Close()
}
