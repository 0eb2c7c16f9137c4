package codec

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// lz4Block is the LZ4 block format (no frame), which a BlueField-3
// decompresses in hardware. zstdCodec is a zstd frame at the fastest level
// with entropy-coded literals; shuffleZstd is byte planes (as in planes)
// in one such frame.
type (
	lz4Block    struct{}
	zstdCodec   struct{}
	shuffleZstd struct{}
)

func init() {
	Register(lz4Block{})
	Register(zstdCodec{})
	Register(shuffleZstd{})
}

func (lz4Block) ID() ID                     { return IDLZ4 }
func (lz4Block) Name() string               { return "lz4" }
func (lz4Block) Supports(tensor.DType) bool { return true }

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

func (lz4Block) Encode(dst, src []byte, _ Info) ([]byte, uint32, error) {
	bound := lz4.CompressBlockBound(len(src))
	if cap(dst) < bound {
		dst = make([]byte, bound)
	}
	c := lz4Compressors.Get().(*lz4.Compressor)
	defer lz4Compressors.Put(c)
	n, err := c.CompressBlock(src, dst[:bound])
	if err != nil {
		return nil, 0, err
	}
	if n == 0 { // incompressible: the frame stores the chunk raw
		return append(dst[:0], src...), 0, nil
	}
	return dst[:n], 0, nil
}

func (lz4Block) Decode(dst, src []byte, _ Info, _ uint32) error {
	return engine.Current().LZ4Block(dst, src)
}

func (zstdCodec) ID() ID                     { return IDZstd }
func (zstdCodec) Name() string               { return "zstd" }
func (zstdCodec) Supports(tensor.DType) bool { return true }

var (
	zstdEnc = sync.OnceValue(func() *zstd.Encoder {
		// Huffman-coded literals even where the fastest level would store
		// them: float weights are nearly all literals (ratio 1.32 on bf16
		// where stored literals give 1.06, zstd level 3's ratio)
		// one encoder state per CPU: EncodeAll calls share them, and the frame
		// encodes its chunks in parallel
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			panic(err)
		}
		return e
	})
	zstdDec = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(2*64<<20))
		if err != nil {
			panic(err)
		}
		return d
	})
)

func (zstdCodec) Encode(dst, src []byte, _ Info) ([]byte, uint32, error) {
	return zstdEnc().EncodeAll(src, dst[:0]), 0, nil
}

func (zstdCodec) Decode(dst, src []byte, _ Info, _ uint32) error {
	out, err := zstdDec().DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return corrupt("zstd: %v", err)
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return corrupt("zstd: frame decoded to %d bytes, want %d", len(out), len(dst))
	}
	return nil
}

func (shuffleZstd) ID() ID                       { return IDShuffleZstd }
func (shuffleZstd) Name() string                 { return "shuffle-zstd" }
func (shuffleZstd) Supports(d tensor.DType) bool { return planes{}.Supports(d) }

func (shuffleZstd) Encode(dst, src []byte, in Info) ([]byte, uint32, error) {
	k, rot := layout(in.Meta.DType)
	if len(src)%k != 0 {
		return nil, 0, corrupt("shuffle-zstd: chunk is not a whole number of elements")
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	splitPlanes(ps.planes(k, len(src)/k), src, k, rot)
	return zstdEnc().EncodeAll(ps.buf[:len(src)], dst[:0]), 0, nil
}

func (shuffleZstd) Decode(dst, src []byte, in Info, _ uint32) error {
	k, rot := layout(in.Meta.DType)
	if len(dst)%k != 0 {
		return corrupt("shuffle-zstd: %d bytes is not a whole number of elements", len(dst))
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	pl := ps.planes(k, len(dst)/k)
	if err := (zstdCodec{}).Decode(ps.buf[:len(dst)], src, in, 0); err != nil {
		return err
	}
	mergePlanes(dst, pl, k, rot)
	return nil
}
