// Command barrier is one participant of a double barrier: it waits until
// -n participants have entered, "computes", and waits until all have
// left. Run -n of them with distinct -name:
//
//	go run ./examples/barrier -server 127.0.0.1:2181 -n 3 -name p1
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
	server := flag.String("server", "127.0.0.1:2181", "server address")
	dir := flag.String("dir", "/examples/barrier/round1", "barrier directory (one per round)")
	name := flag.String("name", "p1", "this participant's unique name")
	n := flag.Int("n", 3, "number of participants")
	work := flag.Duration("work", time.Second, "how long the computation takes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	b := recipe.NewDoubleBarrier(c, *dir, *name, *n, nil)
	log.Printf("%s entering; waiting for %d participants", *name, *n)
	if err := b.Enter(ctx); err != nil {
		log.Fatal(err)
	}
	log.Print("all in; computing")
	time.Sleep(*work) // the computation itself, not a wait for coordination
	log.Print("leaving; waiting for the others")
	if err := b.Leave(ctx); err != nil {
		log.Fatal(err)
	}
	log.Print("all left")
}
