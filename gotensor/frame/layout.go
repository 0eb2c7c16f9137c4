package frame

import (
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Options tune encoding.
type Options struct {
	ChunkSize int          // raw bytes per chunk; 0 means DefaultChunkSize
	Pin       parallel.Pin // pins coding workers (to CPUs near the tensor's GPU); nil: no pinning
	AlignRows bool         // chunk size a multiple of the leading dimension's row, where one fits
	Limits    Limits       // the largest tensor written, as read; zero: DefaultLimits
	Stop      func() error // asked before each chunk is coded: an error stops the write (its context ended); nil: never
}

// Alloc provides the memory of whole frames; a store lends the buffers of
// frames it dropped. Get returns n bytes with undefined contents; Put
// takes back a buffer that did not become a frame.
type Alloc interface {
	Get(n int) []byte
	Put(b []byte)
}

// PayloadAlloc is an Alloc that places a frame knowing where its payload
// starts (a store that puts payloads on a page, for views): a codec-none
// frame's memory comes from GetFrame.
type PayloadAlloc interface {
	Alloc
	GetFrame(header, payload int) []byte
}

// Heap allocates frames from the Go heap.
var Heap Alloc = heapAlloc{}

type heapAlloc struct{}

func (heapAlloc) Get(n int) []byte { return make([]byte, n) }
func (heapAlloc) Put([]byte)       {}

// chunkSize picks the chunk size: the requested one, or by default 1 MiB,
// shrunk (down to 64 KiB, or half the codec's SpreadBytes) so that a tensor
// worth coding in parallel has a few equal chunks per core; then rounded to a
// multiple of the codec's unit when it has one.
func chunkSize(c codec.Codec, in codec.Info, raw int64, opt Options) (int64, error) {
	cs := int64(opt.ChunkSize)
	if cs == 0 {
		cs = DefaultChunkSize
		from, least := int64(parallel.MinParallelBytes), int64(64<<10)
		if _, ok := c.(codec.Spread); ok {
			from = codec.SpreadBytes(c, in)
			least = from / 2
		}
		if per := raw / int64(4*parallel.Workers()); per < cs && raw >= from {
			n := raw / max(least, per) // chunks of equal size: no small last one
			cs = ((raw+n-1)/n + 15) &^ 15
		}
	}
	if cs < MinChunkSize || cs > MaxChunkSize || cs%16 != 0 {
		return 0, errs.New(errs.InvalidArgument, "chunk size %d is not a multiple of 16 in [%d, %d]", cs, MinChunkSize, MaxChunkSize)
	}
	unit := int64(16)
	if ch, ok := c.(codec.Chunked); ok {
		u, err := ch.ChunkUnit(in)
		if err != nil {
			return 0, err
		}
		if u > 0 {
			cs = max(1, cs/u) * u
			unit = u
		}
	}
	if opt.AlignRows {
		if opt.ChunkSize == 0 && len(in.Meta.Shape) >= 2 {
			cs = min(cs, RowChunkSize) // a row write re-encodes this much, whatever the tensor's size
		}
		cs = alignToRows(cs, unit, in.Meta)
	}
	if opt.ChunkSize == 0 && c.ID() == codec.IDNone {
		cs = alignPayload(cs, unit, raw, in.Meta, opt.AlignRows)
	}
	return cs, nil
}

// alignPayload picks, for a codec-none frame of a dtype of 8 or 16 bytes,
// a chunk size near cs (down to half of it, keeping the unit and the row
// alignment) whose chunk count makes the header, and so the payload that
// follows it, a multiple of the element size: a view of the frame where it
// is stored (a file) is then aligned for its dtype. The header is a
// multiple of 4 bytes whatever the count, so smaller dtypes need nothing.
// An encoder's choice: any chunk size reads alike.
func alignPayload(cs, unit, raw int64, meta tensor.Meta, rows bool) int64 {
	align := int64(min(meta.DType.Size(), 16))
	if align < 8 || raw == 0 {
		return cs
	}
	aligned := func(c int64) bool {
		n := (raw + c - 1) / c
		return (int64(fixedSize+8*len(meta.Shape))+12*n+4)%align == 0
	}
	if aligned(cs) {
		return cs
	}
	row := int64(0)
	if rows && len(meta.Shape) >= 2 {
		row = RowBytes(meta)
	}
	for c := cs - cs%unit; c >= max(MinChunkSize, cs/2); c -= unit {
		if c <= 0 || row > 0 && (row <= c && c%row != 0 || row > c && row%c != 0) {
			continue
		}
		if aligned(c) {
			return c
		}
	}
	return cs
}

// newHeader validates a tensor and codec and lays out the frame's header
// (its chunk table still empty).
func newHeader(meta tensor.Meta, c codec.Codec, param uint32, opt Options) (*Header, codec.Info, error) {
	want, err := meta.NumBytes()
	if err != nil {
		return nil, codec.Info{}, err
	}
	lim := opt.Limits
	if lim.MaxRawBytes == 0 {
		lim = DefaultLimits
	}
	if err := lim.CheckWrite(want); err != nil {
		return nil, codec.Info{}, err
	}
	if !c.Supports(meta.DType) {
		return nil, codec.Info{}, errs.New(errs.InvalidArgument, "codec %s does not support dtype %s", c.Name(), meta.DType)
	}
	in := codec.Info{Meta: tensor.Meta{DType: meta.DType, Shape: append([]int64(nil), meta.Shape...)}, Param: param}
	cs, err := chunkSize(c, in, want, opt)
	if err != nil {
		return nil, codec.Info{}, err
	}
	if cs > 1<<32-1 {
		return nil, codec.Info{}, errs.New(errs.InvalidArgument, "codec %s needs %d-byte chunks for %s%v; the frame allows 4 GiB", c.Name(), cs, meta.DType, meta.Shape)
	}
	h := &Header{Meta: in.Meta, Codec: c.ID(), ChunkSize: uint32(cs), RawSize: want, CodecParam: param}
	h.Chunks = make([]Chunk, expectedChunks(want, uint32(cs)))
	return h, in, nil
}
