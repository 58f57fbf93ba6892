package recipe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// VersionedValue is a SharedCount's value with the node version it was
// read at, for TrySetCount.
type VersionedValue struct {
	Version int32
	Value   int32
}

// SharedCount is Curator's SharedCount: a 32-bit integer shared by every
// process, stored in a node as 4 big-endian bytes (as Curator writes it),
// read at Start and kept current by a persistent watch. Listeners hear
// every new value. Java processes using Curator's SharedCount on the same
// path share the count.
type SharedCount struct {
	c    *zk.Client
	path string
	seed int32
	acl  []zk.ACL

	notifyMu  sync.Mutex // held while recording a value and telling listeners: one at a time, in order
	mu        sync.Mutex
	cur       VersionedValue
	mzxid     int64 // of the change cur was read at; 0 before the first read
	listeners []func(int32)
	started   bool
	stop      context.CancelFunc
	done      chan struct{}
	err       error
}

// ErrNotCount means a SharedCount's node does not hold 4 bytes.
var ErrNotCount = errors.New("recipe: node does not hold a 4-byte count")

// NewSharedCount returns the count at path; Start creates it with seed
// if it does not exist.
func NewSharedCount(c *zk.Client, path string, seed int32, acl []zk.ACL) *SharedCount {
	return &SharedCount{c: c, path: path, seed: seed, acl: orOpen(acl), done: make(chan struct{})}
}

// AddListener adds f, called with each new value, one at a time and in
// order: on the count's goroutine, or on the caller of a TrySetCount
// that failed and read the newer value. It must not block for long.
func (s *SharedCount) AddListener(f func(int32)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

func countBytes(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func parseCount(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: %d bytes", ErrNotCount, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// Start creates the node if needed, reads the count, and keeps it current
// until Close.
func (s *SharedCount) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("recipe: SharedCount already started")
	}
	s.started = true
	s.mu.Unlock()
	if err := s.c.CreateParents(ctx, s.path, s.acl); err != nil {
		return err
	}
	if _, err := retry(ctx, func() (string, error) {
		p, _, err := s.c.Create(ctx, s.path, countBytes(s.seed), zk.Persistent, s.acl)
		return p, err
	}); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	ch, err := retry(ctx, func() (<-chan zk.Event, error) { return s.c.Watch(wctx, s.path, zk.WatchPersistent) })
	if err != nil {
		cancel()
		return err
	}
	if err := s.read(ctx, false); err != nil {
		cancel()
		return err
	}
	s.stop = cancel
	go func() {
		err := s.run(wctx, ch)
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	}()
	return nil
}

func (s *SharedCount) run(ctx context.Context, ch <-chan zk.Event) error {
	for ev := range ch {
		switch {
		case ev.Type == zk.EventNotWatching:
			return watchErr(ev)
		case ev.Type == zk.EventNodeDataChanged, ev.Type == zk.EventNodeCreated,
			ev.Type == zk.EventSession && ev.State == zk.StateConnected:
			if err := s.read(ctx, true); err != nil && ctx.Err() == nil && !errors.Is(err, zk.ErrConnectionLoss) &&
				!errors.Is(err, zk.ErrNoNode) {
				return err
			}
		}
	}
	return nil // the watch was removed: Close
}

// read fetches the count and, if it is newer, records it and (notify)
// tells the listeners.
func (s *SharedCount) read(ctx context.Context, notify bool) error {
	data, st, err := retry2(ctx, func() ([]byte, zk.Stat, error) { return s.c.Get(ctx, s.path) })
	if err != nil {
		return err
	}
	v, err := parseCount(data)
	if err != nil {
		return err
	}
	s.update(VersionedValue{Version: st.Version, Value: v}, st.Mzxid, notify)
	return nil
}

// update records vv if it was written after what we know: zxids order
// writes even across a delete and re-create, which versions do not.
func (s *SharedCount) update(vv VersionedValue, mzxid int64, notify bool) {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.mu.Lock()
	if mzxid <= s.mzxid {
		s.mu.Unlock()
		return
	}
	s.cur, s.mzxid = vv, mzxid
	listeners := append([]func(int32){}, s.listeners...)
	s.mu.Unlock()
	if notify {
		for _, f := range listeners {
			f(vv.Value)
		}
	}
}

// Count returns the latest value known.
func (s *SharedCount) Count() int32 { return s.VersionedCount().Value }

// VersionedCount returns the latest value known and its version.
func (s *SharedCount) VersionedCount() VersionedValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// SetCount sets the count unconditionally.
func (s *SharedCount) SetCount(ctx context.Context, v int32) error {
	_, err := s.c.Set(ctx, s.path, countBytes(v), -1)
	return err
}

// TrySetCount sets the count to v if it is still at prev's version, and
// reports whether it did. If it was not, it reads the newer value, so
// that VersionedCount returns it for the next try (as Curator does).
func (s *SharedCount) TrySetCount(ctx context.Context, prev VersionedValue, v int32) (bool, error) {
	st, err := s.c.Set(ctx, s.path, countBytes(v), prev.Version)
	if errors.Is(err, zk.ErrBadVersion) {
		return false, s.read(ctx, true)
	}
	if err != nil {
		return false, err
	}
	s.update(VersionedValue{Version: st.Version, Value: v}, st.Mzxid, true)
	return true, nil
}

// Close stops following the count. It returns the error that had stopped
// it, if any (ErrLost when the session ended).
func (s *SharedCount) Close() error {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
