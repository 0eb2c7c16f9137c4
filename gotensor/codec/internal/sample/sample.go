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
	"math"

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
	return m >= minLen && entropyBits(hist, m) < (1-Threshold)*8*float64(m)
}

// Plane reports whether coding pays for byte plane j of the elements of
// src (k bytes each, rotated when rot, as shuffle.Split cuts them);
// hist is scratch.
func Plane(hist *[256]uint32, src []byte, k int, rot bool, j int) bool {
	_, m := planeBits(hist, src, k, rot, j)
	return Pays(hist, m)
}

// Bytes reports whether coding pays for the plane a followed by b (b may
// be empty); hist is scratch.
func Bytes(hist *[256]uint32, a, b []byte) bool {
	_, m := bytesBits(hist, a, b)
	return Pays(hist, m)
}

// entropyBits is the order-0 entropy, in bits, of the m bytes counted in
// hist, with the Miller-Madow bias correction.
func entropyBits(hist *[256]uint32, m int) float64 {
	total := float64(m)
	bins, bits := 0, 0.0
	for _, c := range hist {
		if c > 0 {
			bins++
			bits += float64(c) * math.Log2(total/float64(c))
		}
	}
	return bits + float64(bins-1)/(2*math.Ln2) // (bins-1)/2N nats per byte
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
// into hist and returns its entropy in bits and its size.
func planeBits(hist *[256]uint32, src []byte, k int, rot bool, j int) (bits float64, m int) {
	n := len(src) / k
	*hist = [256]uint32{}
	count, stride, length := spread(n)
	shift := 8 * (k - 1 - j)
	for r := 0; r < count; r++ {
		run := src[r*stride*k : (r*stride+length)*k]
		switch {
		case k == 2 && rot:
			for i := 0; i+1 < len(run); i += 2 {
				v := uint16(run[i]) | uint16(run[i+1])<<8
				hist[byte((v<<1|v>>15)>>shift)]++
			}
		case k == 4 && rot:
			for i := 0; i+3 < len(run); i += 4 {
				v := uint32(run[i]) | uint32(run[i+1])<<8 | uint32(run[i+2])<<16 | uint32(run[i+3])<<24
				hist[byte((v<<1|v>>31)>>shift)]++
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
				hist[byte(v>>shift)]++
			}
		}
		m += length
	}
	return entropyBits(hist, m), m
}

// bytesBits counts the sample of the plane a||b into hist and returns its
// entropy in bits and its size.
func bytesBits(hist *[256]uint32, a, b []byte) (bits float64, m int) {
	*hist = [256]uint32{}
	n := len(a) + len(b)
	count, stride, length := spread(n)
	for r := 0; r < count; r++ {
		off, end := r*stride, r*stride+length
		count8(a[min(off, len(a)):min(end, len(a))], hist)
		count8(b[max(off-len(a), 0):max(end-len(a), 0)], hist)
		m += length
	}
	return entropyBits(hist, m), m
}

// count8 adds the bytes of p to hist.
func count8(p []byte, hist *[256]uint32) {
	for _, v := range p {
		hist[v]++
	}
}
