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

// mapPool keeps the private mappings of one file (a memfd, a frame file)
// that views released, for reuse by later views of it. A released mapping
// is dirty until its written pages are the file's again (Revert; a pinned
// mapping's are copied back from src). A mapping whose writes are tracked
// (cowmap's write protection) is cleaned by the releasing thread itself,
// in microseconds: handing it to another thread would cost more, in the
// wake-ups and preemptions of a model's compute threads sharing the
// cores. Any other is cleaned by the cleaner, off the releasing thread (a
// tensor's deleter, holding Python's lock: finding its written pages
// looks at each page, about 100 µs for 16 MiB); a view that finds only
// dirty mappings cleans one itself.
type mapPool struct {
	mu    sync.Mutex
	idle  []*cowmap.Mapping // clean
	dirty []*cowmap.Mapping // released, not yet clean
	dead  bool
	// src is what a pinned mapping is restored from (the memfd's shared
	// mapping); nil for a file, whose mappings are never pinned.
	src []byte
}

// get returns a clean mapping, cleaning a dirty one if need be, or nil.
func (p *mapPool) get() *cowmap.Mapping {
	p.mu.Lock()
	if m := pop(&p.idle); m != nil {
		p.mu.Unlock()
		return m
	}
	m := pop(&p.dirty)
	p.mu.Unlock()
	if m == nil {
		return nil
	}
	recycler.pending.Add(-1)
	if p.clean(m) {
		return m
	}
	m.Unmap()
	return nil
}

func pop(list *[]*cowmap.Mapping) *cowmap.Mapping {
	n := len(*list)
	if n == 0 {
		return nil
	}
	m := (*list)[n-1]
	(*list)[n-1] = nil
	*list = (*list)[:n-1]
	return m
}

// clean makes m's pages the file's again; false where it cannot.
func (p *mapPool) clean(m *cowmap.Mapping) bool {
	if m.Pinned() {
		if p.src == nil {
			return false
		}
		Views.Restored.Add(int64(m.Restore(p.src)))
		return true
	}
	return m.Revert()
}

// put takes back a mapping a view released, dirty: cleaned here if its
// writes are tracked, else by the cleaner.
func (p *mapPool) put(m *cowmap.Mapping) {
	if m.Tracked() && !m.Pinned() {
		p.keep(m, p.clean(m))
		return
	}
	p.mu.Lock()
	dead := p.dead
	if !dead {
		p.dirty = append(p.dirty, m)
	}
	p.mu.Unlock()
	if dead {
		m.Unmap()
		return
	}
	recycler.pending.Add(1)
	recycler.start()
	select {
	case recycler.ch <- p:
	default: // a backlog: the next view of it cleans it
	}
}

// cleanOne cleans one dirty mapping, keeping it for the next view, or
// unmapping it when the pool is closed or holds enough.
func (p *mapPool) cleanOne() {
	p.mu.Lock()
	m := pop(&p.dirty)
	p.mu.Unlock()
	if m == nil { // taken by a view meanwhile
		return
	}
	defer recycler.pending.Add(-1)
	p.keep(m, p.clean(m))
}

// keep keeps m, cleaned (ok) or not, for the next view, or unmaps it when
// it is not clean, the pool is closed or it holds enough.
func (p *mapPool) keep(m *cowmap.Mapping, ok bool) {
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

// close unmaps the idle and dirty mappings; later puts unmap theirs.
func (p *mapPool) close() {
	p.mu.Lock()
	idle, dirty := p.idle, p.dirty
	p.idle, p.dirty, p.dead = nil, nil, true
	p.mu.Unlock()
	recycler.pending.Add(-int64(len(dirty)))
	for _, m := range append(idle, dirty...) {
		m.Unmap()
	}
}

// recycle gives a released mapping back to its pool.
func recycle(p *mapPool, m *cowmap.Mapping) { p.put(m) }

// cleaner cleans released mappings in the background.
type cleaner struct {
	once    sync.Once
	ch      chan *mapPool
	pending atomic.Int64 // dirty mappings
}

var recycler cleaner

func (r *cleaner) start() {
	r.once.Do(func() {
		r.ch = make(chan *mapPool, 4096)
		go func() {
			for p := range r.ch {
				p.cleanOne()
			}
		}()
	})
}

// RecyclePending is the number of released mappings not yet clean (tests
// wait for it to reach 0).
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
