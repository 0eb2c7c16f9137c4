package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// preallocate gives f blocks for its first size bytes before they are
// written (its size unchanged: what is written sets it). Writes into
// allocated blocks are not delayed allocation, so the rename that
// replaces a key's file does not make ext4 (auto_da_alloc) allocate and
// start writing the whole new file back inside the rename, which made an
// unsynced write slower than a synced one (docs/STORES.md). A file system
// that cannot preallocate is written as before; one without the room says
// so here, before any byte is written.
func preallocate(f *os.File, size int64) error {
	if size <= 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
	if err == nil || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
}
