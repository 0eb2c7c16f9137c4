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

// handedOut remembers the buffers the store's reads handed out, by address
// and capacity: a range that comes back goes to the pool only if it is one
// of them, never an inline value read (valkey-go's memory behind a
// string). It holds no pointer, because callers that do not give a read
// back (a row read, a header) are common and their buffers must be
// collected; it forgets everything once it holds maxHandedOut, losing only
// their reuse. Lent frames are held until they come back (pool.Lent): a
// caller's own frame goes to Put, and must never pass for one of them.
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

// readBuffer returns n bytes for a read, contents undefined, from the
// pool where n is worth it.
func (s *Store) readBuffer(n int) []byte {
	if n < minRecycled {
		return make([]byte, n)
	}
	b := buffers.GetRounded(n)
	s.read.add(b)
	return b
}

// RecycleRange takes back a range GetRange returned, or a frame Get did
// (see store.RangeRecycler).
func (s *Store) RecycleRange(b []byte) {
	if s.read.take(b) {
		buffers.Put(b)
	}
}

// LendFrame lends n bytes for a frame about to be Put (see store.Lender).
func (s *Store) LendFrame(n int) []byte {
	if n < minRecycled {
		return make([]byte, n)
	}
	return s.lent.Get(n)
}

// ReturnFrame takes back a lent frame that was not Put.
func (s *Store) ReturnFrame(b []byte) { s.lent.Back(b) }
