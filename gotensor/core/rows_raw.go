package core

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A store whose frames open for ranged reads into the caller's buffers
// (file://): a row read of chunks stored raw (codec none, or chunks that
// did not compress) then reads straight into the destination and checks
// each chunk's CRC there right after reading it (in cache), with no buffer
// of its own and no second copy, in one open of the frame.
// readRun bounds the bytes of whole chunks one read brings into the
// destination: small chunks (a KV cache's rows) cost one read per run, and
// a run's chunks are checked while it is still in cache.
const readRun = 256 << 10

// copyPiece is the least a worker copies or reads of a large row read.
const copyPiece = 4 << 20

// copyBlock is the most one memmove copies: Go's memmove writes past the
// cache from 1 MiB on, and the caller (FlexGen's layer) reads what it
// loaded right away.
const copyBlock = 512 << 10

// readRowsRaw is readRowsOnce for a rangesInto store, in one open of the
// frame; handled is false (nothing read) where a chunk the rows need is
// coded. h is the header it went by (nil: none parsed).
func (s *Store) readRowsRaw(ctx context.Context, ri store.FileOpener, key string, start int64, want tensor.Meta, dst []byte) (h *frame.Header, handled bool, err error) {
	f, size, release, err := ri.OpenFrame(ctx, key)
	if err != nil {
		return nil, true, err
	}
	defer release()
	if h, _, err = frame.ReadHead(f, size, s.Limits); err != nil {
		return h, true, err
	}
	off, err := rowRange(h, start, want)
	if err != nil || len(dst) == 0 {
		return h, true, err
	}
	cs := int64(h.ChunkSize)
	first, last := int(off/cs), int((off+int64(len(dst))-1)/cs)
	at := int64(h.Size()) // the file offset of chunk first
	for i := 0; i < first; i++ {
		at += int64(h.Chunks[i].EncLen)
	}
	for i := first; i <= last; i++ {
		if int(h.Chunks[i].EncLen) != h.RawChunkLen(i) {
			return h, false, nil
		}
	}
	// a read is a run of chunks dst covers whole, up to readRun bytes (one
	// pread, each chunk checked while in cache), read straight into dst, or
	// one chunk dst covers in part, read into a buffer of its own whose rows
	// dst wants are copied out after the check
	type run struct{ chunk, n int } // chunks [chunk, chunk+n)
	var (
		offs []int64
		bufs [][]byte
		runs []run
	)
	for i := first; i <= last; {
		lo, m := int64(i)*cs, int64(h.RawChunkLen(i))
		if lo < off || lo+m > off+int64(len(dst)) {
			offs, bufs, runs = append(offs, at), append(bufs, make([]byte, m)), append(runs, run{i, 1})
			at += m
			i++
			continue
		}
		r := run{chunk: i}
		var n int64
		for i <= last && (r.n == 0 || n+int64(h.RawChunkLen(i)) <= readRun) {
			m := int64(h.RawChunkLen(i))
			if int64(i)*cs+m > off+int64(len(dst)) {
				break // the tail chunk, covered in part
			}
			n += m
			r.n++
			i++
		}
		offs, bufs, runs = append(offs, at), append(bufs, dst[lo-off:lo-off+n]), append(runs, r)
		at += n
	}
	check := func(j int) error {
		r, b := runs[j], bufs[j]
		for k := 0; k < r.n; k++ {
			i := r.chunk + k
			m := int64(h.RawChunkLen(i))
			if err := h.CheckChunk(i, b[:m]); err != nil {
				return err
			}
			if lo := int64(i) * cs; lo < off || lo+m > off+int64(len(dst)) {
				from, to := max(off, lo), min(off+int64(len(dst)), lo+m)
				copy(dst[from-off:to-off], b[from-lo:to-lo])
			}
			b = b[m:]
		}
		return nil
	}
	// a large read goes in a few parts at once
	parts := max(1, min(parallel.Workers(), len(runs), len(dst)/copyPiece))
	err = parallel.ForBytesPinned(parts, int64(len(dst)), pinOf(ctx), func(p int) error {
		for j := p * len(runs) / parts; j < (p+1)*len(runs)/parts; j++ {
			if _, err := f.ReadAt(bufs[j], offs[j]); err != nil {
				return err
			}
			if err := check(j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return h, true, err
	}
	frame.Work.Decoded.Add(int64(len(dst)))
	return h, true, nil
}

// readRowsLeased is readRowsOnce for a store that keeps which frames are
// checked (mem://): rows whose chunks are all stored raw in a frame this
// process's writer built are one copy out of the leased frame, with no
// second checksum pass (the checksums were computed over these very bytes
// when they were stored, and they have not left this process's memory);
// any other frame or range decodes, checked, as before.
func (s *Store) readRowsLeased(ctx context.Context, cl store.CheckedLeaser, key string, start int64, want tensor.Meta, dst []byte) (*frame.Header, error) {
	b, checked, release, err := cl.LeaseChecked(ctx, key)
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := frame.NewReader(b, s.Limits)
	if err != nil {
		return nil, err
	}
	off, err := rowRange(r.Header, start, want)
	if err != nil {
		return r.Header, err
	}
	if checked && copyRawRange(r.Header, b, off, dst, pinOf(ctx)) {
		return r.Header, nil
	}
	return r.Header, r.ReadAt(ctx, off, dst, pinOf(ctx))
}

// copyRawRange copies tensor bytes [off, off+len(dst)) out of frame b when
// every chunk they touch is stored raw (then those chunks' bytes lie back
// to back in b, in tensor order), a large range in pieces on the workers
// (as torch's own copy_ splits it over its threads); false, with nothing
// copied, otherwise.
func copyRawRange(h *frame.Header, b []byte, off int64, dst []byte, pin parallel.Pin) bool {
	if len(dst) == 0 {
		return true
	}
	cs := int64(h.ChunkSize)
	first, last := int(off/cs), int((off+int64(len(dst))-1)/cs)
	at := int64(h.Size())
	for i := 0; i < first; i++ {
		at += int64(h.Chunks[i].EncLen)
	}
	for i := first; i <= last; i++ {
		if int(h.Chunks[i].EncLen) != h.RawChunkLen(i) {
			return false
		}
	}
	from := at + off - int64(first)*cs
	if from+int64(len(dst)) > int64(len(b)) {
		return false // a short frame: the checked path reports it
	}
	src := b[from : from+int64(len(dst))]
	n := (len(dst) + copyPiece - 1) / copyPiece
	_ = parallel.ForBytesPinned(n, int64(len(dst)), pin, func(j int) error {
		for lo, end := j*copyPiece, min((j+1)*copyPiece, len(dst)); lo < end; lo += copyBlock {
			hi := min(lo+copyBlock, end)
			copy(dst[lo:hi], src[lo:hi])
		}
		return nil
	})
	frame.Work.Decoded.Add(int64(len(dst)))
	return true
}
