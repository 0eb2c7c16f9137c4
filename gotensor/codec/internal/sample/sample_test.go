package sample

import (
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

// The sampled histogram of a small chunk is the histogram of its whole
// plane, as the split writes it.
func TestSampledPlaneBitsMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{2, 4, 8} {
		for _, rot := range []bool{false, true} {
			n := 300 + r.IntN(3000)
			src := make([]byte, n*k)
			for i := range src {
				src[i] = byte(r.NormFloat64() * 8)
			}
			pl := newPlanes(k, n)
			shuffle.Split(pl, src, k, rot)
			for j := 0; j < k; j++ {
				var got, want [256]uint32
				bits, m := planeBits(&got, src, k, rot, j)
				for _, b := range pl[j] {
					want[b]++
				}
				if got != want || m != n {
					t.Fatalf("k=%d rot=%v plane %d: sampled histogram differs from the split plane", k, rot, j)
				}
				if e := entropyBits(&want, n); math.Abs(bits-e) > 1e-9 {
					t.Fatalf("entropy %v, want %v", bits, e)
				}
			}
		}
	}
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
