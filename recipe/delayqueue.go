package recipe

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Curator's DistributedQueue item layout: nodes path/queue-|<due, ms
// since the epoch, %08X>|NNNNNNNNNN (persistent sequential), holding the
// items serialized by Curator's ItemSerializer: a 4-byte version, then
// per item 0x01, a 4-byte length and the bytes, then 0x02.
const (
	queueItemName   = "queue-"
	itemVersion     = 0x00010001
	itemOpcode      = 0x01
	itemEOF         = 0x02
	delaySeparator  = '|'
	maxItemsPerNode = 1 << 16
)

// ErrBadItem means a queue node does not hold Curator's item encoding.
var ErrBadItem = errors.New("recipe: queue node does not hold Curator's item encoding")

// EncodeItems writes items as Curator's ItemSerializer does.
func EncodeItems(items ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, itemVersion)
	for _, it := range items {
		b = append(b, itemOpcode)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, itemEOF)
}

// DecodeItems reads what EncodeItems (or Curator) wrote.
func DecodeItems(b []byte) ([][]byte, error) {
	if len(b) < 5 || binary.BigEndian.Uint32(b) != itemVersion {
		return nil, fmt.Errorf("%w: bad version", ErrBadItem)
	}
	b = b[4:]
	var items [][]byte
	for {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: no end marker", ErrBadItem)
		}
		op := b[0]
		b = b[1:]
		if op == itemEOF {
			return items, nil
		}
		if op != itemOpcode || len(b) < 4 || len(items) >= maxItemsPerNode {
			return nil, fmt.Errorf("%w: bad item", ErrBadItem)
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: item of %d bytes past the end", ErrBadItem, n)
		}
		items = append(items, bytes.Clone(b[:n]))
		b = b[n:]
	}
}

// DistributedDelayQueue is Curator's DistributedDelayQueue: items put
// with a time before which they may not be taken, stored in Curator's
// layout (so Java consumers and producers on the same path interoperate).
// Take hands out each item at most once: it deletes the item's node
// (with its version) before returning it, as Curator's queue does without
// a lock path; an item whose consumer dies after the delete is lost.
type DistributedDelayQueue struct {
	c   *zk.Client
	dir string
	acl []zk.ACL

	mu      sync.Mutex
	pending [][]byte // the rest of a node that held several items
}

// NewDistributedDelayQueue returns the queue at path (created, with its
// ancestors, as persistent nodes on first use).
func NewDistributedDelayQueue(c *zk.Client, path string, acl []zk.ACL) *DistributedDelayQueue {
	return &DistributedDelayQueue{c: c, dir: path, acl: orOpen(acl)}
}

// Put adds item, to be taken no earlier than due (the zero time: now). Items are created
// without Curator's protection, as Curator's queue creates them (a Java
// consumer skips names that do not start with "queue-"); so after
// zk.ErrConnectionLoss the item may or may not have been queued.
func (q *DistributedDelayQueue) Put(ctx context.Context, item []byte, due time.Time) error {
	if err := ensurePath(ctx, q.c, q.dir, q.acl); err != nil {
		return err
	}
	name := q.dir + "/" + queueItemName + string(delaySeparator) +
		fmt.Sprintf("%08X", max(due.UnixMilli(), 0)) + string(delaySeparator)
	_, _, err := q.c.Create(ctx, name, EncodeItems(item), zk.PersistentSequential, q.acl)
	return err
}

// dueOf parses the due time of a queue node's name.
func dueOf(name string) (int64, bool) {
	j := strings.LastIndexByte(name, delaySeparator)
	if j <= 0 {
		return 0, false
	}
	i := strings.LastIndexByte(name[:j], delaySeparator)
	if i < 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(name[i+1:j], 16, 63)
	return int64(v), err == nil
}

type queued struct {
	name string
	due  int64
	seq  string
}

// ready lists the queue's items by due time, then sequence.
func readyItems(kids []string) []queued {
	var out []queued
	for _, k := range kids {
		if !strings.HasPrefix(k, queueItemName) {
			continue // a foreign node, as Curator skips them
		}
		due, ok := dueOf(k)
		if !ok {
			continue
		}
		out = append(out, queued{name: k, due: due, seq: k[strings.LastIndexByte(k, delaySeparator)+1:]})
	}
	slices.SortFunc(out, func(a, b queued) int {
		if a.due != b.due {
			return int(min(max(a.due-b.due, -1), 1))
		}
		return strings.Compare(a.seq, b.seq)
	})
	return out
}

// Take blocks until an item is due and returns it, or until ctx ends.
func (q *DistributedDelayQueue) Take(ctx context.Context) ([]byte, error) {
	if it, ok := q.popPending(); ok {
		return it, nil
	}
	if err := ensurePath(ctx, q.c, q.dir, q.acl); err != nil {
		return nil, err
	}
	for {
		kids, ch, err := retry2(ctx, func() ([]string, <-chan zk.Event, error) {
			k, _, ch, err := q.c.ChildrenW(ctx, q.dir)
			return k, ch, err
		})
		if err != nil {
			return nil, err
		}
		now := time.Now().UnixMilli()
		var wait <-chan time.Time
		var timer *time.Timer
		for _, it := range readyItems(kids) {
			if it.due > now {
				timer = time.NewTimer(time.Duration(it.due-now) * time.Millisecond)
				wait = timer.C
				break
			}
			got, ok, err := q.claim(ctx, it.name)
			if err != nil || ok {
				dropWatch(ctx, q.c, ch)
				return got, err
			}
		}
		err = q.await(ctx, ch, wait)
		if timer != nil {
			timer.Stop()
		}
		if err != nil {
			return nil, err
		}
	}
}

// await waits for a change to the queue or the next item's due time.
func (q *DistributedDelayQueue) await(ctx context.Context, ch <-chan zk.Event, due <-chan time.Time) error {
	select {
	case ev := <-ch:
		return watchErr(ev)
	case <-due:
		dropWatch(ctx, q.c, ch)
		return nil
	case <-ctx.Done():
		dropWatch(ctx, q.c, ch)
		return ctx.Err()
	}
}

// claim deletes the node (if no one else took it first) and returns its
// first item, keeping the others for later Takes.
func (q *DistributedDelayQueue) claim(ctx context.Context, name string) ([]byte, bool, error) {
	p := q.dir + "/" + name
	data, st, err := q.c.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrConnectionLoss) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	err = q.c.Delete(ctx, p, st.Version)
	switch {
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return nil, false, nil // someone else took it
	case errors.Is(err, zk.ErrConnectionLoss):
		// Unknown whether our delete took effect: look. Gone means ours
		// or another consumer's; an item must not be handed out twice,
		// so a gone node is not taken by us.
		ok, _, xerr := retry2(ctx, func() (bool, zk.Stat, error) { return q.c.Exists(ctx, p) })
		if xerr != nil || ok {
			return nil, false, xerr
		}
		return nil, false, fmt.Errorf("%w: item %s", ErrUncertain, p)
	case err != nil:
		return nil, false, err
	}
	items, err := DecodeItems(data)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", p, err)
	}
	if len(items) == 0 {
		return nil, false, nil
	}
	q.mu.Lock()
	q.pending = append(q.pending, items[1:]...)
	q.mu.Unlock()
	return items[0], true, nil
}

func (q *DistributedDelayQueue) popPending() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return nil, false
	}
	it := q.pending[0]
	q.pending = q.pending[1:]
	return it, true
}
