package store

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
)

// A Mem store keeps frames that views may map (codec none, a payload of
// at least ViewMin) in memfd memory rather than on the Go heap: its own
// copy is a shared mapping of the memfd, written by the frame writer in
// place, and each view is a private mapping of the same memfd. The frame
// is placed in the memfd so that its payload starts on a page. A view
// holds the frame (a reference, as a lease does), so that a replace or a
// delete of the key, an edit of its rows (made into a new frame while the
// frame is held, as for a lease) or closing the store leaves it as it was;
// a frame's memfd is reused or freed once its last view is released.

// ViewMin is the smallest payload kept in memory views can map; smaller
// frames are read as copies (a copy of them costs less than a mapping).
var ViewMin = 256 << 10

// maxIdlePerClass bounds the idle memfd buffers kept per size class (a
// power of two), beside the byte bound: a model's layers write dozens of
// frames of one size, and a buffer not kept is unmapped, so that the next
// frame of that size faults in and zeroes fresh shared memory page by
// page. Each idle buffer holds a descriptor, hence a bound on the count
// too.
const maxIdlePerClass = 64

// memViews is a Mem's memfd memory.
type memViews struct {
	mu      sync.Mutex
	loans   map[*byte]*memfdBuf // lent (LendMappable) and not yet Put or returned, by their first byte
	idle    [64][]*memfdBuf     // buffers of dropped frames, by size class, for reuse
	held    int64               // bytes of idle buffers
	bound   int64               // at most this many idle bytes
	closed  bool
	pinned  atomic.Bool  // views are pinned (mem://?pinned=true)
	failing atomic.Bool  // memfd_create failed (out of descriptors): frames go to the heap for a while
	count   atomic.Int64 // memfd buffers alive
}

// memfdBuf is one frame's memfd, and the private mappings kept for its
// views.
type memfdBuf struct {
	fd   *cowmap.Memfd
	off  int // where the frame starts: its payload starts on a page
	maps *mapPool
}

// LendMappable lends memory for a frame of header+payload bytes whose
// payload views will map (see MapLender).
func (s *Mem) LendMappable(header, payload int) []byte {
	n := header + payload
	if !cowmap.Supported || payload < ViewMin || s.views.failing.Load() {
		return s.pool.Get(n)
	}
	page := cowmap.PageSize()
	pad := (page - header%page) % page
	b, err := s.views.lend(pad, n)
	if err != nil {
		s.views.failing.Store(true) // retried after the next buffer is freed
		return s.pool.Get(n)
	}
	return b
}

func (v *memViews) lend(pad, n int) ([]byte, error) {
	need := pad + n
	v.mu.Lock()
	buf := v.takeIdle(need)
	v.mu.Unlock()
	if buf == nil {
		fd, err := cowmap.NewMemfd("gotensor-frame", need)
		if err != nil {
			return nil, err
		}
		v.count.Add(1)
		buf = &memfdBuf{fd: fd, maps: &mapPool{src: fd.Shared}}
	}
	buf.off = pad
	b := buf.fd.Shared[pad : pad+n]
	v.mu.Lock()
	if v.loans == nil {
		v.loans = map[*byte]*memfdBuf{}
	}
	v.loans[&b[0]] = buf
	v.mu.Unlock()
	return b, nil
}

// takeIdle returns an idle buffer that holds need bytes (and at most about
// twice as many), or nil; under v.mu.
func (v *memViews) takeIdle(need int) *memfdBuf {
	lo, hi := bits.Len(uint(need))-1, bits.Len(uint(need-1))
	for c := lo; c <= hi && c < len(v.idle); c++ {
		list := v.idle[c]
		for i := len(list) - 1; i >= 0; i-- {
			if b := list[i]; len(b.fd.Shared) >= need {
				list[i] = list[len(list)-1]
				list[len(list)-1] = nil
				v.idle[c] = list[:len(list)-1]
				v.held -= int64(len(b.fd.Shared))
				return b
			}
		}
	}
	return nil
}

// claim takes frame's buffer out of the loans, or nil when frame is not
// one LendMappable lent.
func (v *memViews) claim(frame []byte) *memfdBuf {
	if len(frame) == 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	buf := v.loans[&frame[0]]
	if buf != nil {
		delete(v.loans, &frame[0])
	}
	return buf
}

// drop takes back a buffer no frame uses any longer: kept for reuse, or
// freed (its memory goes once the mappings still out are gone too).
func (v *memViews) drop(buf *memfdBuf) {
	size := int64(len(buf.fd.Shared))
	c := bits.Len(uint(size)) - 1
	v.mu.Lock()
	if !v.closed && v.held+size <= v.bound && len(v.idle[c]) < maxIdlePerClass {
		v.idle[c] = append(v.idle[c], buf)
		v.held += size
		v.mu.Unlock()
		return
	}
	v.mu.Unlock()
	v.free(buf)
}

func (v *memViews) free(buf *memfdBuf) {
	buf.maps.close()
	buf.fd.Close()
	v.count.Add(-1)
	v.failing.Store(false)
}

// close frees the idle buffers; buffers still held go as they are dropped.
func (v *memViews) close() {
	v.mu.Lock()
	v.closed = true
	var bufs []*memfdBuf
	for c := range v.idle {
		bufs = append(bufs, v.idle[c]...)
		v.idle[c] = nil
	}
	v.held = 0
	v.mu.Unlock()
	for _, b := range bufs {
		v.free(b)
	}
}

// MapFrame maps key's frame for a view (see Mapper): nil where the frame
// lives on the Go heap (a frame of another codec, a small one, or one Put
// from elsewhere, as a node's frames are).
func (s *Mem) MapFrame(_ context.Context, key string) (*Mapped, error) {
	var ver uint64
	f, err := s.lookup(key, func(f *memFrame) { hold(f); ver = f.ver })
	if err != nil {
		return nil, err
	}
	buf := f.fb
	if buf == nil {
		f.unref()
		return nil, nil
	}
	checked := f.viewChecked.Load() == ver
	m := buf.maps.get()
	if m == nil {
		if m, err = cowmap.Map(buf.fd.Fd(), 0, len(buf.fd.Shared), checked); err != nil {
			f.unref()
			return nil, err
		}
		Views.Maps.Add(1)
	} else {
		Views.Reused.Add(1)
	}
	if s.views.pinned.Load() && cowmap.CanPin() {
		if !m.Pinned() {
			if err := m.Pin(); err == nil {
				Views.Pinned.Add(1)
				m.Tag = ver // the kernel gave it a copy of the pages as they are now
			}
		} else if m.Tag != ver { // its pages are its own: bring them to this version
			Views.Restored.Add(int64(m.Restore(buf.fd.Shared)))
			m.Tag = ver
		}
	}
	Views.Live.Add(1)
	return &Mapped{
		Frame:   m.Bytes()[buf.off : buf.off+len(f.b) : buf.off+len(f.b)],
		Checked: checked,
		Pinned:  m.Pinned(),
		checked: func() { f.viewChecked.Store(ver) },
		release: func() {
			Views.Live.Add(-1)
			recycle(buf.maps, m)
			f.unref()
		},
	}, nil
}
