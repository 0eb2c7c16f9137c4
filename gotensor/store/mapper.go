package store

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
)

// Mapper is a store that maps a frame into this process's memory for a
// tensor that views it in place (core's View). The mapping is private,
// copy-on-write: a write into it copies the page it touches and never
// reaches the store, and nothing the store does to the key afterwards (a
// replace, a delete, an edit of rows, closing the store) changes what the
// mapping shows, until it is released.
type Mapper interface {
	// MapFrame maps key's frame. It returns nil, and no error, where the
	// frame cannot be mapped (the store keeps it where nothing maps: the
	// caller reads a copy instead).
	MapFrame(ctx context.Context, key string) (*Mapped, error)
}

// MapLender is a Mapper that lends the memory frames to be mapped are
// built in: LendMappable returns header+payload bytes whose payload starts
// on a page (so a view of it is aligned for any dtype), or, where it does
// not map frames of that size, ordinary memory (as Lender's LendFrame).
// The buffer is Put as a frame or handed back with Lender's ReturnFrame.
type MapLender interface {
	LendMappable(header, payload int) []byte
}

// Mapped is a frame mapped for a view. Release it (once) when the view is
// gone: its mapping goes back to the store, which reuses it for a later
// view of the same frame once every page written since is the frame's
// again, so that a view costs no page faults after the first.
type Mapped struct {
	Frame []byte // the whole frame, header and payload, in the private mapping
	// Checked says whether this frame version's checksums were checked
	// already in this process (by an earlier view); MarkChecked records
	// that they were.
	Checked bool
	Pinned  bool // the mapping is page-locked (mem://?pinned=true with a CUDA runtime)
	checked func()
	release func()
	once    sync.Once
}

// MarkChecked records that the frame version's checksums were checked.
func (m *Mapped) MarkChecked() {
	if m.checked != nil {
		m.checked()
	}
}

// Release gives the mapping back; the Frame bytes must not be used after.
func (m *Mapped) Release() { m.once.Do(m.release) }

// MaxIdleMaps bounds the idle mappings kept per frame (a frame viewed by
// several tensors at once has as many mappings).
const MaxIdleMaps = 2

// mapPool keeps the idle private mappings of one file (a memfd, a frame
// file) for reuse by later views of it.
type mapPool struct {
	mu   sync.Mutex
	idle []*cowmap.Mapping
	dead bool
	// src is what a pinned mapping is restored from (the memfd's shared
	// mapping); nil for a file, whose mappings are never pinned.
	src []byte
}

// get returns an idle mapping, or nil.
func (p *mapPool) get() *cowmap.Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		m := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		return m
	}
	return nil
}

// put takes back a mapping a view released: every page written is made
// the file's again (a pinned mapping's are copied back from src), and
// the mapping is kept for the next view, or unmapped when the pool is
// closed or full.
func (p *mapPool) put(m *cowmap.Mapping) {
	ok := false
	if m.Pinned() {
		if p.src != nil {
			Views.Restored.Add(int64(m.Restore(p.src)))
			ok = true
		}
	} else {
		ok = m.Revert()
	}
	p.mu.Lock()
	if ok && !p.dead && len(p.idle) < MaxIdleMaps {
		p.idle = append(p.idle, m)
		m = nil
	}
	p.mu.Unlock()
	if m != nil {
		m.Unmap()
	}
}

// close unmaps the idle mappings; later puts unmap theirs.
func (p *mapPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.dead = nil, true
	p.mu.Unlock()
	for _, m := range idle {
		m.Unmap()
	}
}

// recycle hands a released mapping to the recycler, which reverts and
// pools it off the releasing thread (a tensor's deleter, which holds
// Python's lock): checking which pages were written reads the mapping's
// page table entries, about 100 µs for 16 MiB.
func recycle(p *mapPool, m *cowmap.Mapping) {
	recycler.once.Do(func() {
		recycler.ch = make(chan recycled, 4096)
		go func() {
			for r := range recycler.ch {
				r.p.put(r.m)
				recycler.pending.Add(-1)
			}
		}()
	})
	recycler.pending.Add(1)
	select {
	case recycler.ch <- recycled{p, m}:
	default: // a backlog: do it here
		p.put(m)
		recycler.pending.Add(-1)
	}
}

type recycled struct {
	p *mapPool
	m *cowmap.Mapping
}

var recycler struct {
	once    sync.Once
	ch      chan recycled
	pending atomic.Int64
}

// RecyclePending is the number of released mappings not yet back in
// their pools (tests wait for it to reach 0).
func RecyclePending() int64 { return recycler.pending.Load() }

// ViewCounts count this process's views.
type ViewCounts struct {
	Maps     atomic.Int64 // mappings made for views
	Reused   atomic.Int64 // views served by a mapping kept from an earlier one
	Live     atomic.Int64 // views not yet released
	Restored atomic.Int64 // bytes copied back into pinned mappings that views had written
	Pinned   atomic.Int64 // mappings pinned
}

// Views are this process's view counts.
var Views ViewCounts
