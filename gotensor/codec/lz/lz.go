// Package lz holds the LZ codecs: "lz4" (the LZ4 block format, which a
// BlueField-3 decompresses in hardware), "zstd" (one zstd frame a chunk,
// libzstd's with the tag libzstd, klauspost/compress's otherwise) and
// "shuffle-zstd" (byte planes in one zstd frame). README.md has their
// formats.
package lz

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/libzstd"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// lz4Block is the LZ4 block format (no frame), which a BlueField-3
// decompresses in hardware. zstdCodec is one zstd frame per chunk, written
// and read by libzstd where the build has it (tag libzstd) and by
// klauspost/compress otherwise: the same stream either way, each reads the
// other's. shuffleZstd is byte planes (as in planes) in one such frame.
type (
	lz4Block    struct{}
	zstdCodec   struct{}
	shuffleZstd struct{}
)

func init() {
	codec.Register(lz4Block{})
	codec.Register(zstdCodec{})
	codec.Register(shuffleZstd{})
}

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

func (lz4Block) ID() codec.ID               { return codec.IDLZ4 }
func (lz4Block) Name() string               { return "lz4" }
func (lz4Block) Supports(tensor.DType) bool { return true }

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

func (lz4Block) EncodeBound(n int, _ codec.Info) int { return lz4.CompressBlockBound(n) }

func (lz4Block) Encode(dst, src []byte, _ codec.Info) ([]byte, uint32, error) {
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

func (lz4Block) Decode(dst, src []byte, _ codec.Info, _ uint32) error {
	return engine.Current().LZ4Block(dst, src)
}

func (zstdCodec) ID() codec.ID               { return codec.IDZstd }
func (zstdCodec) Name() string               { return "zstd" }
func (zstdCodec) Supports(tensor.DType) bool { return true }

// zstdParams are the libzstd parameters by kind of chunk (zstdKind),
// chosen on real weights with TestSearchParams and interleaved timings
// against zstandard 1.5.7's level 3 on the whole tensor, the frame header
// and chunk table counted. Float weights are nearly all literals: the
// ratio is the Huffman coding of literals, and its cost most of the time
// at any level; what parts the settings is where blocks end, each block
// its own Huffman table.
//
// Chunks under 1 MiB (small tensors, or a mid-size one split for parallel
// coding) take level 1 (fast) with a 64K-entry hash table and level 3's
// minimum match, which finds level 3's matches (float32 needs them), and
// 96 KiB blocks: on stories260K bfloat16, float16, float32 97, 124 and 459
// B under zstandard's level 3 (128 KiB blocks: 181 and 55 B over on the
// first two), at 1.1x the speed of level 1 with a 128K-entry table, which
// saves 4 B more.
//
// Chunks of 1 MiB and more lie inside large tensors, where one table per
// 128 KiB costs less. zstandard 1.5.7's level 3 ends full blocks early
// where the byte statistics change (libzstd 1.5.4, Debian's, has no
// splitter at fast levels): PreSplit does the same from outside, the first
// block of each chunk included. On all-MiniLM bfloat16 (43 such chunks
// and a last one of 0.3 MB) plain level 1 with it is 1.0 KB under
// zstandard's level 3, where no 1.5.4 setting without it came within 0.9
// KB over. Under 1 MiB it costs 5% of the speed for 140 B on stories260K;
// left out there, all-MiniLM bfloat16 is 4 KB over where more than 10
// workers cut it into chunks under 1 MiB. On float16 and float32 the splitter
// cuts blocks too often (10-20 KB over on all-MiniLM): they keep whole
// blocks, with level 3's double-fast search at level 1's window, 31 and 59
// KB under zstandard's level 3 on all-MiniLM. No checksum (the frame has
// CRC32C) or content size.
var zstdParams = [...]libzstd.Params{
	zstdSmall:     {Level: 1, HashLog: 16, MinMatch: 5, MaxBlockSize: 96 << 10},
	zstdLarge:     {Level: 1, Strategy: 2, HashLog: 17, ChainLog: 16, MinMatch: 5},
	zstdLargeBF16: {Level: 1, PreSplit: true},
}

// The kinds of chunk zstdParams code.
const (
	zstdSmall     = iota // under zstdLargeChunk bytes
	zstdLarge            // zstdLargeChunk bytes and more, of dtypes other than bfloat16
	zstdLargeBF16        // zstdLargeChunk bytes and more of bfloat16
)

// zstdLargeChunk is the chunk size from which a chunk is large.
const zstdLargeChunk = 1 << 20

// zstdKind is the kind of a chunk of n bytes of dtype d.
func zstdKind(d tensor.DType, n int) int {
	switch {
	case n < zstdLargeChunk:
		return zstdSmall
	case d == tensor.BFloat16:
		return zstdLargeBF16
	}
	return zstdLarge
}

// zstdEncoders are libzstd encoders of zstdParams, made on first use.
var zstdEncoders [len(zstdParams)]func() (*libzstd.Encoder, error)

func init() {
	for k, p := range zstdParams {
		zstdEncoders[k] = sync.OnceValues(func() (*libzstd.Encoder, error) { return libzstd.NewEncoder(p) })
	}
}

// zstdLib is the libzstd encoder for a chunk of n bytes of dtype d.
func zstdLib(d tensor.DType, n int) (*libzstd.Encoder, error) {
	return zstdEncoders[zstdKind(d, n)]()
}

var (
	zstdEnc = sync.OnceValue(func() *zstd.Encoder {
		// Huffman-coded literals even where the fastest level would store
		// them: float weights are nearly all literals (ratio 1.32 on bf16
		// where stored literals give 1.06, zstd level 3's ratio)
		// one encoder state per CPU: EncodeAll calls share them, and the frame
		// encodes its chunks in parallel
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(zstdStates()),
			zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			panic(err)
		}
		return e
	})
	zstdDec = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(zstdStates()), zstd.WithDecoderMaxMemory(2*64<<20))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// zstdStates is how many DecodeAll or EncodeAll calls the shared decoder
