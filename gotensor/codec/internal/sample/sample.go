// Package sample is the one place gotensor decides, from a sample of a
// tensor's bytes, whether coding them pays: Ratio for a whole tensor (the
// codec.SampleRatio that "auto" weighs its candidates with), and Pays,
// Plane and Bytes for a byte plane, inside the codecs.
//
// Ratio codes Middle, a slice from the tensor's middle, with the codec
// itself: what it saves there is what the tensor's chunks would save.
//
// For a byte plane, a histogram of a sample of the plane, its order-0
// entropy and one threshold decide whether entropy coding it pays. A
// mantissa plane of real weights is close to uniform: Huffman coding
// saves a fraction of a percent there and costs as much time as the
// exponent plane, both ways (planes' huff0 blocks, shuffle-deflate's
// Huffman blocks alike). A histogram of a sample is far cheaper than a
// failed compression; the Miller-Madow correction keeps a uniform plane
// from looking a few percent compressible in a small sample.
//
// A plane's sample is runs of runLen elements spread over the plane, the
// same bytes whether the plane is read from the elements (Plane: planes
// decides before it splits) or from the split plane (Bytes:
// shuffle-deflate, whose two streams cut a plane in two).
package sample

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/gotensor/gotensor/gotensor/codec/internal/huffman"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
)

// Threshold is the least share of a plane's bytes that coding must be
// expected to save (from the sample's entropy) to be worth its time.
const Threshold = 0.03

const (
	runs   = 8    // runs of elements spread over the plane
	runLen = 1024 // elements per run
	// minLen is the least plane worth sampling: smaller ones stay raw
	minLen = 256
)

// Middle is up to n bytes from the middle of b, from a multiple of 16
// bytes as chunks are: headers and padding skew a tensor's ends.
func Middle(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	at := (len(b)/2 - n/2) &^ 15
	return b[at : at+n]
}

// Ratio is raw over coded bytes of encode on the whole 16-byte units of
// s, 1 where it does not shrink them (a frame stores such chunks raw) or
// fails.
func Ratio(s []byte, encode func(src []byte) ([]byte, error)) float64 {
	s = s[:len(s)&^15]
	if len(s) == 0 {
		return 1
	}
	enc, err := encode(s)
	if err != nil || len(enc) == 0 || len(enc) >= len(s) {
		return 1
	}
	return float64(len(s)) / float64(len(enc))
}

// Pays reports whether coding the m bytes counted in hist saves at least
// Threshold of them.
func Pays(hist *[256]uint32, m int) bool {
	return pays(entropyBits(hist, m), m)
}

// pays says whether m bytes of entropy bits are worth coding.
func pays(bits float64, m int) bool {
	return m >= minLen && bits < (1-Threshold)*8*float64(m)
}

// Plane reports whether coding pays for byte plane j of the elements of
// src (k bytes each, rotated when rot, as shuffle.Split cuts them);
// hist is scratch.
func Plane(hist *[256]uint32, src []byte, k int, rot bool, j int) bool {
	return pays(planeBits(hist, src, k, rot, j))
}

// Bytes reports whether coding pays for the plane a followed by b (b may
// be empty); hist is scratch.
func Bytes(hist *[256]uint32, a, b []byte) bool {
	return pays(bytesBits(hist, a, b))
}

// entropyBits is the order-0 entropy, in bits, of the m bytes counted in
// hist, with the Miller-Madow bias correction: sum c*log2(m/c) over the
// counts c, as m*log2(m) - sum c*log2(c) from xlog2x (a sample's counts
// are at most its runs*runLen bytes; a larger one is worked out).
func entropyBits(hist *[256]uint32, m int) float64 {
	bins, sum := 0, 0.0
	for _, c := range hist {
		if c > 0 {
			bins++
			sum += cLog2c(int(c))
		}
	}
	return cLog2c(m) - sum + float64(bins-1)/(2*math.Ln2) // (bins-1)/2N nats per byte
}

// xlog2x[c] is c*log2(c) for the counts a sample can hold: a plane's
// sample costs a table lookup per bin rather than a logarithm (256 of
// them, twice the time of counting a 12 KiB chunk's plane).
var xlog2x = func() *[runs*runLen + 1]float64 {
	var t [runs*runLen + 1]float64
	for c := 1; c < len(t); c++ {
		t[c] = float64(c) * math.Log2(float64(c))
	}
	return &t
}()

func cLog2c(c int) float64 {
	if c < len(xlog2x) {
		return xlog2x[c]
	}
	return float64(c) * math.Log2(float64(c))
}

