package zk

import (
	"context"
	"errors"
	"time"
)

// watchRemoveTimeout bounds the removal of a watch whose context ended.
const watchRemoveTimeout = 10 * time.Second

// Watch is AddWatch for a watch that lives as long as ctx, as etcd's
// Watch(ctx): when ctx ends, the watch is removed from the server and its
// channel gets EventPersistentWatchRemoved and is closed. (AddWatch's ctx
// bounds only the call that sets the watch.) If the server cannot be told
// (the client is between connections), the client drops the watch on its
// own and ignores the server's later notifications for it; the channel
// closes either way. A watch that ends first (session end, overflow) just
// closes, as with AddWatch.
func (c *Client) Watch(ctx context.Context, path string, mode WatchMode) (<-chan Event, error) {
	ch, err := c.AddWatch(ctx, path, mode)
	if err != nil {
		return nil, err
	}
	// The func runs once ctx ends, on a goroutine of its own that lives
	// only as long as the removal (bounded by watchRemoveTimeout).
	context.AfterFunc(ctx, func() { c.endWatch(ch) })
	return ch, nil
}

// endWatch removes the watch of ch, on the server if it can.
func (c *Client) endWatch(ch <-chan Event) {
	rctx, cancel := context.WithTimeout(context.Background(), watchRemoveTimeout)
	defer cancel()
	err := c.RemoveWatch(rctx, ch)
	if err == nil || errors.Is(err, ErrNoWatcher) {
		return
	}
	if w, _, _ := c.watches.lookup(ch); w != nil {
		c.watches.remove(w)
	}
}
