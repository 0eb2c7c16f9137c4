// Package frame is gotensor's self-describing, checksummed container: a
// header (dtype, shape, codec, chunk table) followed by independently coded
// chunks. docs/FORMAT.md is the specification.
package frame

import (
	"encoding/binary"
	"os"

	"github.com/gotensor/gotensor/gotensor/codec"
	_ "github.com/gotensor/gotensor/gotensor/codec/all" // every codec a frame may name
	"github.com/gotensor/gotensor/gotensor/errs"
	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
	"github.com/gotensor/gotensor/gotensor/internal/size"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Magic opens every frame.
var Magic = [4]byte{'G', 'T', 'N', 'S'}

const (
	Version = 1

	fixedSize  = 32 // bytes before the shape
	chunkEntry = 12 // encoded length, CRC32C, aux checksum
	crcSize    = 4

	MinChunkSize     = 4 << 10
	MaxChunkSize     = 64 << 20
	DefaultChunkSize = 1 << 20
)

func crc32c(b []byte) uint32 { return castagnoli.Checksum(b) }

// Chunk is one entry of the chunk table.
type Chunk struct {
	EncLen uint32 // bytes in the payload; == raw length means stored raw
	CRC    uint32 // CRC32C of the encoded bytes
	Aux    uint32 // codec-defined checksum of the raw bytes (Adler-32 for DEFLATE), else 0
}

// Header is everything before the payload.
type Header struct {
	Meta       tensor.Meta
	Codec      codec.ID
	ChunkSize  uint32
	RawSize    int64
	CodecParam uint32
	Chunks     []Chunk
}

// Size is the encoded header length in bytes.
func (h *Header) Size() int {
	return fixedSize + 8*len(h.Meta.Shape) + chunkEntry*len(h.Chunks) + crcSize
}

// PayloadSize is the sum of the encoded chunk lengths.
func (h *Header) PayloadSize() int64 {
	var n int64
	for _, c := range h.Chunks {
		n += int64(c.EncLen)
	}
	return n
}

// RawChunkLen is the decoded length of chunk i.
func (h *Header) RawChunkLen(i int) int {
	start := int64(i) * int64(h.ChunkSize)
	return int(min(int64(h.ChunkSize), h.RawSize-start))
}

func (h *Header) put(b []byte) {
	copy(b, Magic[:])
	b[4] = Version
	b[5] = byte(h.Codec)
	b[6] = byte(h.Meta.DType)
	b[7] = byte(len(h.Meta.Shape))
	le := binary.LittleEndian
	le.PutUint32(b[8:], h.ChunkSize)
	le.PutUint32(b[12:], uint32(len(h.Chunks)))
	le.PutUint64(b[16:], uint64(h.RawSize))
	le.PutUint32(b[24:], h.CodecParam)
	le.PutUint32(b[28:], 0) // flags, reserved
	o := fixedSize
	for _, s := range h.Meta.Shape {
		le.PutUint64(b[o:], uint64(s))
		o += 8
	}
	for _, c := range h.Chunks {
		putChunk(b[o:], c)
		o += chunkEntry
	}
	sealHeader(b[:o+crcSize])
}

// chunkTable is where the chunk table starts in an encoded header.
func (h *Header) chunkTable() int { return fixedSize + 8*len(h.Meta.Shape) }

// putChunk encodes one chunk table entry at b.
func putChunk(b []byte, c Chunk) {
	le := binary.LittleEndian
	le.PutUint32(b, c.EncLen)
	le.PutUint32(b[4:], c.CRC)
	le.PutUint32(b[8:], c.Aux)
}

// sealHeader writes the checksum of encoded header b into its last bytes.
func sealHeader(b []byte) {
	n := len(b) - crcSize
	binary.LittleEndian.PutUint32(b[n:], crc32c(b[:n]))
}

// Limits bound what a decoder accepts, before it allocates anything.
type Limits struct {
	MaxRawBytes int64 // largest decoded tensor accepted
}

// DefaultLimits accepts tensors up to 64 GiB, or GOTENSOR_MAX_TENSOR_BYTES
// ("64GiB") when that is set; LimitsErr says why a setting was refused
// (DefaultLimits then keeps 64 GiB, and stores refuse to open).
var DefaultLimits, LimitsErr = limitsFromEnv()

func limitsFromEnv() (Limits, error) {
	lim := Limits{MaxRawBytes: 64 << 30}
	v := os.Getenv("GOTENSOR_MAX_TENSOR_BYTES")
	if v == "" {
		return lim, nil
	}
	n, err := size.Parse(v)
	if err != nil || n <= 0 {
		return lim, errs.New(errs.InvalidArgument, "GOTENSOR_MAX_TENSOR_BYTES=%q: want a size such as 64GiB", v)
	}
	lim.MaxRawBytes = n
	return lim, nil
}

// CheckWrite refuses a tensor of raw bytes that l would refuse to read
// back: a limit holds for writes as for reads.
func (l Limits) CheckWrite(raw int64) error {
	if raw > l.MaxRawBytes {
		return errs.New(errs.InvalidArgument, "a tensor of %d bytes is over the limit of %d (GOTENSOR_MAX_TENSOR_BYTES): it could not be read back", raw, l.MaxRawBytes)
	}
	return nil
}

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

// HeaderLen returns how many bytes the header starting at b occupies,
// reading only the fixed part; it lets a store fetch exactly the header.
func HeaderLen(b []byte) (int, error) {
	if len(b) < fixedSize {
		return 0, corrupt("frame truncated: %d bytes, header needs %d", len(b), fixedSize)
	}
	if [4]byte(b[:4]) != Magic {
		return 0, corrupt("not a gotensor frame (bad magic %q)", b[:4])
	}
	ndim := int(b[7])
	if ndim > tensor.MaxDims {
		return 0, corrupt("frame rank %d exceeds %d", ndim, tensor.MaxDims)
	}
	nchunks := int64(binary.LittleEndian.Uint32(b[12:]))
	if nchunks > 1<<26 {
		return 0, corrupt("frame declares %d chunks", nchunks)
	}
	return fixedSize + 8*ndim + chunkEntry*int(nchunks) + crcSize, nil
}

// ParseHeader decodes and validates the header at the start of b. It
// checks every count and length against lim and against each other before
// allocating, so a hostile header cannot cause a large allocation.
func ParseHeader(b []byte, lim Limits) (*Header, error) {
	n, err := HeaderLen(b)
	if err != nil {
		return nil, err
	}
	if len(b) < n {
		return nil, corrupt("frame truncated: %d bytes, header needs %d", len(b), n)
	}
	le := binary.LittleEndian
	if got, want := crc32c(b[:n-crcSize]), le.Uint32(b[n-crcSize:]); got != want {
		return nil, corrupt("header checksum mismatch (%08x != %08x)", got, want)
	}
	if b[4] != Version { // checked after the checksum: a flipped bit is corruption
		return nil, errs.New(errs.Unsupported, "frame version %d, this build reads %d", b[4], Version)
	}
	h := &Header{
		Codec:      codec.ID(b[5]),
		ChunkSize:  le.Uint32(b[8:]),
		RawSize:    int64(le.Uint64(b[16:])),
		CodecParam: le.Uint32(b[24:]),
	}
	h.Meta.DType = tensor.DType(b[6])
	if !h.Meta.DType.Valid() {
		return nil, corrupt("frame names unknown dtype %d", b[6])
	}
	if le.Uint32(b[28:]) != 0 {
		return nil, errs.New(errs.Unsupported, "frame uses flags this build does not know")
	}
	ndim := int(b[7])
	nchunks := int(le.Uint32(b[12:]))
	h.Meta.Shape = make([]int64, ndim)
	o := fixedSize
	for i := range h.Meta.Shape {
		v := le.Uint64(b[o:])
		if v > 1<<62 {
			return nil, corrupt("frame dimension %d is %d", i, v)
		}
		h.Meta.Shape[i] = int64(v)
		o += 8
	}
	want, err := h.Meta.NumBytes()
	if err != nil {
		return nil, corrupt("frame shape: %v", err)
	}
	if h.RawSize != want {
		return nil, corrupt("frame raw size %d does not match %s%v (%d bytes)", h.RawSize, h.Meta.DType, h.Meta.Shape, want)
	}
	if h.RawSize > lim.MaxRawBytes {
		return nil, errs.New(errs.InvalidArgument, "frame holds %d bytes, above the limit of %d", h.RawSize, lim.MaxRawBytes)
	}
	if h.RawSize > 0 && h.ChunkSize == 0 {
		return nil, corrupt("frame chunk size is 0")
	}
	if exp := expectedChunks(h.RawSize, h.ChunkSize); int64(nchunks) != exp {
		return nil, corrupt("frame declares %d chunks, raw size implies %d", nchunks, exp)
	}
	h.Chunks = make([]Chunk, nchunks)
	tab := b[o : o+chunkEntry*nchunks] // one bounds check for the table (a KV cache's has an entry a row)
	for i := range h.Chunks {
		e := tab[chunkEntry*i : chunkEntry*i+chunkEntry]
		c := Chunk{EncLen: le.Uint32(e), CRC: le.Uint32(e[4:]), Aux: le.Uint32(e[8:])}
		if c.EncLen > h.ChunkSize { // every chunk but the last is ChunkSize raw bytes
			return nil, corrupt("chunk %d encodes to %d bytes, more than its %d raw bytes", i, c.EncLen, h.RawChunkLen(i))
		}
		h.Chunks[i] = c
	}
	if last := nchunks - 1; last >= 0 && int(h.Chunks[last].EncLen) > h.RawChunkLen(last) {
		return nil, corrupt("chunk %d encodes to %d bytes, more than its %d raw bytes", last, h.Chunks[last].EncLen, h.RawChunkLen(last))
	}
	return h, nil
}

func expectedChunks(raw int64, chunk uint32) int64 {
	if raw == 0 {
		return 0
	}
	if chunk == 0 {
		return -1
	}
	return (raw + int64(chunk) - 1) / int64(chunk)
}
