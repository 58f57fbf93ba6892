package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
)

// Errors of Restore.
var (
	// ErrBadSnapshot means the restore's input is not an Apache snapshot
	// Zoo can read (or its tree does not hold together).
	ErrBadSnapshot = errors.New("server: restore: not a valid snapshot")
	// ErrRestoreTooLarge means the snapshot is larger than one log entry
	// may be (it travels to every member in one): restore it offline with
	// `zoo restore` instead.
	ErrRestoreTooLarge = errors.New("server: restore: the snapshot is too large for the log")
)

// MaxRestoreBytes bounds a restore's encoded state: one log entry, and in
// an ensemble one message between members (whose frames are at most
// 64 MiB).
const MaxRestoreBytes = 48 << 20

// Restore replaces the whole database, every znode and session, with an
// Apache snapshot (plain or gzip; what the AdminServer's snapshot command
// streams), as Apache 3.9's restore command does. The new state goes
// through the log as one txn, so every member of an ensemble replaces its
// state at the same point and they stay identical; it is durable once
// Restore returns. Every client connection is then closed (on every
// member): clients reconnect, and those whose sessions the snapshot does
// not hold see them expired. The cluster's membership (/zookeeper/config)
// is kept. Restore returns the zxid of the restore.
func (s *Server) Restore(ctx context.Context, r io.Reader) (int64, error) {
	body, err := readRestore(r)
	if err != nil {
		return 0, err
	}
	if n := len(jute.Marshal(body)); n > MaxRestoreBytes {
		return 0, fmt.Errorf("%w: %d bytes encoded, at most %d", ErrRestoreTooLarge, n, MaxRestoreBytes)
	}
	done := make(chan replica.Event, 1)
	tag, _ := s.reqs.addWrite(&request{op: txn.OpRestore, start: time.Now(), done: done})
	start := time.Now()
	req := txn.Request{Op: txn.OpRestore, Record: body, Time: time.Now().UnixMilli()}
	if err := s.rep.Submit(ctx, req, tag); err != nil {
		s.reqs.take(tag)
		return 0, fmt.Errorf("server: restore: %w", err)
	}
	select {
	case ev := <-done:
		if ev.Kind != replica.Applied {
			return 0, fmt.Errorf("server: restore: the proposal was dropped (leader change); nothing was restored")
		}
		if ev.Result.Err != jute.OK {
			return 0, fmt.Errorf("server: restore: %w", ev.Result.Err)
		}
		s.log.Info("restored the database from a snapshot", "zxid", ev.Zxid, "nodes", len(body.Nodes),
			"sessions", len(body.Sessions), "duration", time.Since(start).Round(time.Millisecond))
		return ev.Zxid, nil
	case <-ctx.Done():
		// The txn may still apply; the caller can see by the data.
		s.reqs.take(tag)
		return 0, fmt.Errorf("server: restore: %w", ctx.Err())
	case <-s.rep.Done():
		s.reqs.take(tag)
		return 0, fmt.Errorf("server: restore: the server stopped before the restore was applied")
	}
}

// readRestore decodes an Apache snapshot stream into a restore txn,
// checking that its tree builds.
func readRestore(r io.Reader) (*txn.RestoreTxn, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	comp := apache.Plain
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		comp = apache.Gzip
	}
	body := &txn.RestoreTxn{}
	snap, err := apache.ReadSnapshot(br, "restore", comp, apache.Options{}, func(n *apache.Node) error {
		body.Nodes = append(body.Nodes, txn.RestoreNode{Path: n.Path, Data: n.Data, ACL: n.ACL, Stat: n.Stat})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	if len(body.Nodes) == 0 {
		return nil, fmt.Errorf("%w: it holds no nodes", ErrBadSnapshot)
	}
	for _, se := range snap.Sessions {
		body.Sessions = append(body.Sessions, txn.RestoreSession{ID: se.ID, TimeoutMs: se.TimeoutMs, Password: apache.Password(se.ID)})
	}
	if _, err := body.Build(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	return body, nil
}

// restored follows a restore txn's apply (st is the new state, write-
// locked): session expiry restarts from the restored sessions, each due
// one timeout from now, and every client is disconnected, since neither
// its watches nor what it read hold for the new state.
func (s *Server) restored(st *txn.State) {
	s.trackSessions(st)
	s.closeClients("the database was restored from a snapshot")
}

// trackSessions restarts session expiry from st's sessions, each due one
// timeout from now.
func (s *Server) trackSessions(st *txn.State) {
	now := s.nowMs()
	s.smu.Lock()
	s.hk.Track(st.Sessions, now)
	s.smu.Unlock()
}
