// Command twophase runs the two-phase commit recipe: a coordinator
// creates a transaction with its sites, then every site votes and learns
// the outcome (commit only if all voted commit). One terminal per role:
//
//	go run ./examples/twophase -server 127.0.0.1:2181 -begin -sites a,b
//	go run ./examples/twophase -server 127.0.0.1:2181 -site a -vote commit
//	go run ./examples/twophase -server 127.0.0.1:2181 -site b -vote abort
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/zoohq/zoo/recipe"
	"github.com/zoohq/zoo/zk"
)

func main() {
	server := flag.String("server", "127.0.0.1:2181", "server address (host:port[,host:port][/chroot])")
	tx := flag.String("tx", "/examples/twophase/tx1", "transaction znode (one per transaction)")
	begin := flag.Bool("begin", false, "act as the coordinator: create the transaction for -sites")
	sites := flag.String("sites", "a,b", "comma-separated sites of the transaction (with -begin)")
	site := flag.String("site", "", "act as this site and vote")
	vote := flag.String("vote", "commit", "this site's vote: commit or abort")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := zk.Connect(ctx, *server, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	switch {
	case *begin:
		if err := recipe.BeginTxn(ctx, c, *tx, strings.Split(*sites, ","), nil); err != nil {
			log.Fatal(err)
		}
		log.Printf("transaction %s begun for sites %s", *tx, *sites)
	case *site != "":
		if *vote != "commit" && *vote != "abort" {
			log.Fatalf("-vote %q: want commit or abort", *vote)
		}
		log.Printf("site %s votes %s; waiting for the outcome", *site, *vote)
		commit, err := recipe.Vote(ctx, c, *tx, *site, *vote == "commit")
		if err != nil {
			log.Fatal(err)
		}
		if commit {
			log.Print("outcome: commit")
		} else {
			log.Print("outcome: abort")
		}
	default:
		log.Fatal("give -begin or -site")
	}
}
