package store

import (
	"context"
	"os"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A Dir's frame versions live in this process (a Dir owns its directory):
// a key's is given out on first ask and forgotten whenever the file is
// replaced or deleted, and changed by every edit in place, each under
// the key's lock; versions come from a counter shared by all stores, so
// a Dir opened again on the directory never repeats one.

// FrameVersion is the version of key's frame (see Editor).
func (s *Dir) FrameVersion(_ context.Context, key string) (uint64, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed(s.URL())
	}
	if _, ok := s.sizes[key]; !ok {
		return 0, notFound(key, s.URL())
	}
	v, ok := s.vers[key]
	if !ok {
		v = nextVersion()
		s.vers[key] = v
	}
	return v, nil
}

// edited gives key's frame a new version after an edit in place (even a
// failed one: the file may have changed); the caller holds the edit lock.
func (s *Dir) edited(key string) {
	s.mu.Lock()
	s.vers[key] = nextVersion()
	s.mu.Unlock()
}

// EditChecked applies e to key's frame if it is still version ver (see
// Editor), as edit does.
func (s *Dir) EditChecked(ctx context.Context, key string, ver uint64, e Edit) (uint64, bool, error) {
	if err := ValidateKey(key); err != nil {
		return 0, false, err
	}
	kl := s.keyLock(key)
	kl.Lock()
	defer kl.Unlock()
	if cur, err := s.FrameVersion(ctx, key); err != nil || cur != ver {
		return 0, false, err
	}
	h, err := s.acquire(key)
	if err != nil {
		return 0, false, err
	}
	defer s.release(h)
	if !e.valid(h.size) {
		return 0, false, nil
	}
	if err := s.edit(key, h, e); err != nil {
		return 0, false, err
	}
	v, err := s.FrameVersion(ctx, key)
	return v, err == nil, err
}

// edit applies e to key's frame, open as h, under the key's lock, and gives
// the frame a new version. An edit that keeps the length, or lengthens the
// frame with at most maxGrowTail bytes after it (a KV cache's coded row
// appended in place of a zero row: only empty rows follow it), is written
// in place, crash-safe through a journal of what it writes (see
// editInPlace; a longer frame's tail moves along in the same record),
// unless a view maps the file; any other rewrites the file atomically, as
// Put does (a new file renamed over the old one, which the view keeps),
// with the bytes it keeps copied from the old file by the kernel
// (copy_file_range: no pass through user memory, and a shared extent on
// file systems that reflink).
func (s *Dir) edit(key string, h *handle, e Edit) error {
	if s.readOnly {
		return errReadOnly(key, s.URL())
	}
	src, size := h.f, h.size
	grow := int64(len(e.Data)) - e.N
	if grow == 0 || (grow > 0 && size-e.Off-e.N <= maxGrowTail) {
		i := s.editStripe(key)
		s.editing[i].Lock()
		if !s.views.viewed(key) { // (a view is mapped and counted under the edit lock, shared)
			err := s.editInPlaceGrown(key, h, i, e, grow)
			s.edited(key) // under the edit lock: a reader that holds it sees a frame and its version together
			s.editing[i].Unlock()
			switch {
			case err == nil:
				return nil
			case errs.Is(err, errs.StoreFull): // over the capacity
				return err
			case isNoSpace(err):
				return errs.WrapKey(errs.StoreFull, key, err, "no space left to edit key %q in %s", key, s.URL())
			default:
				return errs.WrapKey(ioKind(err), key, err, "editing key %q in %s", key, s.URL())
			}
		}
		s.editing[i].Unlock() // a view maps the file: write a new one instead, below
	}
	return s.replace(key, SplicedLen(size, e.N, e.Data), func(tmp *os.File) error {
		if err := copyRange(tmp, src, 0, e.Off); err != nil {
			return err
		}
		if _, err := tmp.Write(e.Data); err != nil {
			return err
		}
		if err := copyRange(tmp, src, e.Off+e.N, size); err != nil {
			return err
		}
		for _, p := range e.Pieces {
			if _, err := tmp.WriteAt(p.B, p.Off); err != nil {
				return err
			}
		}
		return nil
	})
}

// maxGrowTail is the most frame bytes after a lengthening edit that move
// along with it in place (through the journal, so twice); past it the
// file is rewritten.
const maxGrowTail = 256 << 10

// editInPlaceGrown writes e into key's file, open as h, in place: where it
// lengthens the frame by grow bytes, the data is followed by the frame's
// tail (moved along), the growth is charged to the capacity first, and
// the key's size and h's are the new ones after it. The caller holds
// key's lock and stripe i's edit lock.
func (s *Dir) editInPlaceGrown(key string, h *handle, i int, e Edit, grow int64) error {
	data := e.Data
	if grow > 0 {
		data = make([]byte, int64(len(e.Data))+h.size-e.Off-e.N)
		copy(data, e.Data)
		if _, err := h.f.ReadAt(data[len(e.Data):], e.Off+e.N); err != nil {
			return err
		}
		s.mu.Lock()
		if s.capacity > 0 && s.bytes+grow > s.capacity {
			used := s.bytes
			s.mu.Unlock()
			return full(h.size+grow, used, s.capacity, s.URL())
		}
		s.bytes += grow
		s.mu.Unlock()
	}
	err := s.editInPlace(h.f, key, i, append([]Piece{{Off: e.Off, B: data}}, e.Pieces...))
	if grow == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil { // the file may be longer now, its frame torn: charged as it was
		s.bytes -= grow
		return err
	}
	s.sizes[key] += grow
	s.resized(key, h, h.size+grow)
	return nil
}

// resized sets the size of key's file, grown in place, in h and in the
// handle the cache holds for it if that is another (opened by a reader
// between the edit's open and its edit lock); the caller holds the key's
// edit lock, which every reader of a handle's size holds shared.
func (s *Dir) resized(key string, h *handle, size int64) {
	h.size = size
	s.hmu.Lock()
	if c, ok := s.handles[key]; ok {
		c.size = size
	}
	s.hmu.Unlock()
}