// and encoder run at once: one per CPU, not GOMAXPROCS at first use, which
// would cap every later, wider parallel.SetWorkers or GOMAXPROCS (on 2
// cores, a first use at 1 worker left zstd at 1 core for the process).
func zstdStates() int { return max(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// zstdCompress appends one zstd frame holding src, a chunk of dtype d, to
// dst[:0].
func zstdCompress(dst, src []byte, d tensor.DType) ([]byte, error) {
	if libzstd.Built {
		e, err := zstdLib(d, len(src))
		if err != nil {
			return nil, err
		}
		return e.Compress(dst, src)
	}
	return zstdEnc().EncodeAll(src, dst[:0]), nil
}

// zstdDecompress fills all of dst from the zstd frame src, a chunk of
// dtype d. Float chunks (nearly all Huffman-coded literals) go to
// klauspost's decoder even where the build has libzstd: on real weights it
// runs at 1.02-1.1x libzstd 1.5.4's speed (float16 and float32 the most),
// where on match-heavy data (text, small integers) it runs at 0.7x.
func zstdDecompress(dst, src []byte, d tensor.DType) error {
	if libzstd.Built && !d.IsFloat() {
		return libzstd.Decompress(dst, src)
	}
	return zstdDecodeGo(dst, src)
}

// zstdDecodeGo is klauspost's decoder, the pure-Go twin of libzstd's.
func zstdDecodeGo(dst, src []byte) error {
	out, err := zstdDec().DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return corrupt("zstd: %v", err)
	}
	if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
		return corrupt("zstd: frame decoded to %d bytes, want %d", len(out), len(dst))
	}
	return nil
}

func (zstdCodec) Encode(dst, src []byte, in codec.Info) ([]byte, uint32, error) {
	out, err := zstdCompress(dst, src, in.Meta.DType)
	return out, 0, err
}

func (zstdCodec) Decode(dst, src []byte, in codec.Info, _ uint32) error {
	return zstdDecompress(dst, src, in.Meta.DType)
}

func (shuffleZstd) ID() codec.ID                 { return codec.IDShuffleZstd }
func (shuffleZstd) Name() string                 { return "shuffle-zstd" }
func (shuffleZstd) Supports(d tensor.DType) bool { return shuffle.Supports(d) }

func (shuffleZstd) Encode(dst, src []byte, in codec.Info) ([]byte, uint32, error) {
	k, rot := shuffle.Layout(in.Meta.DType)
	if len(src)%k != 0 {
		return nil, 0, corrupt("shuffle-zstd: chunk is not a whole number of elements")
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	shuffle.Split(ps.planes(k, len(src)/k), src, k, rot)
	out, err := zstdCompress(dst, ps.buf[:len(src)], tensor.Uint8) // byte planes: whole blocks
	return out, 0, err
}

func (shuffleZstd) Decode(dst, src []byte, in codec.Info, _ uint32) error {
	k, rot := shuffle.Layout(in.Meta.DType)
	if len(dst)%k != 0 {
		return corrupt("shuffle-zstd: %d bytes is not a whole number of elements", len(dst))
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	pl := ps.planes(k, len(dst)/k)
	if err := zstdDecompress(ps.buf[:len(dst)], src, tensor.Uint8); err != nil { // byte planes
		return err
	}
	shuffle.Merge(dst, pl, k, rot)
	return nil
}

// planeScratch is shuffle-zstd's plane buffer.
type planeScratch struct {
	buf   []byte
	plane [8][]byte
}

var planePool = pool.New(func() *planeScratch { return new(planeScratch) })

// planes returns k planes of n bytes in the scratch buffer.
func (ps *planeScratch) planes(k, n int) [][]byte {
	if cap(ps.buf) < k*n {
		ps.buf = make([]byte, k*n)
	}
	for j := 0; j < k; j++ {
		ps.plane[j] = ps.buf[j*n : (j+1)*n]
	}
	return ps.plane[:k]
}
