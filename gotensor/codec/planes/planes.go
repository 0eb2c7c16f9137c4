// Package planes is gotensor's lossless float codec (ZipNN class), the
// codec "planes": byte planes (package shuffle), huff0's 4-stream Huffman
// blocks on the exponent planes, other planes raw unless the sampler
// (package sample) says coding pays. README.md has its stream format.
package planes

import (
	"encoding/binary"

	"github.com/klauspost/compress/huff0"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/sample"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// planes is gotensor's lossless float codec (ZipNN class): byte planes
// (sign rotated next to the mantissa), huff0 on the exponent planes in
// 64 KiB blocks, other planes raw unless a sample says they compress by 3% or more
// (planes_sample.go). Where the machine has BMI2, planes writes its 4X
// blocks itself (huffenc.go) and decodes them with the
// double-symbol decoder (huff.go) where a block's table gives two symbols
// often enough; huff0 reads and writes the same blocks elsewhere.
//
// Chunk layout: the element width k (one byte); k mode bytes, one per
// plane, most significant first (0: raw, 1: blocks); the raw planes, whole
// and in plane order; then the block-coded planes in plane order. A block
// starts with a u32: low 30 bits the payload length, top 2 bits the mode
// (raw, huff0, rle); block i covers plane bytes [i*64K, min((i+1)*64K, n)).
// Raw planes are split straight into the output and merged straight from
// the input: only exponent planes pass through scratch memory. 2-byte
// elements may take the split layout instead (splitHalf).
type planes struct{}

const (
	planeBlock = 64 << 10

	modeRaw   = 0
	modeHuff0 = 1
	modeRLE   = 2
	lenMask   = 1<<30 - 1

	planeRaw    = 0
	planeBlocks = 1
)

func init() { codec.Register(planes{}) }

func corrupt(format string, args ...any) error { return errs.New(errs.CorruptData, format, args...) }

func (planes) ID() codec.ID { return codec.IDPlanes }
func (planes) Name() string { return "planes" }

// SpreadBytes: planes codes at about 1 GB/s a core, so a half-megabyte
// tensor is worth two workers; chunks of 256 KiB and more keep a 2-byte
// element's top plane in two whole 64 KiB blocks.
func (planes) SpreadBytes(codec.Info) int64 { return SpreadBytes }

// SpreadBytes is the least tensor planes codes on several workers (and
// shuffle-deflate, which codes at its speed).
const SpreadBytes = 512 << 10

func (planes) Supports(d tensor.DType) bool { return shuffle.Supports(d) }

type planeScratch struct {
	buf   []byte
	huff  huff0.Scratch
	enc   huffEnc
	x2    huffX2 // the double-symbol decoder's table
	hist  [256]uint32
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

func (planes) EncodeBound(n int, in codec.Info) int {
	k, _ := shuffle.Layout(in.Meta.DType)
	return planesBound(k, n/k)
}

// planesBound is the worst case of n elements of k bytes: every coded
// block stored raw behind its 4-byte header (and, for 2-byte elements,
// the top plane's low bits apart).
func planesBound(k, n int) int {
	b := 1 + k + k*n + 4*k*((n+planeBlock-1)/planeBlock)
	if k == 2 {
		b += shuffle.Low2Len(n)
	}
	return b
}

// splitHalf starts a chunk of 2-byte elements in the split layout: the
// top plane's low 2 bits packed apart (shuffle.CutLow2) and stored raw,
// its other 6 bits Huffman coded. The sampler chooses it where those 2
// bits are close to uniform (real float16 weights: the exponent's plane
// keeps 3 mantissa bits): the coded plane's codes are 2 bits shorter and
// its decoder gets about 1.4 times the symbols a table lookup.
const splitHalf = 0x80 | 2

func (planes) Encode(dst, src []byte, in codec.Info) ([]byte, uint32, error) {
	return encode(dst, src, in.Meta.DType, true)
}

// encode codes a chunk of src, in the split layout where mayCut and the
// sampler says so.
func encode(dst, src []byte, d tensor.DType, mayCut bool) ([]byte, uint32, error) {
	k, rot := shuffle.Layout(d)
	if len(src)%k != 0 {
		return nil, 0, corrupt("planes: chunk of %d bytes is not a whole number of %d-byte elements", len(src), k)
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	ps.enc.prevTable = ps.enc.prevTable[:0] // a chunk's coding depends on it alone
	n := len(src) / k
	// float16 only: bfloat16's top plane is the exponent alone; and a top
	// plane of a whole block or more, where building the table is paid
	// back (a KV cache's one-row chunks would pay for the sample alone)
	split := mayCut && d == tensor.Float16 && n >= planeBlock && sample.Low2Apart(&ps.hist, src, rot)
	var modes [8]byte
	raw := 0
	for j := 0; j < k; j++ {
		if ps.coded(src, k, rot, j) {
			modes[j] = planeBlocks
		} else {
			raw++
		}
	}
	bound := planesBound(k, n)
	if cap(dst) < bound {
		dst = make([]byte, 0, bound)
	}
	out := append(dst[:0], byte(k))
	if split {
		out[0] = splitHalf
	}
	out = append(out, modes[:k]...)
	var low []byte
	if split {
		low, out = out[len(out):len(out)+shuffle.Low2Len(n)], out[:len(out)+shuffle.Low2Len(n)]
	}
	rawStart := len(out)
	out = out[:rawStart+raw*n]
	pl := ps.planes(k, n)
	r := 0
	for j := 0; j < k; j++ { // raw planes are split straight into the output
		if modes[j] == planeRaw {
			pl[j] = out[rawStart+r*n : rawStart+(r+1)*n]
			r++
		}
	}
	shuffle.Split(pl, src, k, rot)
	if split {
		shuffle.CutLow2(low, pl[0])
	}
	for j := 0; j < k; j++ {
		if modes[j] == planeBlocks {
			out = encodePlane(out, pl[j], &ps.huff, &ps.enc)
		}
	}
	return out, 0, nil
}

// coded reports whether plane j is entropy-coded: the top plane (the
// exponent) always, the next one of float64 too, the others where the
// sampler says coding pays.
func (ps *planeScratch) coded(src []byte, k int, rot bool, j int) bool {
	return j == 0 || (j == 1 && k == 8) || sample.Plane(&ps.hist, src, k, rot, j)
}

func encodePlane(out, p []byte, hs *huff0.Scratch, he *huffEnc) []byte {
	for off := 0; off < len(p); off += planeBlock {
		blk := p[off:min(off+planeBlock, len(p))]
		if len(blk) >= 256 && huffFast { // 4 streams, planes' writer where it has its assembly
			start := len(out)
			enc, ok, rle := he.huffEncode4X(append(out, 0, 0, 0, 0), blk, off+planeBlock < len(p))
			switch {
			case ok:
				binary.LittleEndian.PutUint32(enc[start:], uint32(len(enc)-start-4)|modeHuff0<<30)
				out = enc
			case rle:
				out = appendBlock(out, modeRLE, blk[:1])
			default:
				out = appendBlock(out, modeRaw, blk)
			}
			continue
		}
		{
			hs.Reuse = huff0.ReusePolicyNone // blocks decode independently
			compress := huff0.Compress4X
			if len(blk) < 256 {
				compress = huff0.Compress1X
			}
			enc, _, err := compress(blk, hs) // enc aliases hs.Out: copied below
			switch err {
			case nil:
				if len(enc) < len(blk) {
					out = appendBlock(out, modeHuff0, enc)
					continue
				}
			case huff0.ErrUseRLE:
				out = appendBlock(out, modeRLE, blk[:1])
				continue
			}
		}
		out = appendBlock(out, modeRaw, blk)
	}
	return out
}

func appendBlock(out []byte, mode uint32, payload []byte) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload))|mode<<30)
	return append(out, payload...)
}

