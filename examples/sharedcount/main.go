// Command sharedcount follows a Curator-compatible SharedCount and, with
// -add, adds to it by compare-and-set. Run one without -add to watch the
// changes the others make.
//
//	go run ./examples/sharedcount -server 127.0.0.1:2181 -add 1
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
	path := flag.String("path", "/examples/sharedcount", "count path")
	add := flag.Int("add", 0, "add this to the count and exit (0: watch)")
	flag.Parse()
	ctx, c, done := connect(*server)
	defer done()

	s := recipe.NewSharedCount(c, *path, 0, nil)
	s.AddListener(func(v int32) { log.Printf("count is now %d", v) })
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	log.Printf("count is %d", s.Count())
	if *add == 0 {
		<-ctx.Done()
		return
	}
	for {
		vv := s.VersionedCount()
		ok, err := s.TrySetCount(ctx, vv, vv.Value+int32(*add))
		if err != nil {
			log.Fatal(err)
		}
		if ok {
			log.Printf("set %d -> %d", vv.Value, vv.Value+int32(*add))
			return
		}
		// Someone else changed it first; TrySetCount read the new value.
	}
}
