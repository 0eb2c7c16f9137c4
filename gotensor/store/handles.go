package store

import (
	"os"
	"path/filepath"
)

// A file store keeps the files of the keys it used lately open (up to
// maxHandles), so that a row read or a row write (a KV cache append: a
// header read, a chunk read, an in-place edit) opens nothing: opens were
// most of a small row operation's system calls. A handle is the file as it
// was when opened: Put, a splice that rewrites the file, and Delete drop
// the key's handle (under the key's lock) after the new file is in place,
// so a reader holding the old handle still reads the old frame whole, as
// it would with a file it opened itself. One process owns a directory
// (the flock), so no other process replaces files under the handles.
const maxHandles = 512

// handle is an open file of a key's frame and its size, shared by readers
// and the key's in-place edits (ReadAt and WriteAt are positional).
type handle struct {
	f    *os.File
	size int64
	refs int // under Dir.hmu: the cache's reference and each user's
}

// acquire returns key's open handle, opening the file if none is cached;
// the caller calls release once.
func (s *Dir) acquire(key string) (*handle, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	s.hmu.Lock()
	if h, ok := s.handles[key]; ok {
		h.refs++
		s.hmu.Unlock()
		return h, nil
	}
	gen := s.hgen
	s.hmu.Unlock()
	flag := os.O_RDWR // an in-place edit writes through the handle
	if s.readOnly {
		flag = os.O_RDONLY
	}
	f, err := openBlocking(filepath.Join(s.dir, pathFor(key)), flag, 0)
	if err != nil {
		return nil, s.openErr(key, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, s.openErr(key, err)
	}
	h := &handle{f: f, size: info.Size(), refs: 1}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if old, ok := s.handles[key]; ok { // opened meanwhile by another user: the same file or a newer one
		old.refs++
		s.dropLocked(h)
		return old, nil
	}
	if s.hclosed || s.hgen != gen {
		return h, nil // closing, or a file replaced since the open (maybe this one): used once, not cached
	}
	if len(s.handles) >= maxHandles {
		for k, old := range s.handles { // any one: Go's map order is random
			delete(s.handles, k)
			s.dropLocked(old)
			break
		}
	}
	h.refs++
	s.handles[key] = h
	return h, nil
}

// release gives back a handle from acquire.
func (s *Dir) release(h *handle) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.dropLocked(h)
}

func (s *Dir) dropLocked(h *handle) {
	if h.refs--; h.refs == 0 {
		h.f.Close()
	}
}

// forget drops key's cached handle, after its file was replaced or
// removed; users holding it keep it until they release it.
func (s *Dir) forget(key string) {
	s.views.drop(key)
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.hgen++
	if h, ok := s.handles[key]; ok {
		delete(s.handles, key)
		s.dropLocked(h)
	}
}

// forgetAll drops every cached handle (the store is closing).
func (s *Dir) forgetAll() {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	s.hclosed = true
	for k, h := range s.handles {
		delete(s.handles, k)
		s.dropLocked(h)
	}
}
