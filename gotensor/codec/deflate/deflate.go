// Package deflate holds the codecs of raw DEFLATE (RFC 1951) streams,
// the streams NVIDIA DOCA Compress reads and writes on a BlueField:
// "deflate" (one stream a chunk, compress/flate's BestSpeed or
// libdeflate's level 1) and "shuffle-deflate" (byte planes in Huffman-only
// and stored blocks, which the pure-Go decoder here decodes up to four
// literals a lookup). README.md has the streams' rules and formats.
package deflate

import (
	"bytes"
	stdflate "compress/flate"
	"encoding/binary"
	"strings"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/libdeflate"
	"github.com/gotensor/gotensor/gotensor/codec/internal/sample"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/adler32"
	"github.com/gotensor/gotensor/gotensor/internal/kernels"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// deflate is raw RFC 1951 DEFLATE, the stream NVIDIA DOCA Compress emits
// and accepts (zlib's wbits=-15). The chunk table's aux word holds the
// Adler-32 of the inflated bytes, the checksum DOCA's deflate tasks report.
type deflate struct{}

// shuffleDeflate is byte planes (package shuffle, as planes splits them)
// inflated from raw DEFLATE streams, two per chunk by default (its
// parameter, below): a BlueField-3 can inflate them in hardware and the
// host (or the DPU's Arm cores) merges the planes. The exponent planes,
// and planes the sampler (package sample) says coding pays for, are
// Huffman-only blocks, the others stored blocks, in plane order. aux is the Adler-32 of the inflated, still
// shuffled bytes.
type shuffleDeflate struct{}

func init() {
	codec.Register(deflate{})
	codec.Register(shuffleDeflate{})
}

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

// ownDecoder: shuffle-deflate's own streams go to the literal decoder
// (literals.go) on the software engine; off, to the library (libdeflate
// where the build has it, compress/flate otherwise), as every other
// stream. BenchmarkKernels turns it off ("deflate.literals") to hold the
// decoder to the library it replaced.
var ownDecoder = true

func init() { kernels.Register("deflate.literals", &ownDecoder) }

func (deflate) ID() codec.ID               { return codec.IDDeflate }
func (deflate) Name() string               { return "deflate" }
func (deflate) Supports(tensor.DType) bool { return true }

func (shuffleDeflate) ID() codec.ID                 { return codec.IDShuffleDeflate }
func (shuffleDeflate) Name() string                 { return "shuffle-deflate" }
func (shuffleDeflate) Supports(d tensor.DType) bool { return shuffle.Supports(d) }

// SpreadBytes: shuffle-deflate codes at planes' speed, so it spreads as
// planes does (a half-megabyte tensor on two workers).
func (shuffleDeflate) SpreadBytes(codec.Info) int64 { return 512 << 10 }

// deflate codes with libdeflate's level 1 where the build has it, with Go's
// compress/flate at BestSpeed otherwise. On the six weight sets of
// bench-codecs libdeflate's level 1 is 0.1-3% under zlib level 1's stream
// (1.3 KB on stories260K float16 and float32, where BestSpeed is within
// 50 bytes of it and the frame's header puts it over), at 3x zlib level
// 1's speed (65-86 MB/s a core) and about half BestSpeed's; Go's levels 2
// and more are 3-4x slower than BestSpeed, klauspost's fast levels leave
// float weights nearly raw, Huffman-only blocks lose 3% on stories260K.
// shuffle-deflate's planes have a writer of their own (writer.go).
const libdeflateLevel = 1

var lzWriters sync.Pool // *stdflate.Writer

func (deflate) Encode(dst, src []byte, _ codec.Info) ([]byte, uint32, error) {
	if out, sum, ok := engine.Deflate(dst, src); ok { // a BlueField-2 compresses in hardware
		return out, sum, nil
	}
	var out []byte
	var err error
	if libdeflate.Built {
		out, err = libdeflate.Deflate(dst, src, libdeflateLevel)
	} else {
		out, err = deflateGo(dst, src)
	}
	if err != nil {
		return nil, 0, err
	}
	return out, adler32.Checksum(src), nil
}

// deflateGo appends src as one raw DEFLATE stream, Go's BestSpeed, to
// dst[:0]: the pure-Go twin of libdeflate's level 1.
func deflateGo(dst, src []byte) ([]byte, error) {
	out := bytes.NewBuffer(dst[:0])
	w, _ := lzWriters.Get().(*stdflate.Writer)
	if w == nil {
		var err error
		if w, err = stdflate.NewWriter(out, stdflate.BestSpeed); err != nil {
			return nil, err
		}
	} else {
		w.Reset(out)
	}
	defer lzWriters.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (deflate) Decode(dst, src []byte, _ codec.Info, aux uint32) error {
	sum, err := inflate(dst, src)
	if err != nil {
		return err
	}
	if sum != aux {
		return corrupt("deflate: Adler-32 mismatch")
	}
	return nil
}

// shuffle-deflate's parameter is how its chunks are laid out. Frames
// written before it have 0: one raw DEFLATE stream of the chunk's planes.
// twoStreams (the default): the first half of the chunk's elements and
// the second half each as such a stream, the first preceded by its length
// (u32 little-endian); the decoder decodes both in one loop.
const (
	oneStream  = 0
	twoStreams = 2
)

func (shuffleDeflate) DefaultParam() uint32 { return twoStreams }

func (shuffleDeflate) ParseParam(s string) (uint32, error) {
	switch strings.TrimSpace(s) {
	case "streams=1":
		return oneStream, nil
	case "streams=2":
		return twoStreams, nil
	}
	return 0, errs.New(errs.InvalidArgument, "codec shuffle-deflate: bad parameter %q (want streams=1 or streams=2)", s)
}

func unknownLayout(param uint32) error {
	return errs.New(errs.Unsupported, "shuffle-deflate: chunk layout %d unknown to this build", param)
}

func (shuffleDeflate) Encode(dst, src []byte, in codec.Info) ([]byte, uint32, error) {
	k, rot := shuffle.Layout(in.Meta.DType)
	if len(src)%k != 0 {
		return nil, 0, corrupt("shuffle-deflate: chunk is not a whole number of elements")
	}
	ps := scratchPool.Get()
	defer scratchPool.Put(ps)
	hs := huffmanPool.Get()
	defer huffmanPool.Put(hs)
	ps.planes(k, len(src)/k)
	shuffled := ps.buf[:len(src)]
	out := room(dst, len(src)+len(src)/64+64)
	switch in.Param {
	case oneStream:
		out, sum := planeStream(out, src, shuffled, k, rot, ps, hs)
		return out, sum, nil
	case twoStreams:
		h := halfChunk(len(src), k)
		var pla, plb [8][]byte
		pa, pb := shuffle.Cut(shuffled[:h], k, &pla), shuffle.Cut(shuffled[h:], k, &plb)
		shuffle.Split(pa, src[:h], k, rot)
		shuffle.Split(pb, src[h:], k, rot)
		if hw, sumA, ok := engine.Deflate(out[4:4], shuffled[:h]); ok { // in hardware, a stream at a time
			out = binary.LittleEndian.AppendUint32(out, uint32(len(hw)))
			out = append(out, hw...)
			out, sumB := codedPlanes(out, pb, shuffled[h:], ps, hs)
			return out, adler32.Combine(sumA, sumB, len(src)-h), nil
		}
		return twinStreams(out, pa, pb, ps, hs), adler32.Checksum(shuffled), nil
	}
	return nil, 0, unknownLayout(in.Param)
}

// halfChunk is where a two-stream chunk of n bytes of k-byte elements is
// cut: after half its elements.
func halfChunk(n, k int) int { return n / k / 2 * k }

// planeStream appends src as one raw DEFLATE stream of its planes, split
// into shuffled, and returns it with the Adler-32 of shuffled.
func planeStream(out, src, shuffled []byte, k int, rot bool, ps *scratch, hs *huffmanScratch) ([]byte, uint32) {
	var pls [8][]byte
	pl := shuffle.Cut(shuffled, k, &pls)
	shuffle.Split(pl, src, k, rot)
	return codedPlanes(out, pl, shuffled, ps, hs)
}

// codedPlanes appends the planes pl, which fill shuffled, as one raw
// DEFLATE stream and returns it with the Adler-32 of shuffled.
func codedPlanes(out []byte, pl [][]byte, shuffled []byte, ps *scratch, hs *huffmanScratch) ([]byte, uint32) {
	if hw, sum, ok := engine.Deflate(out[len(out):], shuffled); ok { // the planes in one hardware stream
		return append(out, hw...), sum
	}
	w := newBitWriter(out)
	k := len(pl)
	for j := 0; j < k; j++ {
		if len(pl[j]) > 0 && (j == 0 || (j == 1 && k == 8) || sample.Bytes(&ps.hist, pl[j], nil)) {
			w.literalBlocks(pl[j], hs)
		} else {
			w.stored(pl[j], false)
		}
	}
	w.stored(nil, true)
	return w.Bytes(), adler32.Checksum(shuffled)
}

// twinStreams appends the two-stream chunk of the planes pa and pb (of
// its two halves), the two streams written side by side, plane by plane:
// a plane is coded in both or stored in both, as one stream of the chunk
// would have it (sample.Bytes of both); coded planes are cut into blocks at the
// same offsets and coded alike where that costs little
// (literalBlocksJoint), for the decoder to share its tables.
func twinStreams(out []byte, pa, pb [][]byte, ps *scratch, hs *huffmanScratch) []byte {
	k := len(pa)
	wa := newBitWriter(append(out, 0, 0, 0, 0))
	// the second stream's stored payloads are copied once, where the
	// two are joined
	hs.otherHeld = hs.otherHeld[:0]
	wb := newBitWriter(room(hs.other, k*len(pb[0])+k*len(pb[0])/64+64))
	wb.held = &hs.otherHeld
	for j := 0; j < k; j++ {
		if j == 0 || (j == 1 && k == 8) || sample.Bytes(&ps.hist, pa[j], pb[j]) {
			literalBlocksJoint(&wa, &wb, pa[j], pb[j], hs)
		} else {
			wa.stored(pa[j], false)
			wb.stored(pb[j], false)
		}
	}
	wa.stored(nil, true)
	wb.stored(nil, true)
	binary.LittleEndian.PutUint32(wa.Buf[len(out):], uint32(wa.Pos-len(out)-4))
	hs.other = wb.Bytes()
	out = wb.heldStream(wa.Bytes())
	clear(hs.otherHeld) // no hold on the planes' buffer
	return out
}

// room is b emptied, or a new buffer where b holds under n bytes: never
// b's old bytes copied, as slices.Grow copies all it holds (a frame's
// chunk buffer is a whole chunk of garbage).
func room(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, 0, n)
	}
	return b[:0]
}

