// Command queue puts items on a distributed queue or takes them off:
//
//	go run ./examples/queue -server 127.0.0.1:2181 put a b c
//	go run ./examples/queue -server 127.0.0.1:2181 take    # blocks while empty
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address")
	dir := flag.String("dir", "/examples/queue", "queue directory")
	count := flag.Int("count", 0, "take: stop after this many items (0: until interrupted)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: queue [flags] put item... | take")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	q := recipe.NewQueue(c, *dir, nil)

	switch flag.Arg(0) {
	case "put":
		for _, item := range flag.Args()[1:] {
			if err := q.Put(ctx, []byte(item)); err != nil {
				log.Fatal(err)
			}
		}
	case "take":
		for i := 0; *count == 0 || i < *count; i++ {
			v, err := q.Take(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Fatal(err)
			}
			fmt.Printf("%s\n", v)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}
