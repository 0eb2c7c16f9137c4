package core

import (
	"sync"

	"github.com/gotensor/gotensor/gotensor/frame"
)

// heads keeps the parsed headers of the frames this store writes rows of
// (see frame.Head), so that a row write costs the chunks it touches, not
// the chunk table: a bounded number of bytes of them, any evicted first.
// A header is used only while the frame is the one it was parsed from:
// at its version on a store.Editor, and on another store through Splice,
// which compares the whole old header.
type heads struct {
	mu    sync.Mutex
	m     map[string]*headEntry
	bytes int
}

// headEntry is one key's header.
type headEntry struct {
	mu   sync.Mutex  // held through a row write of the key
	head *frame.Head // nil until parsed, and after a write found the frame changed
	ver  uint64      // the frame's version head was parsed at (a store.Editor's)
	cost int         // bytes it is accounted for
}

// headsBytes bounds the memory of the kept headers (a 4096-row cache of a
// chunk a row keeps about 150 KiB).
const headsBytes = 64 << 20

// entry returns key's entry, made empty when there is none.
func (hs *heads) entry(key string) *headEntry {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]*headEntry{}
	}
	e := hs.m[key]
	if e == nil {
		e = &headEntry{}
		hs.m[key] = e
	}
	return e
}

// set makes h, at version ver, key's header in e (whose lock the caller
// holds), evicting others past the bound.
func (hs *heads) set(key string, e *headEntry, h *frame.Head, ver uint64) {
	e.head, e.ver = h, ver
	cost := 3 * len(h.Bytes()) // the bytes, the parsed entries and the running sums
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m[key] != e {
		return // dropped meanwhile: not kept
	}
	hs.bytes += cost - e.cost
	e.cost = cost
	for k, o := range hs.m {
		if hs.bytes <= headsBytes {
			break
		}
		if o != e {
			hs.bytes -= o.cost
			delete(hs.m, k)
		}
	}
}

// drop forgets key's header: entry e, or any when e is nil.
func (hs *heads) drop(key string, e *headEntry) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if o := hs.m[key]; o != nil && (e == nil || o == e) {
		hs.bytes -= o.cost
		delete(hs.m, key)
	}
}
