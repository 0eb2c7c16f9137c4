package frame

import (
	"context"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// RowBytes is the byte size of one row of meta's leading dimension (the
// whole element for a 0-d tensor).
func RowBytes(meta tensor.Meta) int64 {
	n := int64(meta.DType.Size())
	for _, d := range meta.Shape[min(1, len(meta.Shape)):] {
		n *= d
	}
	return n
}

// RowChunkSize bounds the default chunk of a frame aligned to rows (a
// row write re-encodes the chunks it touches, so their size is its cost).
const RowChunkSize = 256 << 10

// alignToRows rounds chunk size cs (a multiple of unit) to a multiple of
// both unit and the tensor's row, so that a run of rows is whole chunks;
// cs is kept when no such size fits a frame.
func alignToRows(cs, unit int64, meta tensor.Meta) int64 {
	row := RowBytes(meta)
	if row <= 0 || len(meta.Shape) < 2 {
		return cs
	}
	if row > cs && row%unit == 0 { // a long row: chunks that divide it, so rows still start on chunk boundaries
		for k := (row + cs - 1) / cs; row/k >= MinChunkSize; k++ {
			if c := row / k; row%k == 0 && c%unit == 0 {
				return c
			}
		}
	}
	u := lcm(unit, row)
	if u > MaxChunkSize || u <= 0 {
		return cs
	}
	a := max(1, cs/u) * u
	for a < MinChunkSize {
		a += u
	}
	if a > MaxChunkSize {
		return cs
	}
	return a
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int64) int64 { return a / gcd(a, b) * b }

// Work counts the raw bytes this process's frames have encoded and
// decoded: what a row-range write or read costs, as tests measure it.
var Work struct{ Encoded, Decoded atomic.Int64 }

// ReadAt decodes tensor bytes [off, off+len(dst)), any range: the chunks
// it covers whole go straight into dst, the ones it covers in part at
// either end are decoded into scratch and the wanted bytes copied out.
// Only the chunks the range touches are fetched and decoded.
func (r *Reader) ReadAt(ctx context.Context, off int64, dst []byte, pin parallel.Pin) error {
	h := r.Header
	end := off + int64(len(dst))
	if off < 0 || end > h.RawSize || end < off {
		return errs.New(errs.InvalidArgument, "range [%d, %d) outside a %d-byte tensor", off, end, h.RawSize)
	}
	if len(dst) == 0 {
		return nil
	}
	cs := int64(h.ChunkSize)
	lo, hi := (off+cs-1)/cs*cs, end/cs*cs
	if end == h.RawSize {
		hi = end
	}
	if lo > hi { // inside one chunk
		return r.partChunk(ctx, off/cs, off, dst, pin)
	}
	if off < lo {
		if err := r.partChunk(ctx, lo/cs-1, off, dst[:lo-off], pin); err != nil {
			return err
		}
	}
	if lo < hi {
		if err := r.DecodeRange(ctx, lo, dst[lo-off:hi-off], pin); err != nil {
			return err
		}
	}
	if hi < end {
		return r.partChunk(ctx, hi/cs, hi, dst[hi-off:], pin)
	}
	return nil
}

// partChunk decodes chunk i and copies its tensor bytes [off, off+len(dst)).
func (r *Reader) partChunk(ctx context.Context, i, off int64, dst []byte, pin parallel.Pin) error {
	cs := int64(r.Header.ChunkSize)
	buf := make([]byte, r.Header.RawChunkLen(int(i)))
	if err := r.DecodeRange(ctx, i*cs, buf, pin); err != nil {
		return err
	}
	copy(dst, buf[off-i*cs:])
	return nil
}

// Patch is an edit of a stored frame: chunks [First, First+k) coded
// again. The header keeps its length: its bytes [TableAt, +len(Table))
// become Table (the chunks' entries) and its checksum, at SumAt, Sum; the
// frame's bytes [Off, Off+N) become Data.
type Patch struct {
	First          int
	TableAt, SumAt int64
	Table          []byte
	Sum            [crcSize]byte
	Off, N         int64
	Data           []byte
	chunks         []Chunk // the new entries
}

// Patch re-encodes the chunks that tensor bytes [off, off+len(src)) touch
// with src written over them, and returns the edit of the frame that
// stores it (see Head.Patch).
func (r *Reader) Patch(ctx context.Context, off int64, src []byte, pin parallel.Pin) (*Patch, error) {
	h, err := NewHead(r)
	if err != nil {
		return nil, err
	}
	return h.Patch(ctx, r, off, src, pin)
}

// Patch re-encodes the chunks that tensor bytes [off, off+len(src)) touch
// with src written over them, and returns the edit of the frame with
// header h that stores it. Chunks src covers only in part are decoded
// first, through r, a reader of that frame (nil when NeedsFrame is false);
// every other chunk keeps its encoded bytes. A lossy codec's edge chunks
// are coded again from their decoded values. The cost is the chunks
// touched: the new header checksum is the old one patched, and the
// payload offset comes from h's running sums.
func (h *Head) Patch(ctx context.Context, r *Reader, off int64, src []byte, pin parallel.Pin) (*Patch, error) {
	end := off + int64(len(src))
	if off < 0 || end > h.RawSize || end < off {
		return nil, errs.New(errs.InvalidArgument, "range [%d, %d) outside a %d-byte tensor", off, end, h.RawSize)
	}
	if len(src) == 0 {
		p := &Patch{Off: int64(len(h.raw)), TableAt: int64(h.chunkTable()), SumAt: int64(len(h.raw) - crcSize)}
		copy(p.Sum[:], h.raw[p.SumAt:])
		return p, nil
	}
	cs := int64(h.ChunkSize)
	first, last := off/cs, (end+cs-1)/cs
	lo, hi := first*cs, min(last*cs, h.RawSize)
	raw := src
	if lo < off || hi > end { // edges partly covered: start from the stored bytes
		if r == nil {
			return nil, errs.New(errs.Internal, "a patch of part of a chunk needs the frame")
		}
		raw = make([]byte, hi-lo)
		if off > lo {
			if err := r.DecodeRange(ctx, lo, raw[:min(cs, hi-lo)], pin); err != nil {
				return nil, err
			}
		}
		if tail := (last - 1) * cs; end < hi && (tail > lo || off == lo) {
			if err := r.DecodeRange(ctx, tail, raw[tail-lo:], pin); err != nil {
				return nil, err
			}
		}
		copy(raw[off-lo:], src)
	}
	c, err := codec.ByID(h.Codec)
	if err != nil {
		return nil, err
	}
	in := codec.Info{Meta: h.Meta, Param: h.CodecParam}
	n := int(last - first)
	enc := make([][]byte, n)
	p := &Patch{First: int(first), Off: h.ChunkOff(int(first)), chunks: make([]Chunk, n)}
	err = parallel.ForBytesFrom(n, hi-lo, codec.SpreadBytes(c, in), pin, func(j int) error {
		part := raw[int64(j)*cs : min(int64(j+1)*cs, hi-lo)]
		var cerr error
		enc[j], p.chunks[j], cerr = codeChunk(c, in, part)
		return cerr
	})
	if err != nil {
		return nil, err
	}
	Work.Encoded.Add(hi - lo)
	p.N = h.ChunkOff(int(last)) - p.Off
	h.sealPatch(p)
	if n == 1 {
		p.Data = enc[0]
		return p, nil
	}
	var size int
	for _, e := range enc {
		size += len(e)
	}
	p.Data = make([]byte, 0, size)
	for _, e := range enc {
		p.Data = append(p.Data, e...)
	}
	return p, nil
}

// codeChunk codes one chunk on the heap by the frame's keep-raw rule.
func codeChunk(c codec.Codec, in codec.Info, src []byte) ([]byte, Chunk, error) {
	if c.ID() != codec.IDNone {
		out, aux, err := c.Encode(nil, src, in)
		if err != nil {
			return nil, Chunk{}, err
		}
		if keepCoded(out, src) {
			return out, Chunk{EncLen: uint32(len(out)), CRC: crc32c(out), Aux: aux}, nil
		}
	}
	dst := make([]byte, len(src))
	return dst, Chunk{EncLen: uint32(len(src)), CRC: copyCRC(dst, src)}, nil
}
