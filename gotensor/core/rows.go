package core

import (
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Row-range I/O: rows [start, start+rows) of a stored tensor's leading
// dimension are written by re-encoding only the chunks they touch (frames
// written with Frame.AlignRows have chunks of whole rows) and read by
// fetching and decoding only the chunks that cover them.

// spliceTries bounds the retries of a row write whose frame another
// writer changed between its read and its edit; each waits a random time
// of up to twice the last one's bound (from spliceBackoff), so that two
// writers of one key take turns rather than one always losing the race.
const spliceTries = 16

const spliceBackoff = 20 * time.Microsecond

// WriteRows stores raw, the contiguous bytes of a tensor of meta, as rows
// [start, start+meta.Shape[0]) of the tensor under key, which must exist
// with the same dtype and trailing dimensions.
func (s *Store) WriteRows(ctx context.Context, key string, start int64, meta tensor.Meta, raw []byte) (err error) {
	defer func() { s.stats.op(OpWrite, err) }()
	if err := checkRaw(meta, raw); err != nil {
		return err
	}
	begun := s.now()
	for try := 0; try < spliceTries; try++ {
		done, moved, err := s.writeRowsOnce(ctx, key, start, meta, raw)
		if done && err == nil {
			s.stats.rows(true, int64(len(raw)), moved, s.now().Sub(begun))
		}
		if done || err != nil {
			return wrapKey(err, key)
		}
		if try > 0 { // the first retry is the common one (a kept header out of date): at once
			select {
			case <-ctx.Done():
				return wrapKey(ctxErr(ctx), key)
			case <-time.After(rand.N(spliceBackoff << min(try, 14))):
			}
		}
	}
	return errs.ForKey(errs.Unavailable, key, "key %q: replaced by other writers %d times during a row write", key, spliceTries)
}

// writeRowsOnce writes the rows through key's kept header (parsing it
// first when there is none), reading the frame only for chunks the rows
// cover in part; it reports false when the frame changed under it, and
// the frame bytes it wrote.
func (s *Store) writeRowsOnce(ctx context.Context, key string, start int64, meta tensor.Meta, raw []byte) (bool, int64, error) {
	e := s.heads.entry(key)
	e.mu.Lock()
	defer func() {
		if e.head == nil { // none to keep: no entry either
			s.heads.drop(key, e)
		}
		e.mu.Unlock()
	}()
	ed := s.caps.Editor
	r, release := (*frame.Reader)(nil), func() {}
	h := e.head
	if h != nil && ed == nil && needsFrame(h, start, meta) { // no version to check a reader against: parse again
		h = nil
	}
	kept := h != nil
	if !kept {
		var err error
		if r, release, h, err = s.parseHead(ctx, key, e, ed); err != nil {
			return false, 0, err
		}
	}
	off, err := rowRange(h.Header, start, meta)
	if err != nil {
		release()
		return false, 0, err
	}
	if r == nil && h.NeedsFrame(off, int64(len(raw))) {
		if r, release, err = s.openAt(ctx, key, e, ed); err != nil || r == nil {
			e.head = nil
			return false, 0, err
		}
	}
	p, err := h.Patch(ctx, r, off, raw, pinOf(ctx))
	release() // before the edit: a frame no reader holds is edited in place
	if err != nil {
		if kept && r != nil { // read through a kept header: maybe of a frame changed meanwhile
			e.head = nil
			return false, 0, nil
		}
		return false, 0, err
	}
	if err := commit(ctx); err != nil {
		return false, 0, err
	}
	var done bool
	if ed != nil {
		var ver uint64
		ver, done, err = ed.EditChecked(ctx, key, e.ver, editOf(p))
		e.ver = ver
	} else if cl := s.caps.Checked; cl != nil { // the patch is this process's frame code's
		done, err = cl.SpliceChecked(ctx, key, h.Bytes(), p.Header(h.Bytes()), p.Off, p.N, p.Data)
	} else {
		done, err = store.SpliceOn(ctx, s.st, key, h.Bytes(), p.Header(h.Bytes()), p.Off, p.N, p.Data)
	}
	if !done || err != nil {
		e.head = nil
		return false, 0, err
	}
	h.Apply(p)
	return true, int64(len(p.Data)), nil
}

// parseHead opens key's frame and keeps its header in e, at the version
// read before it (on an Editor); the reader is the caller's to release.
func (s *Store) parseHead(ctx context.Context, key string, e *headEntry, ed store.Editor) (*frame.Reader, func(), *frame.Head, error) {
	var ver uint64
	if ed != nil {
		v, err := ed.FrameVersion(ctx, key)
		if err != nil {
			return nil, nil, nil, err
		}
		ver = v
	}
	r, release, err := s.openForWrite(ctx, key)
	if err != nil {
		return nil, nil, nil, err
	}
	h, err := frame.NewHead(r)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	s.heads.set(key, e, h, ver)
	return r, release, h, nil
}

// openAt opens a reader of key's frame through e's header, which an
// Editor says is still the frame's: nil when it is not.
func (s *Store) openAt(ctx context.Context, key string, e *headEntry, ed store.Editor) (*frame.Reader, func(), error) {
	var (
		r       *frame.Reader
		release = func() {}
		err     error
	)
	if l := s.caps.Leaser; l != nil {
		var b []byte
		if b, release, err = l.Lease(ctx, key); err != nil {
			return nil, nil, err
		}
		r, err = e.head.Reader(b)
	} else if ri := s.caps.Files; ri != nil {
		var f io.ReaderAt
		var size int64
		if f, size, release, err = ri.OpenFrame(ctx, key); err != nil {
			return nil, nil, err
		}
		r, err = e.head.OpenReader(readerAtSource{f}, size, StreamPiece)
	} else if rr := s.caps.Ranges; rr != nil {
		size := e.head.FrameSize()
		r, err = e.head.OpenReader(&rangeSource{s: s, rr: rr, key: key, size: size}, size, StreamPiece)
	} else {
		return nil, func() {}, nil
	}
	if err != nil || !s.sameVersion(ctx, key, e, ed) { // checked after the lease: the leased frame is that version
		release()
		return nil, func() {}, nil
	}
	return r, release, nil
}

// sameVersion says whether key's frame is still at e's version.
func (s *Store) sameVersion(ctx context.Context, key string, e *headEntry, ed store.Editor) bool {
	v, err := ed.FrameVersion(ctx, key)
	return err == nil && v == e.ver
}

// needsFrame says whether writing rows of meta at start reads h's frame.
func needsFrame(h *frame.Head, start int64, meta tensor.Meta) bool {
	off, err := rowRange(h.Header, start, meta)
	n, _ := meta.NumBytes()
	return err == nil && h.NeedsFrame(off, n)
}

// editOf is p as a store edit: the table entries and the checksum (one
// piece when they meet, as an append's last chunk's do) and the data.
func editOf(p *frame.Patch) store.Edit {
	pieces := []store.Piece{{Off: p.TableAt, B: p.Table}, {Off: p.SumAt, B: p.Sum[:]}}
	if p.TableAt+int64(len(p.Table)) == p.SumAt {
		pieces = []store.Piece{{Off: p.TableAt, B: append(p.Table, p.Sum[:]...)}}
	}
	return store.Edit{Pieces: pieces, Off: p.Off, N: p.N, Data: p.Data}
}

// rowReadTries bounds the reads of rows of a frame other writers keep
// changing under them.
const rowReadTries = 16

// ReadRows decodes rows [start, start+want.Shape[0]) of the tensor under
// key into dst; want is the rows' dtype and shape.
//
// A frame read in parts (its header, then the chunks it names, from a
// store across a link) that a row write changes between them fails the
// chunks' checks as if its bytes were corrupt. Such a read starts over
// from the header, as a whole read reads the current frame again: the
// frame is corrupt only when a read through the very header the last one
// used fails too. Reads that find the frame changed every time back off
// as row writes do, and end Unavailable.
func (s *Store) ReadRows(ctx context.Context, key string, start int64, want tensor.Meta, dst []byte) (err error) {
	defer func() { s.stats.op(OpRead, err) }()
	if err := checkRaw(want, dst); err != nil {
		return err
	}
	begun := s.now()
	var last *frame.Header // the header the last read went by (nil: none parsed)
	for try := 0; try < rowReadTries; try++ {
		h, err := s.readRowsOnce(ctx, key, start, want, dst)
		if err == nil {
			s.stats.rows(false, int64(len(dst)), coveredBytes(h, start, want), s.now().Sub(begun))
		}
		if !errs.Is(err, errs.CorruptData) || s.caps.Nonblocking { // memory: the frame read is leased whole, unchanged
			return wrapKey(err, key)
		}
		if try > 0 && sameHeader(h, last) { // the frame did not change: its bytes are corrupt
			return wrapKey(err, key)
		}
		last = h
		if try > 0 { // the first retry is the common one: at once
			select {
			case <-ctx.Done():
				return wrapKey(errs.Wrap(errs.Timeout, ctx.Err(), "row read stopped"), key)
			case <-time.After(rand.N(spliceBackoff << min(try, 14))):
			}
		}
	}
	return errs.ForKey(errs.Unavailable, key, "key %q: changed by other writers during each of %d row reads", key, rowReadTries)
}

// coveredBytes is what the chunks holding rows [start, start+rows) of
// the frame of h take in the store: what a row read of them moves.
func coveredBytes(h *frame.Header, start int64, want tensor.Meta) int64 {
	if h == nil || len(h.Chunks) == 0 {
		return 0
	}
	n, _ := want.NumBytes()
	off, err := rowRange(h, start, want)
	if err != nil || n == 0 {
		return 0
	}
	cs := int64(h.ChunkSize)
	var b int64
	for i := off / cs; i <= (off+n-1)/cs && int(i) < len(h.Chunks); i++ {
		b += int64(h.Chunks[i].EncLen)
	}
	return b
}

// sameHeader says whether a and b describe the same frame: the same
// tensor, coding and chunk table (whose checksums change with any chunk).
func sameHeader(a, b *frame.Header) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Meta.Equal(b.Meta) && a.Codec == b.Codec && a.ChunkSize == b.ChunkSize && a.RawSize == b.RawSize &&
		a.CodecParam == b.CodecParam && slices.Equal(a.Chunks, b.Chunks)
}

