package quant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/internal/half"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// cpuKernels are the kernel sets this CPU has.
var cpuKernels = struct{ sse, avx2, f16c bool }{haveSSSE3, haveAVX2, haveF16C}

// useKernels turns the SSE and the AVX2/F16C kernels on or off (off where
// the CPU lacks them) until the test ends.
func useKernels(t testing.TB, sse, avx bool) {
	t.Cleanup(func() { haveSSSE3, haveAVX2, haveF16C = cpuKernels.sse, cpuKernels.avx2, cpuKernels.f16c })
	haveSSSE3, haveAVX2, haveF16C = cpuKernels.sse && sse, cpuKernels.avx2 && avx, cpuKernels.f16c && avx
}

// kernelLevels are the kernel sets a CPU may run: AVX2 and F16C, SSE, Go.
var kernelLevels = []struct {
	name     string
	sse, avx bool
}{{"avx2", true, true}, {"sse", true, false}, {"go", false, false}}

// quantEdgeValue is a random value, often a special one: NaN with random
// payload and sign (quiet and signalling), infinities, zeros of both
// signs, subnormals of float16 and of float32, values near the float16
// range's ends.
func quantEdgeValue(r *rand.Rand, d tensor.DType) uint32 {
	switch r.IntN(12) {
	case 0:
		return 0x7F800000 | r.Uint32()&0x807FFFFF | 1 // NaN
	case 1:
		return 0x7F800000 | r.Uint32()&0x80000000 // infinity
	case 2:
		return r.Uint32() & 0x80000000 // zero
	case 3:
		return math.Float32bits(float32(r.NormFloat64() * 1e-6)) // float16 subnormals
	case 4:
		return r.Uint32() & 0x807FFFFF // float32 subnormals
	case 5:
		return math.Float32bits(float32(65504 + r.NormFloat64()*20))
	}
	return math.Float32bits(float32(r.NormFloat64()))
}

// The conversions give the scalar code's bits at every kernel level.
func TestConversionKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	halves := make([]byte, 2<<16)
	for h := range 1 << 16 { // every half, and every bfloat16
		binary.LittleEndian.PutUint16(halves[2*h:], uint16(h))
	}
	floats := make([]float32, 1<<18)
	for i := range floats {
		floats[i] = math.Float32frombits(quantEdgeValue(r, tensor.Float32))
		if i%3 == 0 {
			floats[i] = math.Float32frombits(r.Uint32())
		}
	}
	for e := uint32(0); e < 256; e++ { // every exponent, mantissas at the rounding edges
		for k, m := range []uint32{0, 1, 0xFFF, 0x1000, 0x1001, 0x2FFF, 0x3000, 0x7FFF, 0x8000, 0x8001, 0x18000, 0x7FEFFF, 0x7FF000, 0x7FFFFF} {
			floats[64*e+2*uint32(k)] = math.Float32frombits(e<<23 | m)
			floats[64*e+2*uint32(k)+1] = math.Float32frombits(1<<31 | e<<23 | m)
		}
	}
	for _, lv := range kernelLevels {
		t.Run(lv.name, func(t *testing.T) {
			useKernels(t, lv.sse, lv.avx)
			for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
				for _, off := range []int{0, 1, 7} { // odd lengths and starts: tails and groups across specials
					got := make([]float32, (1<<16)-off)
					toF32s(got, halves[2*off:], d)
					for i, x := range got {
						h := uint16(i + off)
						want := math.Float32frombits(uint32(h) << 16)
						if d == tensor.Float16 {
							want = half.F16ToF32(h)
						}
						if math.Float32bits(x) != math.Float32bits(want) {
							t.Fatalf("%s %#04x: %#08x, want %#08x", d, h, math.Float32bits(x), math.Float32bits(want))
						}
					}
					out := make([]byte, 2*(len(floats)-off))
					fromF32s(out, floats[off:], d)
					for i, x := range floats[off:] {
						want := half.F32ToBF16(x)
						if d == tensor.Float16 {
							want = half.F32ToF16(x)
						}
						if got := binary.LittleEndian.Uint16(out[2*i:]); got != want {
							t.Fatalf("%s from %#08x: %#04x, want %#04x", d, math.Float32bits(x), got, want)
						}
					}
				}
			}
		})
	}
}

