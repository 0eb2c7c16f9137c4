package redis

import (
	"sync"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/internal/pool"
)

// Frame memory the store recycles. Frames and ranges it reads land in
// buffers of a pool that core gives back once it has decoded them
// (RecycleRange), and the frames core builds for a Put are lent from the
// same pool (LendFrame) and taken back once written. A read or write of a
// large tensor then uses memory already mapped rather than faulting in and
// zeroing fresh pages, which on loopback cost the client about a third of
// a 64 MiB read's CPU time.
var buffers = pool.NewBytes(128<<20, 16)

// minRecycled is the least buffer worth recycling.
const minRecycled = 64 << 10

// handedOut remembers the buffers of the pool the store handed out, by
// address and capacity: a buffer that comes back goes to the pool only if
// it is one of them, never other memory (a caller's own frame, or an
// inline value read, which is valkey-go's behind a string). It holds no
// pointer, so a buffer a caller drops is collected as usual; it forgets
// everything once it holds maxHandedOut, losing only their reuse.
type handedOut struct {
	mu sync.Mutex
	m  map[uintptr]int
}

const maxHandedOut = 4096

func (h *handedOut) add(b []byte) {
	h.mu.Lock()
	if h.m == nil || len(h.m) >= maxHandedOut {
		h.m = map[uintptr]int{}
	}
	h.m[addr(b)] = cap(b)
	h.mu.Unlock()
}

// take reports whether b was handed out, and forgets it.
func (h *handedOut) take(b []byte) bool {
	if cap(b) < minRecycled {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.m[addr(b)]
	delete(h.m, addr(b))
	return ok && c == cap(b)
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// buffer returns n bytes, contents undefined, from the pool where n is
// worth it, remembered in h.
func buffer(h *handedOut, n int) []byte {
	if n < minRecycled {
		return make([]byte, n)
	}
	b := buffers.GetRounded(n)
	h.add(b)
	return b
}

// giveBack returns b to the pool if h has it.
func giveBack(h *handedOut, b []byte) {
	if h.take(b) {
		buffers.Put(b)
	}
}

// RecycleRange takes back a range GetRange returned, or a frame Get did
// (see store.RangeRecycler).
func (s *Store) RecycleRange(b []byte) { giveBack(&s.read, b) }

// LendFrame lends n bytes for a frame about to be Put (see store.Lender).
func (s *Store) LendFrame(n int) []byte { return buffer(&s.lent, n) }

// ReturnFrame takes back a lent frame that was not Put.
func (s *Store) ReturnFrame(b []byte) { giveBack(&s.lent, b) }