// readRowsOnce reads the rows once; h is the header it went by (nil when
// it parsed none).
func (s *Store) readRowsOnce(ctx context.Context, key string, start int64, want tensor.Meta, dst []byte) (h *frame.Header, err error) {
	if ri := s.caps.Files; ri != nil {
		if h, handled, err := s.readRowsRaw(ctx, ri, key, start, want, dst); handled {
			return h, err
		}
	}
	if cl := s.caps.Checked; cl != nil {
		return s.readRowsLeased(ctx, cl, key, start, want, dst)
	}
	r, release, err := s.openFrame(ctx, key)
	if err != nil {
		return nil, err
	}
	defer release()
	off, err := rowRange(r.Header, start, want)
	if err != nil {
		return r.Header, err
	}
	return r.Header, r.ReadAt(ctx, off, dst, pinOf(ctx))
}

func checkRaw(meta tensor.Meta, raw []byte) error {
	n, err := meta.NumBytes()
	if err != nil {
		return err
	}
	if n != int64(len(raw)) {
		return errs.New(errs.InvalidArgument, "%s%v needs %d bytes, buffer has %d", meta.DType, meta.Shape, n, len(raw))
	}
	return nil
}

// rowRange checks that rows of meta fit the stored tensor of h at row
// start and returns their byte offset.
func rowRange(h *frame.Header, start int64, rows tensor.Meta) (int64, error) {
	sh := h.Meta.Shape
	if len(sh) == 0 {
		return 0, errs.New(errs.InvalidArgument, "a 0-d tensor has no rows")
	}
	if rows.DType != h.Meta.DType || len(rows.Shape) != len(sh) || !equalDims(rows.Shape[1:], sh[1:]) {
		return 0, errs.New(errs.InvalidArgument, "rows of %s%v do not fit the stored %s%v", rows.DType, rows.Shape, h.Meta.DType, sh)
	}
	if start < 0 || start > sh[0] || rows.Shape[0] > sh[0]-start {
		return 0, errs.New(errs.InvalidArgument, "rows [%d, %d) outside the %d rows of %s%v", start, start+rows.Shape[0], sh[0], h.Meta.DType, sh)
	}
	return start * frame.RowBytes(h.Meta), nil
}

