package store

import (
	"context"
	"io"
)

// Caps are what a store can do beyond the Store interface, said once by
// Store.Caps: a nil field (false) is an ability it lacks, and callers keep
// the value rather than asking the store again. Each field's interface
// says what the ability promises.
type Caps struct {
	// Lender lends memory for frames about to be Put (the buffers of
	// frames it dropped), so writes encode into memory already mapped.
	Lender Lender
	// Leaser gives a stored frame to read in place, held until released.
	Leaser Leaser
	// Checked knows which of its frames this process's frame writer built
	// (and so need no second checksum pass).
	Checked CheckedLeaser
	// Editor edits a frame in place while it is still a given version.
	Editor Editor
	// Splicer replaces a frame's bytes if its header is still the old one.
	Splicer Splicer
	// Ranges reads part of a frame.
	Ranges RangeReader
	// RangesInto reads part of a frame into the caller's memory.
	RangesInto RangeIntoReader
	// Recycler takes back the ranges Ranges gave, for later ones.
	Recycler RangeRecycler
	// Stream takes a frame in parts. A store that has it and Ranges is
	// across a link: large frames move through it in pieces (Streams).
	Stream StreamWriter
	// Files opens a frame as an open file, read in place by range.
	Files FileOpener
	// Mapper maps a frame privately for a tensor that views it.
	Mapper Mapper
	// MapLender lends memory, for frames views will read, that Mapper
	// maps.
	MapLender MapLender
	// Nonblocking: no call waits on I/O (memory).
	Nonblocking bool
	// Used is what counts against the capacity, where that is more than
	// Usage().Bytes (each key's overhead); nil: Usage().Bytes.
	Used func() int64
}

// Streams says whether large frames should move through the store in
// pieces, overlapping their coding with moving them.
func (c Caps) Streams() bool { return c.Stream != nil && c.Ranges != nil }

// FileOpener is a store whose frames are files: a reader takes ranges of
// one open file, so all it reads is one frame's, whatever writers do.
type FileOpener interface {
	OpenFrame(ctx context.Context, key string) (r io.ReaderAt, size int64, release func(), err error)
}

// UsedOf is what counts against st's capacity.
func UsedOf(st Store) int64 {
	if u := st.Caps().Used; u != nil {
		return u()
	}
	return st.Usage().Bytes
}

// Every store says its abilities; these hold the methods to them.
var (
	_ Lender        = (*Mem)(nil)
	_ MapLender     = (*Mem)(nil)
	_ Mapper        = (*Mem)(nil)
	_ Mapper        = (*MemHandle)(nil)
	_ Mapper        = (*Dir)(nil)
	_ CheckedLeaser = (*Mem)(nil)
	_ Editor        = (*Mem)(nil)
	_ Splicer       = (*Mem)(nil)
	_ CheckedLeaser = (*MemHandle)(nil)
	_ Editor        = (*Dir)(nil)
	_ Splicer       = (*Dir)(nil)
	_ RangeReader   = (*Dir)(nil)
	_ RangeRecycler = (*Dir)(nil)
	_ FileOpener    = (*Dir)(nil)
	_ Splicer       = (*Sharded)(nil)
	_ RangeReader   = (*Sharded)(nil)
	_ StreamWriter  = (*Sharded)(nil)
	_ RangeRecycler = (*Sharded)(nil)
	_ Splicer       = (*lateNode)(nil)
)

func (s *Mem) Caps() Caps {
	return Caps{Lender: s, Leaser: s, Checked: s, Editor: s, Splicer: s, Nonblocking: true, Used: s.Used, Mapper: s, MapLender: s}
}

func (h *MemHandle) Caps() Caps {
	return Caps{Lender: h.Mem, Leaser: h, Checked: h, Editor: h, Splicer: h, Nonblocking: true, Used: h.Used, Mapper: h, MapLender: h.Mem}
}

func (s *Dir) Caps() Caps {
	return Caps{Editor: s, Splicer: s, Ranges: s, Recycler: s, Files: s, Used: s.Used, Mapper: s}
}

// Caps of a sharded store: splices go to the key's node; large frames move
// in pieces when every node that answered moves them so, and their memory
// is recycled when every such node recycles it.
func (s *Sharded) Caps() Caps {
	c := Caps{Splicer: s}
	if s.Streams() {
		c.Ranges, c.RangesInto, c.Stream = s, s, s
		if s.rc != nil {
			c.Recycler = s
		}
	}
	return c
}

func (l *lateNode) Caps() Caps { return Caps{Splicer: l} }