// spread is where the sample's runs of a plane of n bytes start, a
// stride apart, and how long they are: the whole plane in one run where
// it is no longer than the sample.
func spread(n int) (count, stride, length int) {
	if n <= runs*runLen {
		return 1, n, n
	}
	return runs, n / runs, runLen
}

// planeBits counts the sample of byte plane j of the elements of src
// into hist and returns its entropy in bits and its size. The counts go
// to four tables summed at the end, as the encoders' histograms do: an
// exponent plane repeats a few bytes, and one table would wait on each
// increment's store before the next (huffman.Counts).
func planeBits(hist *[256]uint32, src []byte, k int, rot bool, j int) (entropy float64, m int) {
	n := len(src) / k
	var c huffman.Counts
	count, stride, length := spread(n)
	shift := 8 * (k - 1 - j)
	for r := 0; r < count; r++ {
		run := src[r*stride*k : (r*stride+length)*k]
		switch {
		case k == 2 && rot:
			s := uint(shift) & 15
			for ; len(run) >= 8; run = run[8:] {
				v := binary.LittleEndian.Uint64((*[8]byte)(run)[:])
				c[0][byte(bits.RotateLeft16(uint16(v), 1)>>s)]++
				c[1][byte(bits.RotateLeft16(uint16(v>>16), 1)>>s)]++
				c[2][byte(bits.RotateLeft16(uint16(v>>32), 1)>>s)]++
				c[3][byte(bits.RotateLeft16(uint16(v>>48), 1)>>s)]++
			}
			for ; len(run) >= 2; run = run[2:] {
				c[0][byte(bits.RotateLeft16(binary.LittleEndian.Uint16(run), 1)>>s)]++
			}
		case k == 4 && rot:
			s := uint(shift) & 31
			for ; len(run) >= 16; run = run[16:] {
				w := (*[16]byte)(run)
				c[0][byte(bits.RotateLeft32(binary.LittleEndian.Uint32(w[0:]), 1)>>s)]++
				c[1][byte(bits.RotateLeft32(binary.LittleEndian.Uint32(w[4:]), 1)>>s)]++
				c[2][byte(bits.RotateLeft32(binary.LittleEndian.Uint32(w[8:]), 1)>>s)]++
				c[3][byte(bits.RotateLeft32(binary.LittleEndian.Uint32(w[12:]), 1)>>s)]++
			}
			for ; len(run) >= 4; run = run[4:] {
				c[0][byte(bits.RotateLeft32(binary.LittleEndian.Uint32(run), 1)>>s)]++
			}
		default:
			for i := 0; i+k <= len(run); i += k {
				var v uint64
				for b := 0; b < k; b++ {
					v |= uint64(run[i+b]) << (8 * b)
				}
				if rot {
					v = shuffle.Rotl(v, k)
				}
				c[(i/k)&3][byte(v>>shift)]++
			}
		}
		m += length
	}
	c.Sum(hist)
	return entropyBits(hist, m), m
}

// bytesBits counts the sample of the plane a||b into hist and returns its
// entropy in bits and its size.
func bytesBits(hist *[256]uint32, a, b []byte) (entropy float64, m int) {
	var c huffman.Counts
	n := len(a) + len(b)
	count, stride, length := spread(n)
	for r := 0; r < count; r++ {
		off, end := r*stride, r*stride+length
		c.Add(a[min(off, len(a)):min(end, len(a))])
		c.Add(b[max(off-len(a), 0):max(end-len(a), 0)])
		m += length
	}
	c.Sum(hist)
	return entropyBits(hist, m), m
}

// Low2Slack is the most a float16 top plane's split may cost, in bits an
// element (of 16), over coding the plane whole (see Low2Apart).
const Low2Slack = 0.05

// Low2Apart reports whether the low 2 bits of the top plane of the
// 2-byte elements of src (rotated when rot) are close enough to uniform,
// and to independent of the plane's other 6 bits, that storing them raw
// beside a Huffman coded 6-bit plane costs at most Low2Slack bits an
// element more than coding the 8-bit plane: real float16 weights, whose
// top plane is the exponent and 3 mantissa bits. hist is scratch.
func Low2Apart(hist *[256]uint32, src []byte, rot bool) bool {
	if len(src)/2 < minLen {
		return false
	}
	whole, m := planeBits(hist, src, 2, rot, 0)
	var top6 [256]uint32
	for v, c := range hist {
		top6[v>>2] += c
	}
	return entropyBits(&top6, m)+2*float64(m) <= whole+Low2Slack*float64(m)
}
