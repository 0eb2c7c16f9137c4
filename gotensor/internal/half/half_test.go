package half

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The inline fast paths of the half conversions must agree with the
// general code on every input.
func TestHalfFastPathsMatchGeneral(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := F16ToF32(uint16(h)), f16ToF32Special(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("F16ToF32(%#04x) = %#08x, want %#08x", h, math.Float32bits(got), math.Float32bits(want))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	check := func(b uint32) {
		f := math.Float32frombits(b)
		if got, want := F32ToF16(f), f32ToF16Special(f); got != want {
			t.Fatalf("F32ToF16(%#08x) = %#04x, want %#04x", b, got, want)
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
