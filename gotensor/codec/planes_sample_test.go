package codec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Mantissa planes of real weights save a fraction of a percent under
// huff0: planes stores them raw and codes the exponent plane only.
func TestPlanesStoresNearUniformPlanesRaw(t *testing.T) {
	w := realWeights(t)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := storedAs(w, d)
		in := Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}}
		enc, _, err := planes{}.Encode(nil, src, in)
		if err != nil {
			t.Fatal(err)
		}
		modes := enc[1 : 1+d.Size()]
		if modes[0] != planeBlocks {
			t.Fatalf("%v: exponent plane not coded: modes %v", d, modes)
		}
		for j, m := range modes[1:] {
			if m != planeRaw {
				t.Fatalf("%v: plane %d is coded (modes %v); real mantissa bytes barely compress", d, j+1, modes)
			}
		}
		back := make([]byte, len(src))
		if err := (planes{}).Decode(back, enc, in, 0); err != nil || string(back) != string(src) {
			t.Fatalf("%v: round trip failed: %v", d, err)
		}
	}
}

// A low plane that does compress (values on a coarse grid) is still coded.
func TestPlanesCodesCompressibleLowPlanes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 40000
	src := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		storer(tensor.Float32)(src, i, float32(r.IntN(64))/8)
	}
	in := Info{Meta: tensor.Meta{DType: tensor.Float32, Shape: []int64{int64(n)}}}
	enc, _, err := planes{}.Encode(nil, src, in)
	if err != nil {
		t.Fatal(err)
	}
	if enc[2] != planeBlocks {
		t.Fatalf("second plane of grid values stored raw: modes %v", enc[1:5])
	}
	back := make([]byte, len(src))
	if err := (planes{}).Decode(back, enc, in, 0); err != nil || string(back) != string(src) {
		t.Fatalf("round trip failed: %v", err)
	}
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
			splitGeneric(pl, src, k, rot)
			for j := 0; j < k; j++ {
				var got, want [256]uint32
				bits, m := sampledPlaneBits(&got, src, k, rot, j)
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
	const m = sampleRuns * sampleRunLen
	for i := 0; i < m; i++ {
		h[byte(r.Uint32())]++
	}
	if bits := entropyBits(&h, m) / m; bits < 0.995*8 {
		t.Fatalf("uniform sample estimated at %.3f bits a byte", bits)
	}
}
