// Command revocable holds a revocable lock (recipes guide, "Revocable
// Shared Locks"), or asks its holder to give it up. The holder releases
// when asked, or after -hold. In two terminals:
//
//	go run ./examples/revocable -server 127.0.0.1:2181 -hold 1m
//	go run ./examples/revocable -server 127.0.0.1:2181 -revoke
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

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address (host:port[,host:port][/chroot])")
	dir := flag.String("dir", "/examples/revocable", "lock directory")
	hold := flag.Duration("hold", time.Minute, "how long to hold the lock if nobody revokes it")
	revoke := flag.Bool("revoke", false, "ask the current holder to release the lock, and exit")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if *revoke {
		holders, err := recipe.Holders(ctx, c, *dir)
		if err != nil {
			log.Fatal(err)
		}
		for _, h := range holders {
			if err := recipe.Revoke(ctx, c, h); err != nil {
				log.Fatal(err)
			}
			log.Printf("asked %s to release", h)
		}
		if len(holders) == 0 {
			log.Print("nobody holds the lock")
		}
		return
	}

	m := recipe.NewMutex(c, *dir, nil)
	log.Print("waiting for the lock")
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("holding the lock (%s)", m.Node())
	select {
	case <-m.Revoked(): // revocation needs the holder's consent: we give it
		log.Print("asked to release")
	case <-time.After(*hold):
	case <-m.Done():
		log.Fatalf("lock lost: %v", m.Err())
	case <-ctx.Done():
	}
	if err := m.Unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("released")
}
