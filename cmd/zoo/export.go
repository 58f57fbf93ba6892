package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

const exportUsage = `usage: zoo export [-compression gz|snappy] ZOO_DATADIR APACHE_DATADIR

Writes the state of a (stopped) Zoo data directory as an Apache ZooKeeper
3.8 dataDir: APACHE_DATADIR/version-2/snapshot.<zxid>. Apache starts on it
with the same tree, Stat for Stat; its txns continue after Zoo's last zxid.
APACHE_DATADIR must not exist or be empty.
`

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage) }
	comp := fs.String("compression", "", "snapshot compression: gz or snappy (Apache needs the same zookeeper.snapshot.compression.method only to write)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("wrong number of arguments")
	}
	c := apache.Plain
	switch *comp {
	case "":
	case "gz":
		c = apache.Gzip
	case "snappy":
		c = apache.Snappy
	default:
		return fmt.Errorf("unknown compression %q: gz or snappy", *comp)
	}
	src, dst := fs.Arg(0), fs.Arg(1)
	if err := checkEmpty(dst); err != nil {
		return err
	}
	st, zxid, err := replica.Recover(replica.Config{
		Logger: slog.New(slog.DiscardHandler), FS: vfs.Default,
		Dir: filepath.Join(src, "log"), SnapDir: filepath.Join(src, "snap"),
	})
	if err != nil {
		return err
	}
	tmp := filepath.Clean(dst) + fmt.Sprintf(".export-%d", os.Getpid())
	if err := writeApacheDir(tmp, src, st, zxid, c); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := replaceDir(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	fmt.Fprintf(stdout, "exported %s (zxid %#x: %d znodes, %d sessions) to %s\n",
		src, zxid, st.Tree.NodeCount(), len(st.Sessions), filepath.Join(dst, "version-2", apache.SnapshotName(zxid, c)))
	return nil
}

// writeApacheDir writes the snapshot into dir/version-2, synced, and
// Zoo's myid if there is one.
func writeApacheDir(dir, src string, st *txn.State, zxid int64, c apache.Compression) error {
	v2 := filepath.Join(dir, "version-2")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(v2, apache.SnapshotName(zxid, c)))
	if err != nil {
		return err
	}
	err = apache.WriteSnapshot(f, st, zxid, c)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(src, "myid")); err == nil {
		return os.WriteFile(filepath.Join(dir, "myid"), b, 0o644)
	}
	return nil
}
