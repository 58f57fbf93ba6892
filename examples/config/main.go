// Command config publishes a configuration, or watches one and prints
// every new version (the "ready" znode pattern of the paper, section
// 2.3: a watcher never sees a half-written configuration). Watch in one
// terminal, publish from another:
//
//	go run ./examples/config -server 127.0.0.1:2181
//	go run ./examples/config -server 127.0.0.1:2181 -publish db=10.0.0.1,port=5432
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address (host:port[,host:port][/chroot])")
	dir := flag.String("dir", "/examples/config", "configuration directory")
	publish := flag.String("publish", "", "publish this configuration (key=value,key=value) and exit")
	dur := flag.Duration("for", 0, "stop watching after this long (0: run until interrupted)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if *publish != "" {
		cfg, err := parse(*publish)
		if err != nil {
			log.Fatal(err)
		}
		if err := recipe.PublishConfig(ctx, c, *dir, cfg, nil); err != nil {
			log.Fatal(err)
		}
		log.Printf("published %s", *publish)
		return
	}

	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	log.Print("waiting for a configuration")
	w, err := recipe.WatchConfig(ctx, c, *dir)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	for {
		changed := w.Changed() // take it before Get, so no change is missed
		cfg, gen := w.Get()
		log.Printf("configuration #%d: %s", gen, format(cfg))
		select {
		case <-changed:
		case <-w.Done():
			log.Fatalf("watch ended: %v", w.Err())
		case <-ctx.Done():
			return
		}
	}
}

func parse(s string) (map[string][]byte, error) {
	cfg := map[string][]byte{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-publish: %q is not key=value", kv)
		}
		cfg[k] = []byte(v)
	}
	return cfg, nil
}

func format(cfg map[string][]byte) string {
	var parts []string
	for k, v := range cfg {
		parts = append(parts, k+"="+string(v))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}
