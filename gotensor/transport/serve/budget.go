// Package serve is what every memory-node transport shares: the request
// handler over a store, streamed uploads, and the node's one byte budget.
package serve

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Budget is a node's one allowance for bytes received but not yet stored
// (payloads being read, streamed parts held until their commit), shared by
// every connection of every transport. With a capacity, those bytes count
// with what the store holds: a payload that would take the node past its
// capacity is refused (StoreFull) before any of it is allocated. A payload
// that replaces a key may use the room of the frame it replaces (both are
// held while it arrives: the one overshoot the budget allows). Without
// one, payloads are allocated whole while less than Prealloc is held, and
// grow as their bytes arrive beyond it.
type Budget struct {
	capacity int64
	stored   func() int64
	size     func(key string) int64 // of the frame under key (0: none)
	lender   store.Lender           // nil: payloads get new memory
	parts    *pool.Bytes            // streamed parts' memory, back from their commit
	mu       sync.Mutex             // over a reservation's check and its add
	held     atomic.Int64           // bytes reserved; read without the lock
}

// Prealloc bounds what an unbounded node allocates ahead of the bytes.
const Prealloc = 4 << 30

// PartsPooled bounds the idle memory of streamed parts a node keeps: a
// part is copied into its frame at the commit, and its memory goes to the
// next upload's parts rather than to the garbage collector.
const PartsPooled = 256 << 20

// NewBudget is the budget of a node serving st (capacity 0: unbounded).
func NewBudget(capacity int64, st store.Store) *Budget {
	return &Budget{capacity: capacity, lender: st.Caps().Lender, parts: pool.NewBytes(PartsPooled, 64), stored: func() int64 { return store.UsedOf(st) }, size: func(key string) int64 {
		_, n, err := st.Head(context.Background(), key, 0)
		if err != nil {
			return 0
		}
		return n
	}}
}

// Reserve holds n bytes; release gives them back (once).
func (b *Budget) Reserve(n uint64) (release func(), err error) { return b.reserve(n, "") }

// ReserveFor holds n bytes of m's payload; a put (whole, in parts and
// their commit, or one-sided) may use the room of the frame it replaces.
func (b *Budget) ReserveFor(m *wire.Message, n uint64) (release func(), err error) {
	switch m.Op {
	case wire.OpPut, wire.OpPutPart, wire.OpPutCommit, wire.OpPutRMA, wire.OpPutLayout:
		return b.reserve(n, m.Key)
	}
	return b.reserve(n, "")
}

func (b *Budget) reserve(n uint64, key string) (release func(), err error) {
	b.mu.Lock()
	if b.capacity > 0 {
		stored := b.stored()
		held := b.held.Load()
		if int64(n) > b.capacity-stored-held && key != "" {
			stored -= b.size(key)
		}
		if int64(n) > b.capacity-stored-held {
			b.mu.Unlock()
			return nil, errs.New(errs.StoreFull, "node full: %d bytes stored and %d being received, %d more would pass the capacity of %d",
				stored, held, n, b.capacity)
		}
	}
	b.held.Add(int64(n))
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.held.Add(-int64(n))
		})
	}, nil
}

// IdleRoom is how much idle frame memory a store holding used bytes may
// keep for reuse on this node (see store.Mem.SetIdleRoom): what its
// capacity leaves free beside the payloads being received and the idle
// memory of streamed parts, so that the node's memory stays within its
// capacity, as its heap limit expects.
func (b *Budget) IdleRoom(used int64) int64 {
	return b.capacity - used - b.held.Load() - b.parts.Held()
}

// PartsIdle is the memory of streamed parts kept for the next upload's.
func (b *Budget) PartsIdle() int64 { return b.parts.Held() }

// Held is the bytes reserved now.
func (b *Budget) Held() int64 { return b.held.Load() }

// Alloc is a wire.Alloc drawing on the budget: the payload's buffer, whole
// while the budget allows it.
func (b *Budget) Alloc(m *wire.Message, n uint64) ([]byte, error) {
	release, err := b.ReserveFor(m, n)
	if err != nil {
		return nil, err
	}
	m.Release = release
	if b.capacity == 0 && b.Held() > Prealloc {
		return make([]byte, 0, min(n, wire.ReadStep)), nil
	}
	return b.Buffer(m, n), nil
}

// Buffer is the memory m's payload of n bytes is received into. A whole
// frame (a put, also one-sided) lands in memory the store lends (a dropped
// frame's, see store.Lender), so a node that replaces frames reuses their
// memory instead of making garbage of each; m.Lent then hands it back if
// the store refuses the frame. A streamed part lands in the memory of
// parts already committed (see Uploads). Other payloads get new memory.
// Every byte is written: none is zeroed first.
func (b *Budget) Buffer(m *wire.Message, n uint64) []byte {
	switch m.Lent = b.Lent(m); {
	case m.Op == wire.OpPutPart:
		return b.parts.GetRounded(int(n))
	case m.Lent != nil:
		return b.lender.LendFrame(int(n))[:n]
	}
	return make([]byte, n)
}

// Lent is what takes back the buffer Buffer gives m's payload (nil: new
// memory, the garbage collector's), for a receiver that rebuilds m.
func (b *Budget) Lent(m *wire.Message) func([]byte) {
	switch {
	case m.Op == wire.OpPutPart:
		return b.parts.Put
	case b.lender != nil && (m.Op == wire.OpPut || m.Op == wire.OpPutRMA):
		return b.lender.ReturnFrame
	}
	return nil
}
