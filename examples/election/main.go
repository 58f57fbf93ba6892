// Command election runs for leader; the leader works until interrupted
// (Ctrl-C resigns) and the next candidate takes over. Run several:
//
//	go run ./examples/election -server 127.0.0.1:2181 -id a
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
	dir := flag.String("dir", "/examples/election", "election directory")
	id := flag.String("id", "", "this candidate's name (default: host name and pid)")
	flag.Parse()
	if *id == "" {
		h, _ := os.Hostname()
		*id = h + "-" + time.Now().Format("150405.000")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	e := recipe.NewElection(c, *dir, []byte(*id), nil)
	if v, err := recipe.Leader(ctx, c, *dir); err == nil {
		log.Printf("current leader: %s", v)
	}
	log.Printf("%s campaigning", *id)
	if err := e.Campaign(ctx); err != nil {
		log.Fatal(err)
	}
	// Leader procedure done (here: nothing), say so for everyone watching.
	if err := e.Acknowledge(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s is the leader; Ctrl-C to step down", *id)
	select {
	case <-e.Done():
		log.Fatalf("leadership lost: %v", e.Err())
	case <-ctx.Done():
	}
	if err := e.Resign(context.Background()); err != nil {
		log.Fatal(err)
	}
	log.Print("stepped down")
}