func (shuffleDeflate) Decode(dst, src []byte, in codec.Info, aux uint32) error {
	k, rot := shuffle.Layout(in.Meta.DType)
	if len(dst)%k != 0 {
		return corrupt("shuffle-deflate: %d bytes is not a whole number of elements", len(dst))
	}
	ps := scratchPool.Get()
	defer scratchPool.Put(ps)
	ps.planes(k, len(dst)/k)
	shuffled := ps.buf[:len(dst)]
	_, sw := engine.Current().(engine.Software)
	sw = sw && ownDecoder
	var sum uint32
	h := len(dst)
	switch in.Param {
	case oneStream:
		if sw && inflateLiterals(shuffled, src, &ps.lit) {
			sum = adler32.Checksum(shuffled) // the stream gotensor writes (literals.go)
		} else {
			var err error
			if sum, err = inflate(shuffled, src); err != nil {
				return err
			}
		}
	case twoStreams:
		h = halfChunk(len(dst), k)
		if len(src) < 4 || int64(binary.LittleEndian.Uint32(src)) > int64(len(src)-4) {
			return corrupt("shuffle-deflate: the first stream's length is past the chunk's end")
		}
		endA := 4 + int(binary.LittleEndian.Uint32(src))
		td := twinPool.Get()
		defer twinPool.Put(td)
		td.pieces[0], td.pieces[1] = td.pieces[0][:0], td.pieces[1][:0]
		td.a = literalStream{r: bitio.Reader{Src: src[:endA], Pos: 4}, lt: &td.slots.t[0], slots: &td.slots, dst: shuffled[:h], pieces: &td.pieces[0]}
		td.b = literalStream{r: bitio.Reader{Src: src, Pos: endA}, lt: &td.slots.t[1], slots: &td.slots, dst: shuffled, o: h, pieces: &td.pieces[1]}
		if sw && inflateLiterals2(&td.a, &td.b) {
			// the stored blocks' bytes are left in src (stored.go)
			pa, pb := td.pieces[0], td.pieces[1]
			if k == 2 && rot { // checked while merged (dst holds the bytes even where they fail)
				sa, sb := [2]uint32{1, 1}, [2]uint32{1, 1}
				mergePieces(dst[:h], shuffled[:h], 0, src, pa, k, rot, &td.cuts, &sa)
				mergePieces(dst[h:], shuffled[h:], h, src, pb, k, rot, &td.cuts, &sb)
				sumA := adler32.Combine(sa[0], sa[1], h/2)
				sumB := adler32.Combine(sb[0], sb[1], (len(dst)-h)/2)
				if adler32.Combine(sumA, sumB, len(dst)-h) != aux {
					return corrupt("shuffle-deflate: Adler-32 mismatch")
				}
				return nil
			}
			sumA := piecesChecksum(shuffled[:h], 0, src, pa)
			sumB := piecesChecksum(shuffled[h:], h, src, pb)
			if adler32.Combine(sumA, sumB, len(dst)-h) != aux {
				return corrupt("shuffle-deflate: Adler-32 mismatch")
			}
			mergePieces(dst[:h], shuffled[:h], 0, src, pa, k, rot, &td.cuts, nil)
			mergePieces(dst[h:], shuffled[h:], h, src, pb, k, rot, &td.cuts, nil)
			return nil
		}
		sumA, err := inflate(shuffled[:h], src[4:endA])
		if err != nil {
			return err
		}
		sumB, err := inflate(shuffled[h:], src[endA:])
		if err != nil {
			return err
		}
		sum = adler32.Combine(sumA, sumB, len(dst)-h)
	default:
		return unknownLayout(in.Param)
	}
	if sum != aux {
		return corrupt("shuffle-deflate: Adler-32 mismatch")
	}
	var pls [8][]byte
	shuffle.Merge(dst[:h], shuffle.Cut(shuffled[:h], k, &pls), k, rot)
	if h < len(dst) {
		shuffle.Merge(dst[h:], shuffle.Cut(shuffled[h:], k, &pls), k, rot)
	}
	return nil
}

