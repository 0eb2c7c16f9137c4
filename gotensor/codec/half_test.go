package codec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// The inline fast paths of the half conversions must agree with the
// general code on every input.
func TestHalfFastPathsMatchGeneral(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := f16ToF32(uint16(h)), f16ToF32Special(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("f16ToF32(%#04x) = %#08x, want %#08x", h, math.Float32bits(got), math.Float32bits(want))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	check := func(b uint32) {
		f := math.Float32frombits(b)
		if got, want := f32ToF16(f), f32ToF16Special(f); got != want {
			t.Fatalf("f32ToF16(%#08x) = %#04x, want %#04x", b, got, want)
		}
	}
	for e := uint32(0); e < 256; e++ { // every exponent, mantissas at the rounding edges
		for _, m := range []uint32{0, 1, 0xFFF, 0x1000, 0x1001, 0x2FFF, 0x3000, 0x7FEFFF, 0x7FF000, 0x7FFFFF} {
			check(e<<23 | m)
			check(1<<31 | e<<23 | m)
		}
	}
	for i := 0; i < 1<<22; i++ {
		check(r.Uint32())
	}
}

// The SSE conversions of whole groups agree with the scalar ones.
func TestHalfKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fastHalves, fastFloats := 0, 0
	defer func() {
		if haveSSSE3 && (fastHalves == 0 || fastFloats == 0) {
			t.Errorf("the SSE kernels converted %d halves and %d floats: the test misses them", fastHalves, fastFloats)
		}
	}()
	for it := 0; it < 200; it++ {
		n := r.IntN(100)
		halves := make([]byte, 2*n)
		floats := make([]float32, n)
		for i := 0; i < n; i++ {
			h := uint16(r.Uint32())
			if r.IntN(20) != 0 { // mostly normal numbers, so whole groups take the fast path
				h = h&0x83FF | uint16(1+r.IntN(30))<<10
			}
			halves[2*i], halves[2*i+1] = byte(h), byte(h>>8)
			floats[i] = math.Float32frombits(r.Uint32())
			if r.IntN(20) != 0 {
				floats[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
			}
		}
		got := make([]float32, n)
		if n >= 8 && haveSSSE3 {
			fastHalves += f16ToF32Fast(got, halves)
			fastFloats += f32ToF16Fast(make([]byte, 2*n), floats)
		}
		toF32s(got, halves, tensor.Float16)
		for i := range got {
			if want := f16ToF32(uint16(halves[2*i]) | uint16(halves[2*i+1])<<8); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("half %d of %d: %#x, want %#x", i, n, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		out := make([]byte, 2*n)
		fromF32s(out, floats, tensor.Float16)
		for i, x := range floats {
			if got, want := uint16(out[2*i])|uint16(out[2*i+1])<<8, f32ToF16(x); got != want {
				t.Fatalf("float %d of %d (%#x): %#x, want %#x", i, n, math.Float32bits(x), got, want)
			}
		}
	}
}
