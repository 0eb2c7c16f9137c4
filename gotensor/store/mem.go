package store

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
)

func init() {
	RegisterScheme("mem", func(u *url.URL) (Store, error) {
		if err := CheckOptions(u, "capacity", "pinned"); err != nil {
			return nil, err
		}
		c, err := capacityParam(u)
		if err != nil {
			return nil, err
		}
		pinned := false
		switch v := u.Query().Get("pinned"); v {
		case "", "0", "false":
		case "1", "true":
			pinned = true
		default:
			return nil, errs.New(errs.InvalidArgument, "bad pinned=%q in %q (want true or false)", v, RedactURL(u))
		}
		if u.Host+u.Path == "" { // mem://: a store of its own
			s := NewMem("mem://", c)
			s.views.pinned.Store(pinned)
			return s, nil
		}
		return openNamed("mem://"+u.Host+u.Path, c, u.Query().Has("capacity"), pinned)
	})
}

// Mem is the embedded in-process store. Its frames are reference counted:
// a reader's lease keeps a frame's memory intact while it decodes, and the
// memory of a replaced or deleted frame goes, once its last reader is
// done, to a bounded pool that lends it to the next write of a similar size.
//
// Its capacity bounds memory, not frame bytes alone: each key counts
// against it with its frame's bytes plus len(key)+KeyOverhead, what the key
// costs even under an empty frame, so a store of many small frames under
// long keys cannot grow past its capacity. Usage().Bytes is the frames'
// bytes; Used is what counts against the capacity.
type Mem struct {
	url      string
	capacity int64
	pool     *pool.Bytes
	views    memViews // memfd memory for frames views map (mem_views.go)

	mu       sync.RWMutex
	m        map[string]*memFrame
	bytes    atomic.Int64 // counted against the capacity: frames' bytes plus every key's charge; changed under mu, read anywhere (the pool's room)
	keyBytes int64        // of which the keys' charges
	closed   bool
}

// KeyOverhead is what a Mem store charges each key against its capacity
// beyond the key's and its frame's bytes: the frame's record (64 bytes),
// its release func (16) and the key's map slot (about 32) on a 64-bit
// platform. (Measured, the heap grows by 115 to 125 bytes a key beyond
// the key's and frame's bytes, as the map's spare slots vary.)
const KeyOverhead = 112

// keyCharge is what key costs against a store's capacity beyond its
// frame's bytes.
func keyCharge(key string) int64 { return int64(len(key)) + KeyOverhead }

// memFrame is a stored frame and its references: one for the map, one per
// lease.
type memFrame struct {
	b       []byte
	refs    atomic.Int32
	escaped atomic.Bool // handed out without a lease (Get): never reused
	checked atomic.Bool // built by this process's frame writer (see CheckedLeaser)
	pool    *pool.Bytes
	release func() // unref, made once per frame so a lease allocates nothing
	ver     uint64 // the frame's version (see Editor), under the store's lock

	fb          *memfdBuf     // the memfd b lives in, where views may map it; nil: the heap
	views       *memViews     // fb's owner
	viewChecked atomic.Uint64 // the version whose checksums a view checked (see Mapped)
}

func newMemFrame(b []byte, p *pool.Bytes, checked bool) *memFrame {
	f := &memFrame{b: b, pool: p, ver: nextVersion()}
	f.checked.Store(checked)
	f.refs.Store(1)
	f.release = f.unref
	return f
}

// newFrame makes the record of a frame Put into s: in the memfd it was
// lent in (LendMappable), or on the heap.
func (s *Mem) newFrame(b []byte, checked bool) *memFrame {
	f := newMemFrame(b, s.pool, checked)
	if fb := s.views.claim(b); fb != nil {
		f.fb, f.views = fb, &s.views
	}
	return f
}

func (f *memFrame) unref() {
	if f.refs.Add(-1) == 0 && !f.escaped.Load() {
		if f.fb != nil {
			f.views.drop(f.fb)
			return
		}
		f.pool.Put(f.b)
	}
}

// MemPoolBytes bounds the idle frame memory a Mem store keeps for reuse:
// an eighth of its capacity, or this when it is unbounded.
var MemPoolBytes int64 = 1 << 30

// NewMem returns an empty in-memory store; capacity 0 is unbounded.
func NewMem(url string, capacity int64) *Mem {
	bound := MemPoolBytes
	if capacity > 0 {
		bound = min(bound, capacity/8)
	}
	return &Mem{url: url, capacity: capacity, m: map[string]*memFrame{}, pool: pool.NewBytes(bound, 4), views: memViews{bound: bound}}
}

// SetIdleRoom lets the store keep idle frame memory for reuse beyond its
// pool's bound, up to room(used), given what it holds: a memory node, a
// process that exists to hold its capacity, keeps what that capacity
// leaves free (less what it is receiving), so that a replaced large
// tensor's memory takes the next version instead of fresh pages (an
// embedded store keeps its bound: a program's memory goes back once its
// tensors are deleted). room is called under the pool's lock, perhaps
// under the store's: it must call neither.
func (s *Mem) SetIdleRoom(room func(used int64) int64) {
	s.pool.SetRoom(func() int64 { return room(s.bytes.Load()) })
}

