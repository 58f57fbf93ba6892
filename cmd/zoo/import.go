package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

const importUsage = `usage: zoo import [-config zoo.cfg] [-ignore-digest] APACHE_DATADIR [APACHE_DATALOGDIR] ZOO_DATADIR

Recovers the state an Apache ZooKeeper server would start with from its
dataDir (and dataLogDir) and writes it as a new Zoo dataDir. ZOO_DATADIR
must not exist or be empty. -config names the zoo.cfg Zoo will run with,
for an ensemble's membership (default: a standalone server).
`

// runImport is `zoo import`.
func runImport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, importUsage) }
	cfgPath := fs.String("config", "", "zoo.cfg Zoo will run with (for the membership)")
	ignoreDigest := fs.Bool("ignore-digest", false, "import even if the tree does not match a digest Apache stored")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a := fs.Args()
	if len(a) != 2 && len(a) != 3 {
		fs.Usage()
		return errors.New("wrong number of arguments")
	}
	src, logSrc, dst := a[0], a[0], a[len(a)-1]
	if len(a) == 3 {
		logSrc = a[1]
	}
	var cfg *config.Config
	if *cfgPath != "" {
		var err error
		if cfg, err = config.Load(*cfgPath); err != nil {
			return err
		}
	}
	return importDir(src, logSrc, dst, cfg, *ignoreDigest, stdout)
}

func importDir(src, logSrc, dst string, cfg *config.Config, ignoreDigest bool, out io.Writer) error {
	if err := checkEmpty(dst); err != nil {
		return err
	}
	start := time.Now()
	last := start
	opts := apache.LoadOptions{
		Logger:        slog.New(slog.DiscardHandler),
		IgnoreDigest:  ignoreDigest,
		ProgressEvery: 50000,
		Progress: func(nodes, txns int) {
			if now := time.Now(); now.Sub(last) >= 2*time.Second {
				last = now
				el := now.Sub(start).Seconds()
				fmt.Fprintf(out, "  %d znodes loaded, %d txns replayed (%.0f/s)\n", nodes, txns, float64(nodes+txns)/el)
			}
		},
	}
	snapDir, logDir := apache.VersionDir(src), apache.VersionDir(logSrc)
	fmt.Fprintf(out, "reading Apache snapshots in %s, txn logs in %s\n", snapDir, logDir)
	res, err := apache.Load(snapDir, logDir, opts)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(out, "warning: skipped snapshot: %s\n", s)
	}
	st := res.State
	seed, err := seedOptions(cfg, res.Zxid, st)
	if err != nil {
		return err
	}
	sum := summary{nodes: st.Tree.NodeCount(), sessions: len(st.Sessions), ephemerals: st.Tree.EphemeralCount(), digest: st.Tree.Digest()}
	// Only writeZooDir holds the state from here on, and it drops it
	// before reading the snapshot back: two trees at once would double
	// the peak memory.
	res.State = nil
	tmp := filepath.Clean(dst) + fmt.Sprintf(".import-%d", os.Getpid())
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := writeZooDir(tmp, src, st, seed, sum); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := replaceDir(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	el := time.Since(start)
	digest := "no digest stored"
	if res.DigestsChecked > 0 {
		digest = fmt.Sprintf("%d digests verified", res.DigestsChecked-res.DigestMismatches)
		if res.DigestMismatches > 0 {
			digest += fmt.Sprintf(", %d MISMATCHED (see the warnings)", res.DigestMismatches)
		}
	}
	fmt.Fprintf(out, "imported %s (snapshot %s, %d txns replayed from %d logs) into %s in %v (%.0f znodes/s)\n",
		src, res.Snapshot, res.Txns, len(res.Logs), dst, el.Round(time.Millisecond), float64(sum.nodes)/el.Seconds())
	fmt.Fprintf(out, "znodes %d, sessions %d, ephemerals %d, last zxid %#x (Zoo continues at %d), %s\n",
		sum.nodes, sum.sessions, sum.ephemerals, res.Zxid, seed.Index+1, digest)
	return nil
}

// checkEmpty refuses a destination that holds anything but a myid file
// (which an ensemble member's zoo.cfg needs before anything is in it).
func checkEmpty(dst string) error {
	ents, err := os.ReadDir(dst)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() != "myid" {
			return fmt.Errorf("%s is not empty (it holds %s): a new data directory is written there", dst, e.Name())
		}
	}
	return nil
}

// replaceDir moves the directory written at tmp to dst, which checkEmpty
// allowed: dst's myid, if any, goes with it.
func replaceDir(tmp, dst string) error {
	myid := filepath.Join(dst, "myid")
	if _, err := os.Stat(myid); err == nil {
		if err := os.Rename(myid, filepath.Join(tmp, "myid")); err != nil {
			return err
		}
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Rename(tmp, dst)
}

// seedOptions maps Apache's last zxid onto Zoo's log: the log starts at
// index = the last zxid (so every zxid a client saw is ≤ Zoo's, and the
// stats keep Apache's zxids) and term = its epoch, and the membership is
// zoo.cfg's (one voter, id 1 or myid, without one).
func seedOptions(cfg *config.Config, zxid int64, st *txn.State) (replica.SeedOptions, error) {
	o := replica.SeedOptions{Index: uint64(max(zxid, 1)), Term: uint64(max(zxid>>32, 1))}
	switch {
	case cfg == nil:
		o.Voters = []uint64{1}
	case cfg.Distributed():
		for _, s := range cfg.Servers {
			if s.Type == config.Observer {
				o.Learners = append(o.Learners, uint64(s.ID))
			} else {
				o.Voters = append(o.Voters, uint64(s.ID))
			}
		}
		// Zoo's membership, which Apache's dynamic config (if any)
		// does not name the same way.
		if _, err := st.Tree.SetData(tree.ConfigPath, []byte(cfg.Membership()), -1, zxid, 0); err != nil {
			return o, err
		}
	default:
		o.Voters = []uint64{uint64(max(cfg.MyID, 1))}
	}
	if cfg != nil {
		o.Compression = snapCompression(slog.New(slog.DiscardHandler), cfg.SnapshotCompression)
	}
	return o, nil
}

// writeZooDir writes the Zoo data directory (log/, snap/, and Apache's
// myid if there was one) into dir, then checks that the snapshot loads
// back into the same tree.
func writeZooDir(dir, src string, st *txn.State, seed replica.SeedOptions, want summary) error {
	logDir, snapDir := filepath.Join(dir, "log"), filepath.Join(dir, "snap")
	if err := replica.Seed(vfs.Default, logDir, snapDir, st, seed); err != nil {
		return err
	}
	st = nil // the collector may take the tree before the read-back
	runtime.GC()
	if b, err := os.ReadFile(filepath.Join(src, "myid")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "myid"), b, 0o644); err != nil {
			return err
		}
	}
	_, back, err := snap.LoadFile(vfs.Default, snapDir, snap.Name(seed.Index), snap.Options{})
	if err != nil {
		return fmt.Errorf("reading back the written snapshot: %w", err)
	}
	if back.Tree.Digest() != want.digest || len(back.Sessions) != want.sessions || back.Tree.NodeCount() != want.nodes {
		return errors.New("the written snapshot does not read back as the imported tree")
	}
	return nil
}

// summary is what the import reports, and what the written snapshot must
// read back as.
type summary struct {
	nodes, sessions, ephemerals int
	digest                      uint64
}