func equalDims(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// openForWrite is openFrame for a row write: from a store that opens a
// frame as it is (a directory: edits in place wait until release), that
// frame, so what the write decodes is one frame's.
func (s *Store) openForWrite(ctx context.Context, key string) (*frame.Reader, func(), error) {
	ri := s.caps.Files
	if ri == nil {
		return s.openFrame(ctx, key)
	}
	f, size, release, err := ri.OpenFrame(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	_, head, err := frame.ReadHead(f, size, s.Limits)
	if err != nil {
		release()
		return nil, nil, err
	}
	r, err := frame.OpenReader(ctx, readerAtSource{f}, head, size, StreamPiece, s.Limits)
	if err != nil {
		release()
		return nil, nil, err
	}
	return r, release, nil
}

// readerAtSource serves a frame's ranges from an open frame.
type readerAtSource struct{ f io.ReaderAt }

func (r readerAtSource) ReadRange(_ context.Context, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// openFrame opens key's frame for ranged work without taking it whole
// where the store allows: a leased frame in place, or from a store that
// serves ranges, the header now and chunks as they are wanted.
func (s *Store) openFrame(ctx context.Context, key string) (*frame.Reader, func(), error) {
	if l := s.caps.Leaser; l != nil {
		b, release, err := l.Lease(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		r, err := frame.NewReader(b, s.Limits)
		if err != nil {
			release()
			return nil, nil, err
		}
		return r, release, nil
	}
	if rr := s.caps.Ranges; rr != nil {
		head, size, err := s.st.Head(ctx, key, frame.HeadGuess)
		if err != nil {
			return nil, nil, err
		}
		r, err := frame.OpenReader(ctx, &rangeSource{s: s, rr: rr, key: key, size: size}, head, size, StreamPiece, s.Limits)
		return r, func() {}, err
	}
	b, err := s.st.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	r, err := frame.NewReader(b, s.Limits)
	return r, func() {}, err
}
