package binding

import (
	"context"
	"sync"
	"sync/atomic"
)

// Per-key order: operations on one (store handle, key) take effect in the
// order they were submitted. Each asynchronous operation takes a turn when
// it is started, on the caller's thread, and runs once the turn before it
// has finished; a synchronous call waits for the last turn taken. Different
// keys never wait for each other.

type orderKey struct {
	h   int64
	key string
}

// turn is one asynchronous operation's place in its key's queue.
type turn struct {
	k     orderKey
	after <-chan struct{} // the turn before's done; nil when the key was idle
	done  chan struct{}
}

var order = struct {
	mu      sync.Mutex
	last    map[orderKey]*turn
	pending atomic.Int64 // turns not yet finished: 0 lets sync calls skip the lock
}{last: map[orderKey]*turn{}}

// takeTurn queues an operation on key behind those submitted before it.
func takeTurn(h int64, key string) *turn {
	k := orderKey{h, key}
	t := &turn{k: k, done: make(chan struct{})}
	order.mu.Lock()
	if prev := order.last[k]; prev != nil {
		t.after = prev.done
	}
	order.last[k] = t
	order.pending.Add(1)
	order.mu.Unlock()
	return t
}

// wait blocks until the operations before t have finished, or ctx ends.
func (t *turn) wait(ctx context.Context) error {
	if t.after == nil {
		return nil
	}
	return waitDone(ctx, t.after)
}

// come says, without waiting, whether the operations before t have finished.
func (t *turn) come() bool {
	if t.after == nil {
		return true
	}
	select {
	case <-t.after:
		return true
	default:
		return false
	}
}

// finish lets the next operation on the key run. It waits for the turn
// before t first (an operation cancelled while queued finishes early), so
// the order holds even then. (A turn holds only the channel of the one
// before it: the chain behind a finished turn is garbage.)
func (t *turn) finish() {
	if t.after != nil {
		<-t.after
	}
	close(t.done)
	order.mu.Lock()
	if order.last[t.k] == t {
		delete(order.last, t.k)
	}
	order.pending.Add(-1)
	order.mu.Unlock()
}

// awaitKey makes a synchronous call on key wait for the asynchronous
// operations submitted on it before.
func awaitKey(ctx context.Context, h int64, key string) error {
	if order.pending.Load() == 0 {
		return nil
	}
	order.mu.Lock()
	t := order.last[orderKey{h, key}]
	order.mu.Unlock()
	if t == nil {
		return nil
	}
	return waitDone(ctx, t.done)
}

func waitDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ended(ctx)
	}
}
