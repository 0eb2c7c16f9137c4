package codec

import (
	"bytes"
	stdflate "compress/flate"
	"slices"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec/internal/libdeflate"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// deflate is raw RFC 1951 DEFLATE, the stream NVIDIA DOCA Compress emits
// and accepts (zlib's wbits=-15). The chunk table's aux word holds the
// Adler-32 of the inflated bytes, the checksum DOCA's deflate tasks report.
type deflate struct{}

// shuffleDeflate is byte planes (as in planes) inflated from one raw
// DEFLATE stream: a BlueField-3 can inflate it in hardware and the host
// (or the DPU's Arm cores) merges the planes. The exponent planes, and
// planes a sample shows Huffman coding shrinks, are Huffman-only blocks,
// the others stored blocks, in plane order. aux is the Adler-32 of the inflated, still shuffled bytes.
type shuffleDeflate struct{}

func init() {
	Register(deflate{})
	Register(shuffleDeflate{})
}

func (deflate) ID() ID                     { return IDDeflate }
func (deflate) Name() string               { return "deflate" }
func (deflate) Supports(tensor.DType) bool { return true }

func (shuffleDeflate) ID() ID       { return IDShuffleDeflate }
func (shuffleDeflate) Name() string { return "shuffle-deflate" }
func (shuffleDeflate) Supports(d tensor.DType) bool {
	return planes{}.Supports(d)
}

// Go's compress/flate at BestSpeed codes deflate: its LZ77 with dynamic
// Huffman blocks reaches zlib level 1's ratio on float weights, where
// klauspost's fast levels leave them nearly raw. shuffle-deflate's planes
// have a writer of their own (deflate_writer.go).
var lzWriters sync.Pool // *stdflate.Writer

func (deflate) Encode(dst, src []byte, _ Info) ([]byte, uint32, error) {
	if out, sum, ok := engine.Deflate(dst, src); ok { // a BlueField-2 compresses in hardware
		return out, sum, nil
	}
	out := bytes.NewBuffer(dst[:0])
	w, _ := lzWriters.Get().(*stdflate.Writer)
	if w == nil {
		var err error
		if w, err = stdflate.NewWriter(out, stdflate.BestSpeed); err != nil {
			return nil, 0, err
		}
	} else {
		w.Reset(out)
	}
	defer lzWriters.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, 0, err
	}
	if err := w.Close(); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), checksum(src), nil
}

func (deflate) Decode(dst, src []byte, _ Info, aux uint32) error {
	sum, err := inflate(dst, src)
	if err != nil {
		return err
	}
	if sum != aux {
		return corrupt("deflate: Adler-32 mismatch")
	}
	return nil
}

func (shuffleDeflate) Encode(dst, src []byte, in Info) ([]byte, uint32, error) {
	k, rot := layout(in.Meta.DType)
	if len(src)%k != 0 {
		return nil, 0, corrupt("shuffle-deflate: chunk is not a whole number of elements")
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	n := len(src) / k
	pl := ps.planes(k, n)
	splitPlanes(pl, src, k, rot)
	if out, sum, ok := engine.Deflate(dst, ps.buf[:len(src)]); ok { // the planes in one hardware stream
		return out, sum, nil
	}
	hs := huffmanPool.Get()
	defer huffmanPool.Put(hs)
	w := bitWriter{out: dst[:0]}
	w.out = slices.Grow(w.out, len(src)+len(src)/64+64)
	for j := 0; j < k; j++ {
		if len(pl[j]) > 0 && (j == 0 || (j == 1 && k == 8) || shrinks(pl[j], &ps.hist)) {
			w.literalBlocks(pl[j], hs)
		} else {
			w.stored(pl[j], false)
		}
	}
	w.stored(nil, true)
	return w.out, checksum(ps.buf[:len(src)]), nil
}

// shrinks estimates from a sample of up to 16K bytes whether Huffman
// coding shrinks p by more than 1.5% (entropyBits, planes_sample.go).
func shrinks(p []byte, hist *[256]uint32) bool {
	const sample = 16 << 10
	if len(p) < 256 {
		return false
	}
	*hist = [256]uint32{}
	step := max(1, len(p)/sample)
	m := 0
	for i := 0; i < len(p); i += step {
		hist[p[i]]++
		m++
	}
	return entropyBits(hist, m) < 0.985*8*float64(m)
}

func (shuffleDeflate) Decode(dst, src []byte, in Info, aux uint32) error {
	k, rot := layout(in.Meta.DType)
	if len(dst)%k != 0 {
		return corrupt("shuffle-deflate: %d bytes is not a whole number of elements", len(dst))
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	pl := ps.planes(k, len(dst)/k)
	shuffled := ps.buf[:len(dst)]
	var sum uint32
	if _, sw := engine.Current().(engine.Software); sw && inflateLiterals(shuffled, src, &ps.lit) {
		sum = checksum(shuffled) // the stream gotensor writes (deflate_literals.go)
	} else {
		var err error
		if sum, err = inflate(shuffled, src); err != nil {
			return err
		}
	}
	if sum != aux {
		return corrupt("shuffle-deflate: Adler-32 mismatch")
	}
	mergePlanes(dst, pl, k, rot)
	return nil
}

// inflate decodes a raw DEFLATE stream that fills dst and returns its
// Adler-32: through libdeflate where the binary has it and the engine is
// the software one, through the current engine otherwise.
func inflate(dst, src []byte) (uint32, error) {
	e := engine.Current()
	if _, sw := e.(engine.Software); sw && libdeflate.Built {
		if err := libdeflate.Inflate(dst, src); err != nil {
			return 0, err
		}
		return checksum(dst), nil
	}
	return e.Inflate(dst, src)
}

// checksum is Adler-32, libdeflate's where the binary has it.
func checksum(b []byte) uint32 {
	if libdeflate.Built {
		return libdeflate.Adler32(b)
	}
	return adler32Words(b)
}
