package frame

import (
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Options tune encoding.
type Options struct {
	ChunkSize int          // raw bytes per chunk; 0 means DefaultChunkSize
	Pin       parallel.Pin // pins coding workers (to CPUs near the tensor's GPU); nil: no pinning
}

var scratch = pool.New(func() *[]byte { return new([]byte) })

// chunkSize picks the chunk size: the requested one, or by default 1 MiB,
// shrunk (down to 64 KiB) so that a tensor worth coding in parallel has a
// few chunks per core; then
// rounded to a multiple of the codec's unit when it has one.
func chunkSize(c codec.Codec, in codec.Info, raw int64, opt Options) (int64, error) {
	cs := int64(opt.ChunkSize)
	if cs == 0 {
		cs = DefaultChunkSize
		if per := raw / int64(4*parallel.Workers()); per < cs && raw >= parallel.MinParallelBytes {
			cs = max(64<<10, (per+15)&^15)
		}
	}
	if cs < MinChunkSize || cs > MaxChunkSize || cs%16 != 0 {
		return 0, errs.New(errs.InvalidArgument, "chunk size %d is not a multiple of 16 in [%d, %d]", cs, MinChunkSize, MaxChunkSize)
	}
	if ch, ok := c.(codec.Chunked); ok {
		unit, err := ch.ChunkUnit(in)
		if err != nil {
			return 0, err
		}
		if unit > 0 {
			cs = max(1, cs/unit) * unit
		}
	}
	return cs, nil
}

// Encode builds a frame for the tensor whose contiguous bytes are raw,
// coded with the codec spec ("planes", "q4:group=64,dim=2", ...). raw is
// only read, and not retained.
func Encode(meta tensor.Meta, raw []byte, spec string, opt Options) ([]byte, error) {
	c, param, err := codec.Parse(spec)
	if err != nil {
		return nil, err
	}
	return EncodeWith(meta, raw, c, param, opt)
}

// newHeader validates a tensor and codec and lays out the frame's header
// (its chunk table still empty).
func newHeader(meta tensor.Meta, c codec.Codec, param uint32, opt Options) (*Header, codec.Info, error) {
	want, err := meta.NumBytes()
	if err != nil {
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

// EncodeWith is Encode with a resolved codec and parameter.
func EncodeWith(meta tensor.Meta, raw []byte, c codec.Codec, param uint32, opt Options) ([]byte, error) {
	h, in, err := newHeader(meta, c, param, opt)
	if err != nil {
		return nil, err
	}
	want, cs, n := h.RawSize, int64(h.ChunkSize), len(h.Chunks)
	if int64(len(raw)) != want {
		return nil, errs.New(errs.InvalidArgument, "%s%v needs %d bytes, buffer has %d", meta.DType, meta.Shape, want, len(raw))
	}
	rawChunk := func(i int) []byte { return raw[int64(i)*cs : int64(i)*cs+int64(h.RawChunkLen(i))] }

	// Phase 1: encode every chunk into its own buffer (none skips it).
	stored := c.ID() == codec.IDNone
	var enc []*[]byte
	if !stored {
		enc = make([]*[]byte, n)
		defer func() {
			for _, b := range enc {
				if b != nil {
					scratch.Put(b)
				}
			}
		}()
	}
	err = parallel.ForBytesPinned(n, want, opt.Pin, func(i int) error {
		src := rawChunk(i)
		if stored {
			h.Chunks[i].EncLen = uint32(len(src))
			return nil
		}
		bp := scratch.Get()
		enc[i] = bp
		out, aux, err := c.Encode(*bp, src, in)
		if err != nil {
			return err
		}
		*bp = out
		if len(out) >= len(src) {
			h.Chunks[i].EncLen = uint32(len(src)) // not worth it: store raw
		} else {
			h.Chunks[i].EncLen, h.Chunks[i].Aux = uint32(len(out)), aux
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Phase 2: lay the chunks out after the header, checksumming as we go.
	hs := h.Size()
	offs := make([]int, n+1)
	offs[0] = hs
	for i, ch := range h.Chunks {
		offs[i+1] = offs[i] + int(ch.EncLen)
	}
	out := make([]byte, offs[n])
	err = parallel.ForBytesPinned(n, want, opt.Pin, func(i int) error {
		src := rawChunk(i)
		if int(h.Chunks[i].EncLen) != len(src) {
			src = *enc[i]
		}
		dst := out[offs[i]:offs[i+1]]
		copy(dst, src)
		h.Chunks[i].CRC = crc32c(dst)
		return nil
	})
	if err != nil {
		return nil, err
	}
	h.put(out[:hs])
	return out, nil
}

// Decode validates frame and decodes it into dst, which must be exactly the
// tensor's byte size. Chunks decode in parallel, straight into dst.
func Decode(frame []byte, dst []byte, lim Limits) (*Header, error) {
	h, err := ParseHeader(frame, lim)
	if err != nil {
		return nil, err
	}
	return h, DecodeWithHeader(h, frame, dst, nil)
}

// DecodeWithHeader decodes a frame whose header was already parsed; pin
// (may be nil) pins the decoding workers.
func DecodeWithHeader(h *Header, frame []byte, dst []byte, pin parallel.Pin) error {
	if int64(len(dst)) != h.RawSize {
		return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor needs %d", len(dst), h.RawSize)
	}
	return DecodeRange(h, frame, 0, dst, pin)
}
