package store

import (
	"context"
	"sync/atomic"
)

// Editor is a store that edits a frame by its version: a row write keeps
// the frame's parsed header and, while the store says the frame is still
// the one it parsed, writes only the chunk table entries it changed, the
// header checksum and the chunks, so that its cost is the chunks touched,
// not the header. (Splice, which compares the whole old header and
// writes the whole new one, serves the stores that are not Editors.)
type Editor interface {
	// FrameVersion is the version of key's frame: it changes with every
	// change of the frame (a Put, an edit, a splice, a delete), and no two
	// frames of this process's stores share one.
	FrameVersion(ctx context.Context, key string) (uint64, error)
	// EditChecked applies e, built by this process's frame code, to key's
	// frame if its version is still ver, and returns the new version;
	// otherwise it changes nothing and reports false.
	EditChecked(ctx context.Context, key string, ver uint64, e Edit) (uint64, bool, error)
}

// Edit replaces a frame's bytes [Off, Off+N) by Data and then writes
// Pieces, each before Off (they are header bytes).
type Edit struct {
	Pieces []Piece
	Off, N int64
	Data   []byte
}

// Piece is bytes written at an offset.
type Piece struct {
	Off int64
	B   []byte
}

// valid says whether e applies to a frame of size bytes.
func (e *Edit) valid(size int64) bool {
	if e.Off < 0 || e.N < 0 || e.Off+e.N > size {
		return false
	}
	for _, p := range e.Pieces {
		if p.Off < 0 || p.Off+int64(len(p.B)) > e.Off {
			return false
		}
	}
	return true
}

// frameVersions numbers frame versions across all of this process's
// stores, so that a store opened again on the same directory (or another
// Mem) never hands out a version an earlier one did.
var frameVersions atomic.Uint64

func nextVersion() uint64 { return frameVersions.Add(1) }
