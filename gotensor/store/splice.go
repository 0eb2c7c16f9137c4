package store

import (
	"bytes"
	"context"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Splicer is a store that edits a stored frame without taking it whole
// again: a row-range write re-encodes a few chunks and splices them in.
type Splicer interface {
	// Splice replaces the frame's first len(header) bytes by header and
	// its bytes [off, off+n) by data, if the frame still starts with old;
	// otherwise it changes nothing and reports false.
	Splice(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error)
}

// SplicedLen is the length of a frame of size bytes after a splice.
func SplicedLen(size, n int64, data []byte) int64 { return size - n + int64(len(data)) }

// SpliceInto writes frame after the splice into dst (SplicedLen bytes),
// which may be frame itself when the length does not change.
func SpliceInto(dst, frame, header []byte, off, n int64, data []byte) {
	if len(dst) > 0 && len(frame) > 0 && &dst[0] != &frame[0] {
		copy(dst, frame[:off])
		copy(dst[off+int64(len(data)):], frame[off+n:])
	}
	copy(dst[off:], data)
	copy(dst, header)
}

// spliceable says whether a splice computed from old applies to frame.
func spliceable(frame, old, header []byte, off, n int64) bool {
	return bytes.HasPrefix(frame, old) && len(header) == len(old) && off >= int64(len(old)) && n >= 0 && off+n <= int64(len(frame))
}

// Splice edits the frame as EditChecked does (in place when no lease
// holds it and its buffer has room), if it still starts with old.
// The spliced frame is unchecked (data's origin is unknown: a node's
// Splice from the network); SpliceChecked keeps a checked frame checked.
func (s *Mem) Splice(_ context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	return s.splice(key, old, header, off, n, data, false)
}

// SpliceChecked is Splice with data this process's frame code built.
func (s *Mem) SpliceChecked(_ context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	return s.splice(key, old, header, off, n, data, true)
}

func (s *Mem) splice(key string, old, header []byte, off, n int64, data []byte, checked bool) (bool, error) {
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return false, notFound(key, s.url)
	}
	if !spliceable(f.b, old, header, off, n) {
		return false, nil
	}
	if err := s.edit(key, f, spliceEdit(header, off, n, data), checked); err != nil {
		return false, err
	}
	return true, nil
}

// spliceEdit is a splice as an edit: the header a piece at 0.
func spliceEdit(header []byte, off, n int64, data []byte) Edit {
	return Edit{Pieces: []Piece{{Off: 0, B: header}}, Off: off, N: n, Data: data}
}

// Splice forwards to the key's node when it splices.
func (s *Sharded) Splice(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	st, err := s.of(key)
	if err != nil {
		return false, err
	}
	return SpliceOn(ctx, st, key, old, header, off, n, data)
}

// SpliceOn splices through st's own Splice, else by Get and Put.
func SpliceOn(ctx context.Context, st Store, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	if sp := st.Caps().Splicer; sp != nil {
		return sp.Splice(ctx, key, old, header, off, n, data)
	}
	return SpliceByPut(ctx, st, key, old, header, off, n, data)
}

// SpliceByPut splices through Get and Put, for stores with no Splice of
// their own (a file store rewrites the file atomically this way).
func SpliceByPut(ctx context.Context, st Store, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	b, err := st.Get(ctx, key)
	if err != nil {
		return false, err
	}
	if !spliceable(b, old, header, off, n) {
		return false, nil
	}
	out := make([]byte, SplicedLen(int64(len(b)), n, data))
	SpliceInto(out, b, header, off, n, data)
	return true, st.Put(ctx, key, out)
}

// Splice forwards to the node once it is open.
func (l *lateNode) Splice(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	st, err := l.get()
	if err != nil {
		return false, err
	}
	return SpliceOn(ctx, st, key, old, header, off, n, data)
}

// Splice edits key's file as EditChecked does, if it still starts with old.
func (s *Dir) Splice(_ context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	kl := s.keyLock(key)
	kl.Lock()
	defer kl.Unlock()
	h, err := s.acquire(key) // read for the check, written by an in-place edit
	if err != nil {
		return false, err
	}
	defer s.release(h)
	src, size := h.f, h.size
	head := make([]byte, min(int64(len(old)), size))
	if _, err := src.ReadAt(head, 0); err != nil {
		return false, s.openErr(key, err)
	}
	if !bytes.Equal(head, old) || len(header) != len(old) || off < int64(len(old)) || n < 0 || off+n > size {
		return false, nil
	}
	if err := s.edit(key, h, spliceEdit(header, off, n, data)); err != nil {
		return false, err
	}
	return true, nil
}

// copyRange appends src's bytes [from, to) to dst.
func copyRange(dst, src *os.File, from, to int64) error {
	for from < to {
		k, err := unix.CopyFileRange(int(src.Fd()), &from, int(dst.Fd()), nil, int(min(to-from, 1<<30)), 0)
		if err != nil { // not between these files (another file system, an old kernel): through memory
			_, err = io.Copy(dst, io.NewSectionReader(src, from, to-from))
			return err
		}
		if k == 0 {
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}
