package planes

import (
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Mantissa planes of real weights save a fraction of a percent under
// huff0: planes stores them raw and codes the exponent plane only.
func TestPlanesStoresNearUniformPlanesRaw(t *testing.T) {
	w := testweights.Real(t)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := testweights.As(w, d)
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}}
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
		testweights.Put(src, i, float32(r.IntN(64))/8, tensor.Float32)
	}
	in := codec.Info{Meta: tensor.Meta{DType: tensor.Float32, Shape: []int64{int64(n)}}}
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

func newPlanes(k, n int) [][]byte {
	p := make([][]byte, k)
	for i := range p {
		p[i] = make([]byte, n)
	}
	return p
}
