package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/backup"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/vfs"
)

const backupUsage = `usage: zoo backup (-datadir DIR [-datalogdir DIR] | -url http://HOST:PORT [-token-file F]) OUT

Writes a backup (the newest snapshot and the log after it, gzipped tar) of
a Zoo server's data directory to OUT ("-": standard output), while the
server runs. -datadir reads the directory on this machine; -url fetches it
from the backup endpoint of a server started with -backup-addr.
`

const restoreUsage = `usage: zoo restore [-to-zxid Z | -to-time T] [-config zoo.cfg] BACKUP DATADIR

Writes a new Zoo data directory from a backup, with every committed txn
it holds, or those up to zxid Z, or up to time T (RFC 3339, or ms since
the epoch). DATADIR must not exist or be empty. -config gives the
membership for an ensemble member.
`

func runBackup(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	dataDir := fs.String("datadir", "", "the server's dataDir")
	dataLogDir := fs.String("datalogdir", "", "the server's dataLogDir (default: dataDir)")
	url := fs.String("url", "", "a server's backup endpoint")
	tokenFile := fs.String("token-file", "", "file holding the endpoint's token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || (*dataDir == "") == (*url == "") {
		fs.Usage()
		return errors.New("give OUT and one of -datadir or -url")
	}
	var out io.Writer = stdout
	var f *os.File
	if name := fs.Arg(0); name != "-" {
		var err error
		if f, err = os.Create(name + ".tmp"); err != nil {
			return err
		}
		defer os.Remove(name + ".tmp")
		defer f.Close()
		out = f
	}
	var err error
	if *url != "" {
		err = fetchBackup(*url, *tokenFile, out)
	} else {
		logDir := *dataLogDir
		if logDir == "" {
			logDir = *dataDir
		}
		var info backup.Info
		info, err = backup.Write(out, vfs.Default, filepath.Join(logDir, "log"), filepath.Join(*dataDir, "snap"), backup.Options{})
		if err == nil {
			fmt.Fprintf(stderr, "backup: snapshot at zxid %d and %d log segments (%d bytes read)\n",
				info.Snapshot.Index, len(info.Segments), info.Bytes)
		}
	}
	if err != nil || f == nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), fs.Arg(0))
}

func fetchBackup(url, tokenFile string, out io.Writer) error {
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(url, "/")+backupPath, nil)
	if err != nil {
		return err
	}
	if tokenFile != "" {
		tok, err := readToken(tokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	_, err = io.Copy(out, resp.Body)
	return err
}

func readToken(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s holds no token", name)
	}
	return tok, nil
}

func runRestore(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, restoreUsage) }
	toZxid := fs.String("to-zxid", "", "restore up to this zxid (decimal or 0x hex)")
	toTime := fs.String("to-time", "", "restore up to this time (RFC 3339 or ms since the epoch)")
	cfgPath := fs.String("config", "", "zoo.cfg the restored server runs with (for an ensemble's membership)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || *toZxid != "" && *toTime != "" {
		fs.Usage()
		return errors.New("give BACKUP and DATADIR, and at most one of -to-zxid and -to-time")
	}
	var opts backup.RestoreOptions
	if *toZxid != "" {
		z, err := strconv.ParseInt(*toZxid, 0, 64)
		if err != nil || z <= 0 {
			return fmt.Errorf("-to-zxid %q: not a zxid", *toZxid)
		}
		opts.Target.Zxid = z
	}
	if *toTime != "" {
		ms, err := parseTime(*toTime)
		if err != nil {
			return err
		}
		opts.Target.Time = ms
	}
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			return err
		}
		if cfg.Distributed() {
			opts.Membership = []byte(cfg.Membership())
			for _, s := range cfg.Servers {
				if s.Type == config.Observer {
					opts.Learners = append(opts.Learners, uint64(s.ID))
				} else {
					opts.Voters = append(opts.Voters, uint64(s.ID))
				}
			}
		} else {
			opts.Voters = []uint64{uint64(max(cfg.MyID, 1))}
		}
	}
	src, dst := fs.Arg(0), fs.Arg(1)
	if err := checkEmpty(dst); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := filepath.Clean(dst) + fmt.Sprintf(".restore-%d", os.Getpid())
	scratch := tmp + ".scratch"
	defer os.RemoveAll(scratch)
	res, err := backup.Restore(in, vfs.Default, scratch, tmp, opts)
	if err == nil {
		err = replaceDir(tmp, dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	fmt.Fprintf(stdout, "restored %s into %s: snapshot at %d, %d txns after it, up to zxid %d (the backup ends at %d): %d znodes, %d sessions\n",
		src, dst, res.Snapshot.Index, res.Txns, res.Zxid, res.End, res.Nodes, res.Sessions)
	return nil
}

func parseTime(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("-to-time %q: not RFC 3339 or ms since the epoch", s)
	}
	return t.UnixMilli(), nil
}

