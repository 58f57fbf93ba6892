// Command gate is the simple barrier of the recipes guide ("Barriers"):
// processes wait while the barrier is in place, and removing it releases
// them all at once. Set it, start waiters, then lift it:
//
//	go run ./examples/gate -server 127.0.0.1:2181 -do set
//	go run ./examples/gate -server 127.0.0.1:2181 -do wait    (several)
//	go run ./examples/gate -server 127.0.0.1:2181 -do lift
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
	p := flag.String("path", "/examples/gate", "barrier znode")
	do := flag.String("do", "wait", "set, wait or lift")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	b := recipe.NewBarrier(c, *p, nil)
	switch *do {
	case "set":
		err = b.Set(ctx)
	case "lift":
		err = b.Remove(ctx)
	case "wait":
		log.Print("waiting for the barrier to be lifted")
		err = b.Wait(ctx)
	default:
		log.Fatalf("-do %q: want set, wait or lift", *do)
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: done", *do)
}
