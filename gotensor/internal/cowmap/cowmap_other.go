//go:build !linux

package cowmap

import (
	"os"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Supported says whether this platform maps privately: not here, so
// stores hand out copies.
const Supported = false

// PageSize is the size of a page of memory.
func PageSize() int { return os.Getpagesize() }

func unsupported() error {
	return errs.New(errs.Unsupported, "private mappings are implemented on Linux only")
}

// Map is unsupported here.
func Map(fd int, off int64, n int, populate bool) (*Mapping, error) { return nil, unsupported() }

// Unmap does nothing here.
func (m *Mapping) Unmap() {}

// Revert cannot tell written pages here.
func (m *Mapping) Revert() bool { return false }

// Memfd is unsupported here.
type Memfd struct{ Shared []byte }

// NewMemfd is unsupported here.
func NewMemfd(name string, n int) (*Memfd, error) { return nil, unsupported() }

// Fd is -1 here.
func (f *Memfd) Fd() int { return -1 }

// Close does nothing here.
func (f *Memfd) Close() {}