// The backup endpoint: Zoo's own, until the AdminServer (internal/admin)
// offers Apache 3.9's "snapshot" command; it serves backup.Write.
const backupPath = "/zoo/backup"

// backupEndpoint serves backups of the data directory on addr: GET
// /zoo/backup with "Authorization: Bearer <token>" (when a token is set),
// reading at most rate bytes/s (0: unlimited) so that serving clients goes on, one
// backup at a time. It returns the address it listens on and a function
// that stops it.
func backupEndpoint(log *slog.Logger, addr, token string, rate int64, logDir, snapDir string) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("backup endpoint: %w", err)
	}
	busy := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+backupPath, func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				http.Error(w, "a valid backup token is required", http.StatusUnauthorized)
				return
			}
		}
		select {
		case busy <- struct{}{}:
			defer func() { <-busy }()
		default:
			http.Error(w, "a backup is already running", http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		start := time.Now()
		info, err := backup.Write(w, vfs.Default, logDir, snapDir, backup.Options{Rate: rate, Ctx: r.Context()})
		if err != nil {
			log.Warn("backup failed", "err", err)
			return // the stream is cut: the client sees a truncated archive
		}
		log.Info("backup sent", "snapshot", info.Snapshot.Index, "segments", len(info.Segments),
			"bytes", info.Bytes, "took", time.Since(start).Round(time.Millisecond))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("backup endpoint", "err", err)
		}
	}()
	log.Info("backup endpoint", "addr", ln.Addr().String(), "path", backupPath, "token", token != "")
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}

// backupOpts are `zoo server`'s flags for the backup endpoint.
type backupOpts struct {
	addr, tokenFile *string
	rateMB          *float64
}

func backupFlags(fs *flag.FlagSet) backupOpts {
	return backupOpts{
		addr:      fs.String("backup-addr", "", "serve backups (GET /zoo/backup) on this address; off if empty"),
		tokenFile: fs.String("backup-token-file", "", "file holding the token backup clients must send (required unless the address is loopback)"),
		rateMB:    fs.Float64("backup-rate-mb", 20, "read at most this many MB/s of the data directory per backup (0: unlimited)"),
	}
}

// start starts the endpoint if asked. An endpoint reachable from other
// machines without a token would hand the whole tree, ACL-protected nodes
// included, to anyone: it is refused.
func (b backupOpts) start(log *slog.Logger, cfg *config.Config) (func(), error) {
	if *b.addr == "" {
		return func() {}, nil
	}
	var token string
	if *b.tokenFile != "" {
		var err error
		if token, err = readToken(*b.tokenFile); err != nil {
			return nil, err
		}
	} else if host, _, err := net.SplitHostPort(*b.addr); err != nil || !isLoopback(host) {
		return nil, fmt.Errorf("-backup-addr %s is not a loopback address: give -backup-token-file", *b.addr)
	}
	logDir := cfg.DataLogDir
	if logDir == "" {
		logDir = cfg.DataDir
	}
	_, stop, err := backupEndpoint(log, *b.addr, token, int64(*b.rateMB*(1<<20)),
		filepath.Join(logDir, "log"), filepath.Join(cfg.DataDir, "snap"))
	return stop, err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
