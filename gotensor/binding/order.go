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
	k    orderKey
	prev *turn // nil when the key was idle
	done chan struct{}
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
	t.prev = order.last[k]
	order.last[k] = t
	order.pending.Add(1)
	order.mu.Unlock()
	return t
}

// wait blocks until the operations before t have finished, or ctx ends.
func (t *turn) wait(ctx context.Context) error {
	if t.prev == nil {
		return nil
	}
	return waitDone(ctx, t.prev.done)
}

// finish lets the next operation on the key run. It waits for the turn
// before t first (an operation cancelled while queued finishes early), so
// the order holds even then.
func (t *turn) finish() {
	if t.prev != nil {
		<-t.prev.done
		t.prev = nil // the chain behind a finished turn is garbage
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