// Idle is the memory of dropped frames the store keeps for reuse (its
// pool's and its idle memfd buffers'), which counts toward no capacity.
func (s *Mem) Idle() int64 {
	s.views.mu.Lock()
	defer s.views.mu.Unlock()
	return s.pool.Held() + s.views.held
}

// LendFrame lends the memory of a dropped frame, or new memory.
func (s *Mem) LendFrame(n int) []byte { return s.pool.Get(n) }

// ReturnFrame takes back a lent buffer that was not Put.
func (s *Mem) ReturnFrame(b []byte) {
	if fb := s.views.claim(b); fb != nil {
		s.views.drop(fb)
		return
	}
	s.pool.Put(b)
}

// Lease returns the frame under key, held until release is called (once).
func (s *Mem) Lease(_ context.Context, key string) ([]byte, func(), error) {
	f, err := s.lookup(key, hold)
	if err != nil {
		return nil, nil, err
	}
	return f.b, f.release, nil
}

func hold(f *memFrame)   { f.refs.Add(1) }
func escape(f *memFrame) { f.escaped.Store(true) }
func peek(*memFrame)     {}

func (s *Mem) URL() string { return s.url }

// Nonblocking: every operation is a map access under a lock, so a server
// may run it on its network thread instead of handing it to a goroutine.
func (s *Mem) Nonblocking() bool { return true }

// Put stores a frame of unknown origin: it is checked on every read.
func (s *Mem) Put(_ context.Context, key string, frame []byte) error { return s.put(key, frame, false) }

// PutChecked stores a frame this process's frame writer built (see
// CheckedLeaser).
func (s *Mem) PutChecked(_ context.Context, key string, frame []byte) error {
	return s.put(key, frame, true)
}

// LeaseChecked is Lease, also reporting whether the frame is checked.
func (s *Mem) LeaseChecked(_ context.Context, key string) ([]byte, bool, func(), error) {
	var checked bool
	f, err := s.lookup(key, func(f *memFrame) { hold(f); checked = f.checked.Load() })
	if err != nil {
		return nil, false, nil, err
	}
	return f.b, checked, f.release, nil
}

func (s *Mem) put(key string, frame []byte, checked bool) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.url)
	}
	old := s.m[key]
	var oldLen, charge int64
	if old != nil {
		oldLen = int64(len(old.b))
	} else {
		charge = keyCharge(key) // a new key
	}
	need := int64(len(frame)) + charge
	if s.capacity > 0 && s.bytes.Load()-oldLen+need > s.capacity {
		return full(need, s.bytes.Load(), s.capacity, s.url)
	}
	s.m[key] = s.newFrame(frame, checked)
	s.bytes.Add(need - oldLen)
	s.keyBytes += charge
	if old != nil {
		old.unref()
	}
	return nil
}

// lookup finds key's frame and runs hold on it under the lock.
func (s *Mem) lookup(key string, hold func(*memFrame)) (*memFrame, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return nil, notFound(key, s.url)
	}
	hold(f)
	return f, nil
}

// Get returns the frame itself; its memory is then never reused. A frame
// in memfd memory (which is freed, not collected) is copied instead.
func (s *Mem) Get(_ context.Context, key string) ([]byte, error) {
	f, err := s.lookup(key, func(f *memFrame) {
		if f.fb != nil {
			hold(f)
		} else {
			escape(f)
		}
	})
	if err != nil {
		return nil, err
	}
	if f.fb != nil {
		defer f.unref()
		return append([]byte(nil), f.b...), nil
	}
	return f.b, nil
}

// Head copies the frame's first n bytes.
func (s *Mem) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	b, release, err := s.Lease(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	return append([]byte(nil), b[:min(n, len(b))]...), int64(len(b)), nil
}

func (s *Mem) Delete(_ context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return notFound(key, s.url)
	}
	charge := keyCharge(key)
	s.bytes.Add(-(int64(len(f.b)) + charge))
	s.keyBytes -= charge
	delete(s.m, key)
	f.unref()
	return nil
}

func (s *Mem) Has(_ context.Context, key string) (bool, error) {
	_, err := s.lookup(key, peek)
	if errs.Is(err, errs.KeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Mem) List(_ context.Context, prefix string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed(s.url)
	}
	return keysWithPrefix(s.m, prefix), nil
}

// Usage reports the frames' bytes (keys' charges not included: see Used).
func (s *Mem) Usage() Usage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Usage{Keys: int64(len(s.m)), Bytes: s.bytes.Load() - s.keyBytes, Capacity: s.capacity}
}

// Used is what counts against the capacity: Usage().Bytes plus, per key,
// len(key)+KeyOverhead.
func (s *Mem) Used() int64 { return s.bytes.Load() }

func (s *Mem) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	frames := s.m
	s.closed, s.m, s.keyBytes = true, nil, 0 // heap frames go to the collector, not the pool
	s.bytes.Store(0)
	s.mu.Unlock()
	s.views.close()
	for _, f := range frames {
		if f.fb != nil { // memfd memory is freed, not collected: once no view or lease holds it
			f.unref()
		}
	}
	return nil
}

func errClosed(where string) error { return errs.New(errs.Closed, "store %s is closed", where) }
