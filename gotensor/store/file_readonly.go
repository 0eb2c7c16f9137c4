package store

import (
	"errors"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// OpenDirReadOnly opens an existing directory store to read it
// (file:///dir?readonly=true), beside a process that owns it: it takes no
// lock, creates, replays and removes nothing, and reads the directory
// afresh to list keys and to find one. A writer's replace is a rename, so
// a read sees the old frame or the new one; a row edit in flight shows as
// a checksum mismatch, which reads retry.
func OpenDirReadOnly(dir string) (*Dir, error) {
	dir = filepath.Clean(dir)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errs.New(errs.InvalidArgument, "no store directory at %s", dir)
	case err != nil:
		return nil, errs.Wrap(ioKind(err), err, "store directory %s", dir)
	case !info.IsDir():
		return nil, errs.New(errs.InvalidArgument, "store directory %s: a file is in the way (want a directory)", dir)
	}
	abs, _ := filepath.Abs(dir)
	s := &Dir{dir: dir, abs: abs, readOnly: true, NoSync: true, seed: maphash.MakeSeed(), vers: map[string]uint64{}, handles: map[string]*handle{}}
	if err := s.reindex(); err != nil {
		return nil, err
	}
	return s, nil
}

// reindex lists the directory again (a read-only store's view of a
// directory another process writes).
func (s *Dir) reindex() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.URL())
	}
	if _, err := s.index(false); err != nil {
		return errs.Wrap(ioKind(err), err, "cannot index store directory %s", s.dir)
	}
	return nil
}

// checkFile is check for a read-only store: whether key's file is there now.
func (s *Dir) checkFile(key string) error {
	info, err := os.Stat(filepath.Join(s.dir, pathFor(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(key, s.URL())
	}
	if err != nil {
		return errs.Wrap(ioKind(err), err, "reading key %q from %s", key, s.URL())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.URL())
	}
	s.sizes[key] = info.Size()
	return nil
}

func errReadOnly(key, url string) error {
	return errs.ForKey(errs.Unauthorized, key, "key %q: %s is open read-only", key, url)
}