// q4 and q8 give the same bytes at every kernel level, on 1-d tensors
// (whole groups of a row: the path real weights take) and 2-d ones (both
// paths), with
// groups of many sizes, padded tail groups, constant groups and specials.
func TestQuantKernelLevelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for it := 0; it < 400; it++ {
		d := []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32}[r.IntN(3)]
		shape := []int64{int64(1 + r.IntN(3000))}
		if it%4 == 3 {
			shape = []int64{int64(1 + r.IntN(200)), int64(1 + r.IntN(300))}
		}
		n := 1
		for _, s := range shape {
			n *= int(s)
		}
		src := make([]byte, n*d.Size())
		rate := []int{2, 30, 1000}[r.IntN(3)] // how often a value is special
		constant := r.IntN(n)                 // a constant stretch
		signs := r.IntN(3)                    // 1: no negative numbers, 2: no positive ones (zeros as group ends)
		for i := range n {
			b := math.Float32bits(float32(r.NormFloat64() * 0.02))
			if r.IntN(rate) == 0 {
				b = quantEdgeValue(r, d)
			}
			if signs > 0 && b&0x7FFFFFFF <= 0x7F800000 {
				b = b&0x7FFFFFFF | uint32(signs-1)<<31
				if r.IntN(8) == 0 {
					b = r.Uint32() & 0x80000000 // a zero of either sign
				}
			}
			if i >= constant && i < constant+100 {
				b = math.Float32bits(0.5)
			}
			putWord(src, i, fromF32(math.Float32frombits(b), d), d.Size())
		}
		name := []string{"q4", "q8"}[r.IntN(2)]
		group := []int{64, 32, 128, 16, 2 * (1 + r.IntN(40))}[r.IntN(5)]
		c, _ := codec.ByName(name)
		dim := -1 // 1-d, or 2-d grouped along the columns: whole groups of a row
		if len(shape) == 2 && r.IntN(2) == 0 {
			dim = 0 // grouped along the rows: tiles of columns
		}
		p, err := c.(codec.Parametric).ParseParam(fmt.Sprintf("group=%d,dim=%d", group, dim))
		if err != nil {
			t.Fatal(err)
		}
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: shape}, Param: p}
		var enc, dec [3][]byte
		for k, lv := range kernelLevels {
			func() {
				useKernels(t, lv.sse, lv.avx)
				if enc[k], _, err = c.Encode(nil, src, in); err != nil {
					t.Fatal(err)
				}
				dec[k] = make([]byte, len(src))
				if len(enc[k]) < len(src) {
					if err := c.Decode(dec[k], enc[k], in, 0); err != nil {
						t.Fatal(err)
					}
				}
				canonicalNaNs(dec[k], d)
			}()
		}
		for k := 1; k < 3; k++ {
			if !bytes.Equal(enc[0], enc[k]) || !bytes.Equal(dec[0], dec[k]) {
				t.Fatalf("%s %s %v group %d: %s and %s differ (encoding %v, decoding %v)", name, d, shape, group,
					kernelLevels[0].name, kernelLevels[k].name, bytes.Equal(enc[0], enc[k]), bytes.Equal(dec[0], dec[k]))
			}
		}
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
			if want := half.F16ToF32(uint16(halves[2*i]) | uint16(halves[2*i+1])<<8); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("half %d of %d: %#x, want %#x", i, n, math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		out := make([]byte, 2*n)
		fromF32s(out, floats, tensor.Float16)
		for i, x := range floats {
			if got, want := uint16(out[2*i])|uint16(out[2*i+1])<<8, half.F32ToF16(x); got != want {
				t.Fatalf("float %d of %d (%#x): %#x, want %#x", i, n, math.Float32bits(x), got, want)
			}
		}
	}
}
