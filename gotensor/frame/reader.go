package frame

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
)

// Source serves byte ranges of a frame that is not at hand (it is in a
// store across a link).
type Source interface {
	// ReadRange returns frame bytes [off, off+n), or ErrChanged when the
	// frame is no longer the one the reader opened.
	ReadRange(ctx context.Context, off, n int64) ([]byte, error)
}

// Recycler is a Source whose ranges may be handed back once decoded.
type Recycler interface {
	// Recycle takes back b, a range ReadRange returned.
	Recycle(b []byte)
}

// IntoSource is a Source that can also place a range straight in the
// caller's memory: a span of raw chunks (stored as the tensor's own bytes)
// then lands where it is read into, and is checked there.
type IntoSource interface {
	// ReadRangeInto places frame bytes [off, off+len(dst)) in dst; ok
	// false: the source cannot (read it with ReadRange). ErrChanged as
	// for ReadRange.
	ReadRangeInto(ctx context.Context, off int64, dst []byte) (ok bool, err error)
}

// ErrChanged says a frame was replaced while it was read piece by piece.
var ErrChanged = errs.New(errs.CorruptData, "frame changed while it was read")

// piecesInFlight bounds the pieces of one read fetched at a time.
const piecesInFlight = 4

// Reader decodes one frame; every read path uses it. The frame is wholly
// in memory (NewReader), or its start is, and the rest is fetched from a
// Source piece by piece while earlier pieces decode (OpenReader).
type Reader struct {
	Header *Header
	at     []byte // frame bytes [0, len(at)) at hand
	src    Source // the rest; nil when at is the whole frame
	piece  int64
	head   *Head // the header's running sums, when the reader has them
}

// chunkOff is where chunk i's payload starts in the frame.
func (r *Reader) chunkOff(i int) int64 {
	if r.head != nil {
		return r.head.ChunkOff(i)
	}
	off := int64(r.Header.Size())
	for _, c := range r.Header.Chunks[:i] {
		off += int64(c.EncLen)
	}
	return off
}

// NewReader validates the frame b and returns a reader over it. b is not
// copied: it must stay unchanged while the reader is used.
func NewReader(b []byte, lim Limits) (*Reader, error) {
	h, err := ParseHeader(b, lim)
	if err != nil {
		return nil, err
	}
	if err := checkSize(h, int64(len(b))); err != nil {
		return nil, err
	}
	return &Reader{Header: h, at: b}, nil
}

// OpenReader returns a reader over a frame of size bytes whose first bytes
// are head (any length; the header is fetched when head is shorter); src
// serves the rest, piece bytes at a time.
func OpenReader(ctx context.Context, src Source, head []byte, size, piece int64, lim Limits) (*Reader, error) {
	h, head, err := ParseHead(head, size, func(n int64) ([]byte, error) { return src.ReadRange(ctx, 0, n) }, lim)
	if err != nil {
		return nil, err
	}
	return &Reader{Header: h, at: head[:min(int64(len(head)), size)], src: src, piece: max(piece, 1)}, nil
}

// HeadGuess is what a first read of a frame's start takes: the whole
// header of a frame of up to about 330 chunks.
const HeadGuess = 4096

// ParseHead is the one way every read path gets a frame's header: first
// holds the frame's first bytes (HeadGuess of them, or all of a smaller
// frame), more reads bytes [0, n) where the header is longer than first;
// the header is checked, and checked against the frame's size. It returns
// the header and the frame bytes at hand (first, or what more read).
func ParseHead(first []byte, size int64, more func(n int64) ([]byte, error), lim Limits) (*Header, []byte, error) {
	n, err := HeaderLen(first)
	if err != nil {
		return nil, nil, err
	}
	if int64(n) > size {
		return nil, nil, corrupt("frame of %d bytes has a %d-byte header", size, n)
	}
	if n > len(first) { // a header longer than a first read: many chunks
		if first, err = more(int64(n)); err != nil {
			return nil, nil, err
		}
	}
	h, err := ParseHeader(first, lim)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(h, size); err != nil {
		return nil, nil, err
	}
	return h, first, nil
}

// ReadHead is ParseHead of a frame of size bytes that r holds.
func ReadHead(r io.ReaderAt, size int64, lim Limits) (*Header, []byte, error) {
	readAt := func(n int64) ([]byte, error) {
		b := make([]byte, n)
		if _, err := r.ReadAt(b, 0); err != nil {
			return nil, err
		}
		return b, nil
	}
	first, err := readAt(min(HeadGuess, size))
	if err != nil {
		return nil, nil, err
	}
	return ParseHead(first, size, readAt, lim)
}

func checkSize(h *Header, size int64) error {
	if got, want := size-int64(h.Size()), h.PayloadSize(); got != want {
		return corrupt("frame payload is %d bytes, chunk table says %d", got, want)
	}
	return nil
}