func (planes) Decode(dst, src []byte, in codec.Info, _ uint32) error {
	k, rot := shuffle.Layout(in.Meta.DType)
	if len(src) < 1+k || (int(src[0]) != k && !(k == 2 && rot && src[0] == splitHalf)) {
		return corrupt("planes: chunk does not start with element width %d", k)
	}
	if len(dst)%k != 0 {
		return corrupt("planes: %d bytes is not a whole number of elements", len(dst))
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	n := len(dst) / k
	split := src[0] == splitHalf
	modes := src[1 : 1+k]
	rest := src[1+k:]
	var low []byte
	if split {
		if modes[0] != planeBlocks || len(rest) < shuffle.Low2Len(n) {
			return corrupt("planes: split top plane not coded, or its low bits truncated")
		}
		low, rest = rest[:shuffle.Low2Len(n)], rest[shuffle.Low2Len(n):]
	}
	pl := ps.planes(k, n)
	for j, m := range modes { // raw planes are merged straight from the input
		switch m {
		case planeRaw:
			if len(rest) < n {
				return corrupt("planes: raw plane truncated")
			}
			pl[j], rest = rest[:n], rest[n:]
		case planeBlocks:
		default:
			return corrupt("planes: unknown plane mode %d", m)
		}
	}
	var err error
	for j, m := range modes {
		if m == planeBlocks {
			if rest, err = decodePlane(pl[j], rest, &ps.huff, &ps.x2); err != nil {
				return err
			}
		}
	}
	if len(rest) != 0 {
		return corrupt("planes: %d trailing bytes", len(rest))
	}
	if split {
		shuffle.JoinLow2(pl[0], low)
	}
	shuffle.Merge(dst, pl, k, rot)
	return nil
}

func decodePlane(p, src []byte, hs *huff0.Scratch, x2 *huffX2) ([]byte, error) {
	useX2 := huffFast // until a block's table says huff0 (a plane's blocks are alike)
	for off := 0; off < len(p); off += planeBlock {
		blk := p[off:min(off+planeBlock, len(p))]
		mode, payload, after, err := readBlock(src)
		if err != nil {
			return nil, err
		}
		src = after
		switch mode {
		case modeRaw:
			if len(payload) != len(blk) {
				return nil, corrupt("planes: raw block of %d bytes, want %d", len(payload), len(blk))
			}
			copy(blk, payload)
		case modeRLE:
			if len(payload) != 1 {
				return nil, corrupt("planes: rle block of %d bytes", len(payload))
			}
			fill(blk, payload[0])
		case modeHuff0:
			if err := huffDecode(blk, payload, hs, x2, &useX2); err != nil {
				return nil, err
			}
		default:
			return nil, corrupt("planes: unknown block mode %d", mode)
		}
	}
	return src, nil
}

// fill sets every byte of b to c: memclr for zeros (an empty row's
// planes), else copies doubling in length, not a loop a byte at a time.
func fill(b []byte, c byte) {
	if c == 0 {
		clear(b)
		return
	}
	if len(b) == 0 {
		return
	}
	b[0] = c
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// readBlock reads the block at the start of src: its mode, its payload
// and what follows it.
func readBlock(src []byte) (mode uint32, payload, after []byte, err error) {
	if len(src) < 4 {
		return 0, nil, nil, corrupt("planes: block header truncated")
	}
	h := binary.LittleEndian.Uint32(src)
	mode, n := h>>30, int(h&lenMask)
	src = src[4:]
	if n > len(src) {
		return 0, nil, nil, corrupt("planes: block claims %d bytes, %d left", n, len(src))
	}
	return mode, src[:n], src[n:], nil
}

// huffDecode decodes one huff0 block: 4-stream ones of huffMinX2Block
// bytes and more with the double-symbol decoder while *useX2 (it has its
// fast loop, huffFast, and the plane's tables have given two symbols often
// enough, huffMinPairs; the first that does not clears it), the rest with
// huff0's.
func huffDecode(blk, payload []byte, hs *huff0.Scratch, x2 *huffX2, useX2 *bool) error {
	if len(blk) >= huffMinX2Block && *useX2 {
		rem, built, err := x2.readTable(payload, huffMinPairs)
		if err != nil {
			return err
		}
		if built {
			return x2.decode4X(blk, rem)
		}
		*useX2 = false
	}
	s, rem, err := huff0.ReadTable(payload, hs)
	if err != nil {
		return corrupt("planes: huff0 table: %v", err)
	}
	d := s.Decoder()
	var out []byte
	if len(blk) < 256 {
		out, err = d.Decompress1X(blk[:0:len(blk)], rem)
	} else {
		out, err = d.Decompress4X(blk[:0:len(blk)], rem)
	}
	if err != nil {
		return corrupt("planes: huff0: %v", err)
	}
	if len(out) != len(blk) {
		return corrupt("planes: huff0 block decoded to %d bytes, want %d", len(out), len(blk))
	}
	return nil
}
