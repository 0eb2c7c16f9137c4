package store

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Named mem:// stores. Within a process, every open of mem://NAME is a
// handle on one store, reference counted: closing a handle ends that handle
// only, and the store (and its frames) goes when its last handle closes.
// mem:// without a name is a new private store each time.

var named = struct {
	mu sync.Mutex
	m  map[string]*sharedMem
}{m: map[string]*sharedMem{}}

type sharedMem struct {
	mem     *Mem
	handles int
}

// MemHandle is one open of a named mem:// store. It is the store (a *Mem)
// except that Close ends this handle alone, after which its calls fail
// with Closed.
type MemHandle struct {
	*Mem
	closed atomic.Bool
	once   sync.Once
}

// openNamed opens a handle on the store called name, making it on first
// use with capacity; a later open that sets a different capacity fails.
func openNamed(name string, capacity int64, setsCapacity, pinned bool) (*MemHandle, error) {
	named.mu.Lock()
	defer named.mu.Unlock()
	sm := named.m[name]
	if sm == nil {
		sm = &sharedMem{mem: NewMem(name, capacity)}
		named.m[name] = sm
	} else if setsCapacity && capacity != sm.mem.capacity {
		return nil, errs.New(errs.InvalidArgument, "%s is open in this process with capacity %d, not %d", name, sm.mem.capacity, capacity)
	}
	if pinned { // any handle's pinned=true pins the store's later views
		sm.mem.views.pinned.Store(true)
	}
	sm.handles++
	return &MemHandle{Mem: sm.mem}, nil
}

func (h *MemHandle) check() error {
	if h.closed.Load() {
		return errClosed(h.url)
	}
	return nil
}

func (h *MemHandle) Put(ctx context.Context, key string, frame []byte) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.Mem.Put(ctx, key, frame)
}

func (h *MemHandle) PutChecked(ctx context.Context, key string, frame []byte) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.Mem.PutChecked(ctx, key, frame)
}

func (h *MemHandle) LeaseChecked(ctx context.Context, key string) ([]byte, bool, func(), error) {
	if err := h.check(); err != nil {
		return nil, false, nil, err
	}
	return h.Mem.LeaseChecked(ctx, key)
}

func (h *MemHandle) Get(ctx context.Context, key string) ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.Mem.Get(ctx, key)
}

func (h *MemHandle) MapFrame(ctx context.Context, key string) (*Mapped, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.Mem.MapFrame(ctx, key)
}

func (h *MemHandle) Lease(ctx context.Context, key string) ([]byte, func(), error) {
	if err := h.check(); err != nil {
		return nil, nil, err
	}
	return h.Mem.Lease(ctx, key)
}

func (h *MemHandle) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	if err := h.check(); err != nil {
		return nil, 0, err
	}
	return h.Mem.Head(ctx, key, n)
}

func (h *MemHandle) Delete(ctx context.Context, key string) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.Mem.Delete(ctx, key)
}

func (h *MemHandle) Has(ctx context.Context, key string) (bool, error) {
	if err := h.check(); err != nil {
		return false, err
	}
	return h.Mem.Has(ctx, key)
}

func (h *MemHandle) List(ctx context.Context, prefix string) ([]string, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.Mem.List(ctx, prefix)
}

func (h *MemHandle) Usage() Usage {
	if h.closed.Load() {
		return Usage{}
	}
	return h.Mem.Usage()
}

// Used is the store's (see Mem.Used); 0 once this handle is closed.
func (h *MemHandle) Used() int64 {
	if h.closed.Load() {
		return 0
	}
	return h.Mem.Used()
}

// Close ends this handle; the last one closes the store.
func (h *MemHandle) Close() error {
	h.once.Do(func() {
		h.closed.Store(true)
		named.mu.Lock()
		defer named.mu.Unlock()
		sm := named.m[h.url]
		if sm == nil || sm.mem != h.Mem {
			return
		}
		if sm.handles--; sm.handles == 0 {
			delete(named.m, h.url)
			h.Mem.Close()
		}
	})
	return nil
}

func (h *MemHandle) FrameVersion(ctx context.Context, key string) (uint64, error) {
	if err := h.check(); err != nil {
		return 0, err
	}
	return h.Mem.FrameVersion(ctx, key)
}

func (h *MemHandle) EditChecked(ctx context.Context, key string, ver uint64, e Edit) (uint64, bool, error) {
	if err := h.check(); err != nil {
		return 0, false, err
	}
	return h.Mem.EditChecked(ctx, key, ver, e)
}

func (h *MemHandle) Splice(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	if err := h.check(); err != nil {
		return false, err
	}
	return h.Mem.Splice(ctx, key, old, header, off, n, data)
}

func (h *MemHandle) SpliceChecked(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	if err := h.check(); err != nil {
		return false, err
	}
	return h.Mem.SpliceChecked(ctx, key, old, header, off, n, data)
}
