package sample

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
)

func newPlanes(k, n int) [][]byte {
	p := make([][]byte, k)
	for i := range p {
		p[i] = make([]byte, n)
	}
	return p
}

// The sampled histogram of a plane is the histogram of the split plane's
// runs (of all of a small chunk's plane), and its entropy is the one a
// logarithm per bin gives.
func TestSampledPlaneBitsMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{2, 4, 8} {
		for _, rot := range []bool{false, true} {
			for _, n := range []int{300 + r.IntN(3000), runs*runLen + 1 + r.IntN(20000)} {
				src := make([]byte, n*k)
				for i := range src {
					src[i] = byte(r.NormFloat64() * 8)
				}
				pl := newPlanes(k, n)
				shuffle.Split(pl, src, k, rot)
				for j := 0; j < k; j++ {
					var got, want [256]uint32
					bits, m := planeBits(&got, src, k, rot, j)
					count, stride, length := spread(n)
					for c := 0; c < count; c++ {
						for _, b := range pl[j][c*stride : c*stride+length] {
							want[b]++
						}
					}
					if got != want || m != count*length {
						t.Fatalf("k=%d rot=%v plane %d of %d: sampled histogram differs from the split plane's runs", k, rot, j, n)
					}
					if e := naiveEntropy(&want, m); math.Abs(bits-e) > 1e-6 {
						t.Fatalf("entropy %v, want %v", bits, e)
					}
				}
			}
		}
	}
}

// naiveEntropy is entropyBits with a logarithm per bin.
func naiveEntropy(hist *[256]uint32, m int) float64 {
	bins, bits := 0, 0.0
	for _, c := range hist {
		if c > 0 {
			bins++
			bits += float64(c) * math.Log2(float64(m)/float64(c))
		}
	}
	return bits + float64(bins-1)/(2*math.Ln2)
}

// Uniform bytes must not look compressible in a sample: the corrected
// entropy of 8K uniform bytes stays within 0.5% of 8 bits a byte.
func TestEntropyBitsUniformSample(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var h [256]uint32
	const m = runs * runLen
	for i := 0; i < m; i++ {
		h[byte(r.Uint32())]++
	}
	if bits := entropyBits(&h, m) / m; bits < 0.995*8 {
		t.Fatalf("uniform sample estimated at %.3f bits a byte", bits)
	}
}

// A plane sampled from its elements and sampled split, whole or in two
// parts, is the same sample.
func TestPlaneMatchesBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{100, 3000, 8192, 8193, 100000, 1 << 20} {
		for _, k := range []int{2, 4} {
			src := make([]byte, n*k)
			for i := range src {
				src[i] = byte(r.NormFloat64() * float64(1+i%k*20))
			}
			pl := newPlanes(k, n)
			shuffle.Split(pl, src, k, true)
			for j := 0; j < k; j++ {
				var a, b, c [256]uint32
				ba, ma := planeBits(&a, src, k, true, j)
				bb, mb := bytesBits(&b, pl[j], nil)
				cut := n / 3
				bc, mc := bytesBits(&c, pl[j][:cut], pl[j][cut:])
				if a != b || a != c || ma != mb || ma != mc || ba != bb || ba != bc {
					t.Fatalf("n %d k %d plane %d: samples differ (%d %d %d bytes)", n, k, j, ma, mb, mc)
				}
				if Plane(&a, src, k, true, j) != Bytes(&b, pl[j], nil) {
					t.Fatalf("n %d k %d plane %d: decisions differ", n, k, j)
				}
			}
		}
	}
}

// Middle takes n bytes from the middle of b, from a multiple of 16.
func TestMiddle(t *testing.T) {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(i)
	}
	if got := Middle(b, 300); len(got) != 200 {
		t.Errorf("short: %d bytes, want all", len(got))
	}
	if got := Middle(b, 50); len(got) != 50 || got[0] != 64 { // (100-25)&^15
		t.Errorf("from %d, %d bytes; want from 64, 50", got[0], len(got))
	}
}

// Ratio codes whole 16-byte units and is 1 where coding does not shrink
// them or fails.
func TestRatio(t *testing.T) {
	half := func(src []byte) ([]byte, error) { return src[:len(src)/2], nil }
	var coded int
	count := func(src []byte) ([]byte, error) { coded = len(src); return src[:1], nil }
	for _, c := range []struct {
		name string
		s    []byte
		enc  func([]byte) ([]byte, error)
		want float64
	}{
		{"half", make([]byte, 64), half, 2},
		{"under a unit", make([]byte, 15), half, 1},
		{"same size", make([]byte, 64), func(src []byte) ([]byte, error) { return src, nil }, 1},
		{"empty", make([]byte, 64), func([]byte) ([]byte, error) { return nil, nil }, 1},
		{"error", make([]byte, 64), func(src []byte) ([]byte, error) { return src[:1], errors.ErrUnsupported }, 1},
		{"units", make([]byte, 40), count, 32},
	} {
		if got := Ratio(c.s, c.enc); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if coded != 32 {
		t.Errorf("coded %d bytes of 40, want 32", coded)
	}
}

// The top plane's low 2 bits go apart when they are uniform and
// independent of the rest, and stay when they repeat the rest or are
// constant.
func TestLow2Apart(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	mk := func(low func(hi uint16) uint16) []byte {
		b := make([]byte, 2*(64<<10))
		for i := 0; i < len(b); i += 2 {
			hi := uint16(r.IntN(8)) // a skewed 6-bit part: few values
			v := hi<<2 | low(hi)    // the rotated top byte
			e := uint16(v)<<8 | uint16(r.IntN(256))
			e = e>>1 | e<<15 // unrotated: as stored
			b[i], b[i+1] = byte(e), byte(e>>8)
		}
		return b
	}
	var hist [256]uint32
	for _, c := range []struct {
		name string
		low  func(uint16) uint16
		want bool
	}{
		{"uniform", func(uint16) uint16 { return uint16(r.IntN(4)) }, true},
		{"constant", func(uint16) uint16 { return 2 }, false},
		{"a function of the rest", func(hi uint16) uint16 { return hi & 3 }, false},
	} {
		if got := Low2Apart(&hist, mk(c.low), true); got != c.want {
			t.Errorf("%s low bits: apart %v, want %v", c.name, got, c.want)
		}
	}
}
