package frame

import (
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Options tune encoding.
type Options struct {
	ChunkSize int // raw bytes per chunk; 0 means DefaultChunkSize
}

// Aux computes a codec's checksum of a raw chunk, stored in the chunk table
// (DEFLATE codecs store the Adler-32 that DOCA reports).
type Aux interface {
	AuxSum(raw []byte) uint32
}

var scratch = sync.Pool{New: func() any { return new([]byte) }}

// Encode builds a frame for the tensor whose contiguous bytes are raw.
// raw is only read, and not retained.
func Encode(meta tensor.Meta, raw []byte, c codec.Codec, opt Options) ([]byte, error) {
	want, err := meta.NumBytes()
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) != want {
		return nil, errs.New(errs.InvalidArgument, "%s%v needs %d bytes, buffer has %d", meta.DType, meta.Shape, want, len(raw))
	}
	if !c.Supports(meta.DType) {
		return nil, errs.New(errs.InvalidArgument, "codec %s does not support dtype %s", c.Name(), meta.DType)
	}
	cs := opt.ChunkSize
	if cs == 0 {
		cs = DefaultChunkSize
	}
	if cs < MinChunkSize || cs > MaxChunkSize {
		return nil, errs.New(errs.InvalidArgument, "chunk size %d outside [%d, %d]", cs, MinChunkSize, MaxChunkSize)
	}
	h := &Header{
		Meta:      tensor.Meta{DType: meta.DType, Shape: append([]int64(nil), meta.Shape...)},
		Codec:     c.ID(),
		ChunkSize: uint32(cs),
		RawSize:   want,
	}
	n := int(expectedChunks(want, uint32(cs)))
	h.Chunks = make([]Chunk, n)
	rawChunk := func(i int) []byte { return raw[i*cs : i*cs+h.RawChunkLen(i)] }

	// Phase 1: encode every chunk into its own buffer (stored codecs skip it).
	aux, _ := c.(Aux)
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
	err = parallel.For(n, func(i int) error {
		src := rawChunk(i)
		if aux != nil {
			h.Chunks[i].Aux = aux.AuxSum(src)
		}
		if stored {
			h.Chunks[i].EncLen = uint32(len(src))
			return nil
		}
		bp := scratch.Get().(*[]byte)
		enc[i] = bp
		out, err := c.Encode(*bp, src, meta.DType)
		if err != nil {
			return err
		}
		*bp = out
		if len(out) >= len(src) {
			h.Chunks[i].EncLen = uint32(len(src)) // not worth it: store raw
		} else {
			h.Chunks[i].EncLen = uint32(len(out))
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
	err = parallel.For(n, func(i int) error {
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
	return h, DecodeWithHeader(h, frame, dst)
}

// DecodeWithHeader decodes a frame whose header was already parsed.
func DecodeWithHeader(h *Header, frame []byte, dst []byte) error {
	if int64(len(dst)) != h.RawSize {
		return errs.New(errs.InvalidArgument, "destination holds %d bytes, tensor needs %d", len(dst), h.RawSize)
	}
	c, err := codec.ByID(h.Codec)
	if err != nil {
		return err
	}
	hs := h.Size()
	if got, want := int64(len(frame)-hs), h.PayloadSize(); got != want {
		return corrupt("frame payload is %d bytes, chunk table says %d", got, want)
	}
	offs := make([]int, len(h.Chunks)+1)
	offs[0] = hs
	for i, ch := range h.Chunks {
		offs[i+1] = offs[i] + int(ch.EncLen)
	}
	aux, _ := c.(Aux)
	cs := int(h.ChunkSize)
	return parallel.For(len(h.Chunks), func(i int) error {
		src := frame[offs[i]:offs[i+1]]
		if crc32c(src) != h.Chunks[i].CRC {
			return corrupt("chunk %d checksum mismatch", i)
		}
		out := dst[i*cs : i*cs+h.RawChunkLen(i)]
		if len(src) == len(out) {
			copy(out, src)
		} else if err := c.Decode(out, src, h.Meta.DType); err != nil {
			if errs.KindOf(err) == errs.Internal {
				err = errs.Wrap(errs.CorruptData, err, "chunk %d", i)
			}
			return err
		}
		if aux != nil && aux.AuxSum(out) != h.Chunks[i].Aux {
			return corrupt("chunk %d raw checksum mismatch", i)
		}
		return nil
	})
}