// Decode decodes the whole tensor into dst, exactly its byte size.
func (r *Reader) Decode(ctx context.Context, dst []byte, pin parallel.Pin) error {
	if int64(len(dst)) != r.Header.RawSize {
		return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor needs %d", len(dst), r.Header.RawSize)
	}
	return r.DecodeRange(ctx, 0, dst, pin)
}

// Decode validates frame and decodes it into dst, which must be exactly the
// tensor's byte size. Chunks decode in parallel, straight into dst.
func Decode(ctx context.Context, frame []byte, dst []byte, lim Limits) (*Header, error) {
	r, err := NewReader(frame, lim)
	if err != nil {
		return nil, err
	}
	return r.Header, r.Decode(ctx, dst, nil)
}

// span is a run of chunks read and decoded together.
type span struct {
	chunk     int   // first chunk
	enc, n    int64 // encoded bytes [enc, enc+n) of the frame
	raw, rawN int64 // raw bytes [raw, raw+rawN) relative to the decode range
}

// DecodeRange decodes tensor bytes [off, off+len(dst)) into dst; the range
// must be whole chunks (the last may be short), which lets a reader stage a
// tensor through a small buffer. Chunks at hand decode in parallel; the
// others are fetched a piece at a time, a few pieces in flight.
func (r *Reader) DecodeRange(ctx context.Context, off int64, dst []byte, pin parallel.Pin) error {
	h := r.Header
	if err := h.CheckRange(off, int64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if r.src == nil { // all at hand: one parallel decode
		first := int(off / int64(h.ChunkSize))
		n := int((int64(len(dst)) + int64(h.ChunkSize) - 1) / int64(h.ChunkSize))
		start := int(r.chunkOff(first))
		stop := start
		for i := first; i < first+n; i++ {
			stop += int(h.Chunks[i].EncLen)
		}
		return decodeChunks(ctx, h, first, r.at[start:stop], dst, pin)
	}
	spans := r.spans(int(off/int64(h.ChunkSize)), int((off+int64(len(dst))+int64(h.ChunkSize)-1)/int64(h.ChunkSize)))
	if len(spans) == 1 {
		return r.decodeSpan(ctx, spans[0], dst, pin)
	}
	sem := make(chan struct{}, piecesInFlight)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return firstErr != nil }
	for _, sp := range spans {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			fail(ctxErr(ctx))
		}
		if failed() {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := parallel.Safe(func() error { return r.decodeSpan(ctx, sp, dst, pin) }); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// spans groups chunks [first, last): those at hand in one span, the rest
// in spans of about a piece each.
func (r *Reader) spans(first, last int) []span {
	h := r.Header
	cs := int64(h.ChunkSize)
	enc := r.chunkOff(first)
	var spans []span
	for i := first; i < last; {
		sp := span{chunk: i, enc: enc, raw: int64(i-first) * cs}
		local := sp.enc+int64(h.Chunks[i].EncLen) <= int64(len(r.at))
		for i < last {
			n := int64(h.Chunks[i].EncLen)
			if local && sp.enc+sp.n+n > int64(len(r.at)) ||
				!local && sp.n > 0 && sp.n+n > r.piece {
				break
			}
			sp.n += n
			sp.rawN += int64(h.RawChunkLen(i))
			i++
		}
		enc += sp.n
		spans = append(spans, sp)
	}
	return spans
}

func (r *Reader) decodeSpan(ctx context.Context, sp span, dst []byte, pin parallel.Pin) error {
	var b []byte
	if sp.enc+sp.n <= int64(len(r.at)) {
		b = r.at[sp.enc : sp.enc+sp.n]
	} else if is, ok := r.src.(IntoSource); ok && r.raw(sp) {
		out := dst[sp.raw : sp.raw+sp.rawN]
		if ok, err := is.ReadRangeInto(ctx, sp.enc, out); err != nil {
			return err
		} else if ok {
			return r.checkInPlace(ctx, sp, out, pin)
		}
	}
	if b == nil {
		got, err := r.src.ReadRange(ctx, sp.enc, sp.n)
		if err != nil {
			return err
		}
		if rc, ok := r.src.(Recycler); ok {
			defer rc.Recycle(got)
		}
		if int64(len(got)) != sp.n {
			return ErrChanged
		}
		b = got
	}
	return decodeChunks(ctx, r.Header, sp.chunk, b, dst[sp.raw:sp.raw+sp.rawN], pin)
}

// raw says whether every chunk of sp is stored raw (its bytes are the
// tensor's).
func (r *Reader) raw(sp span) bool {
	for i := sp.chunk; i < sp.chunk+r.spanChunks(sp); i++ {
		if int64(r.Header.Chunks[i].EncLen) != int64(r.Header.RawChunkLen(i)) {
			return false
		}
	}
	return true
}

// spanChunks is how many chunks sp covers.
func (r *Reader) spanChunks(sp span) int {
	cs := int64(r.Header.ChunkSize)
	return int((sp.rawN + cs - 1) / cs)
}

// checkInPlace checks the raw chunks of sp, received into out, against
// their checksums, in parallel. A chunk that fails is fetched again apart:
// if the store's bytes pass, out changed while they arrived (two reads
// into one buffer at once: the caller's race, InvalidArgument, as for a
// copy); else the store's bytes are corrupt.
func (r *Reader) checkInPlace(ctx context.Context, sp span, out []byte, pin parallel.Pin) error {
	h := r.Header
	cs := int64(h.ChunkSize)
	Work.Decoded.Add(int64(len(out)))
	return parallel.ForBytesFrom(r.spanChunks(sp), int64(len(out)), parallel.MinParallelBytes, pin, func(j int) error {
		i := sp.chunk + j
		b := out[int64(j)*cs : int64(j)*cs+int64(h.RawChunkLen(i))]
		if crc32c(b) == h.Chunks[i].CRC {
			return nil
		}
		got, err := r.src.ReadRange(ctx, sp.enc+int64(j)*cs, int64(len(b)))
		if err != nil {
			return err
		}
		if rc, ok := r.src.(Recycler); ok {
			defer rc.Recycle(got)
		}
		return rawMismatch(got, h.Chunks[i].CRC, i)
	})
}

// decodeChunks decodes chunks first, first+1, ... whose encoded bytes lie
// back to back in src into dst, their raw bytes, in parallel.
func decodeChunks(ctx context.Context, h *Header, first int, src, dst []byte, pin parallel.Pin) error {
	cs := int64(h.ChunkSize)
	n := int((int64(len(dst)) + cs - 1) / cs)
	Work.Decoded.Add(int64(len(dst)))
	c, err := codec.ByID(h.Codec)
	if err != nil {
		return err
	}
	in := codec.Info{Meta: h.Meta, Param: h.CodecParam}
	if n == 1 {
		return parallel.Safe(func() error { return decodeChunk(ctx, c, in, h.Chunks[first], src, dst, first) })
	}
	offs := make([]int, n+1)
	for j := 0; j < n; j++ {
		offs[j+1] = offs[j] + int(h.Chunks[first+j].EncLen)
	}
	return parallel.ForBytesFrom(n, int64(len(dst)), codec.SpreadBytes(c, in), pin, func(j int) error {
		i := first + j
		return decodeChunk(ctx, c, in, h.Chunks[i], src[offs[j]:offs[j+1]], dst[int64(j)*cs:int64(j)*cs+int64(h.RawChunkLen(i))], i)
	})
}

// CheckChunk checks chunk i's stored bytes b (read elsewhere, say straight
// into a caller's buffer) against its checksum.
func (h *Header) CheckChunk(i int, b []byte) error {
	if i < 0 || i >= len(h.Chunks) {
		return corrupt("chunk %d of %d", i, len(h.Chunks))
	}
	if crc32c(b) != h.Chunks[i].CRC {
		return corrupt("chunk %d checksum mismatch", i)
	}
	return nil
}

func decodeChunk(ctx context.Context, c codec.Codec, in codec.Info, ch Chunk, src, out []byte, i int) error {
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	if len(src) == len(out) { // stored raw: copy, checksumming in cache
		if copyCRC(out, src) != ch.CRC {
			return rawMismatch(src, ch.CRC, i)
		}
		return nil
	}
	if crc32c(src) != ch.CRC {
		return corrupt("chunk %d checksum mismatch", i)
	}
	err := c.Decode(out, src, in, ch.Aux)
	if err != nil && errs.KindOf(err) == errs.Internal {
		err = errs.Wrap(errs.CorruptData, err, "chunk %d", i)
	}
	return err
}

// rawMismatch says why a raw chunk copied into out failed its checksum:
// the stored bytes src, or out changing while it was filled (two reads
// into one buffer at once), which is the caller's doing, not the store's.
func rawMismatch(src []byte, crc uint32, i int) error {
	if crc32c(src) == crc {
		return errs.New(errs.InvalidArgument, "chunk %d: the destination memory changed while the chunk was copied into it (another read or write into the same memory at once?)", i)
	}
	return corrupt("chunk %d checksum mismatch", i)
}

// ctxErr is the typed error for a context that is done.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return errs.Wrap(errs.Timeout, ctx.Err(), "canceled")
	}
	return errs.Wrap(errs.Timeout, ctx.Err(), "deadline exceeded")
}

// CheckRange says whether tensor bytes [off, off+n) are whole chunks (the
// last chunk may be short), as ranged decodes require.
func (h *Header) CheckRange(off, n int64) error {
	cs := int64(h.ChunkSize)
	end := off + n
	if off < 0 || n < 0 || (cs > 0 && off%cs != 0) || end > h.RawSize || (end != h.RawSize && cs > 0 && end%cs != 0) {
		return errs.New(errs.InvalidArgument, "range [%d, %d) is not whole %d-byte chunks of a %d-byte tensor", off, end, cs, h.RawSize)
	}
	return nil
}