// twinDecoder is the state of a two-stream chunk's decoding: the two
// streams, the table slots they share and their stored blocks.
type twinDecoder struct {
	slots  literalSlots
	a, b   literalStream
	pieces [2][]storedPiece // each stream's stored blocks
	cuts   []int            // mergePieces' scratch
}

var twinPool = pool.New(func() *twinDecoder { return new(twinDecoder) })

// inflate decodes a raw DEFLATE stream that fills dst and returns its
// Adler-32: through libdeflate where the binary has it and the engine is
// the software one, through the current engine otherwise.
func inflate(dst, src []byte) (uint32, error) {
	e := engine.Current()
	if _, sw := e.(engine.Software); sw && libdeflate.Built {
		if err := libdeflate.Inflate(dst, src); err != nil {
			return 0, err
		}
		return adler32.Checksum(dst), nil
	}
	return e.Inflate(dst, src)
}

// scratch is a chunk's plane buffer and sampler's histogram, and the
// one-stream decoder's tables.
type scratch struct {
	buf   []byte
	hist  [256]uint32
	plane [8][]byte
	lit   literalTables
}

var scratchPool = pool.New(func() *scratch { return new(scratch) })

// planes returns k planes of n bytes in the scratch buffer.
func (ps *scratch) planes(k, n int) [][]byte {
	if cap(ps.buf) < k*n {
		ps.buf = make([]byte, k*n)
	}
	for j := 0; j < k; j++ {
		ps.plane[j] = ps.buf[j*n : (j+1)*n]
	}
	return ps.plane[:k]
}
