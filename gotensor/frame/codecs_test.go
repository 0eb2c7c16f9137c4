package frame

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// weights returns n values like trained weights (normal, small), encoded
// as dtype d.
func weights(d tensor.DType, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([]byte, n*d.Size())
	for i := 0; i < n; i++ {
		x := float32(r.NormFloat64() * 0.02)
		switch d {
		case tensor.BFloat16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(x)>>16))
		case tensor.Float16:
			binary.LittleEndian.PutUint16(out[2*i:], f16(x))
		case tensor.Float32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		case tensor.Float64, tensor.Complex128:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(x)))
		case tensor.Complex64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(math.Float32bits(x))|uint64(math.Float32bits(-x))<<32)
		default: // 1-byte types: random bits
			out[i] = byte(r.Uint32())
		}
	}
	return out
}

func f16(x float32) uint16 { // test-side conversion, truncating: values only need to be plausible
	b := math.Float32bits(x)
	e := int(b>>23&0xFF) - 127 + 15
	if e <= 0 {
		return uint16(b>>16) & 0x8000
	}
	return uint16(b>>16)&0x8000 | uint16(e)<<10 | uint16(b>>13&0x3FF)
}

var lossless = []string{"none", "planes", "deflate", "shuffle-deflate", "lz4", "zstd"}

func TestLosslessCodecsRoundTripEveryDType(t *testing.T) {
	for _, spec := range lossless {
		c, _, _ := codec.Parse(spec)
		for _, d := range tensor.All() {
			if !c.Supports(d) {
				continue
			}
			for _, n := range []int{0, 1, 3, 1000, 300001} {
				meta := tensor.Meta{DType: d, Shape: []int64{int64(n)}}
				raw := weights(d, n, uint64(n))
				f, err := Encode(meta, raw, spec, Options{ChunkSize: 64 << 10})
				if err != nil {
					t.Fatalf("%s %s n=%d: %v", spec, d, n, err)
				}
				if int64(len(f)) > int64(len(raw))+int64(headerSize(f)) {
					t.Fatalf("%s %s: frame larger than raw + header", spec, d)
				}
				dst := make([]byte, len(raw))
				if _, err := Decode(ctx, f, dst, DefaultLimits); err != nil {
					t.Fatalf("%s %s n=%d: %v", spec, d, n, err)
				}
				if !bytes.Equal(dst, raw) {
					t.Fatalf("%s %s n=%d: round trip differs", spec, d, n)
				}
			}
		}
	}
}

func headerSize(f []byte) int { n, _ := HeaderLen(f); return n }

func TestFloatCodecsCompressWeights(t *testing.T) {
	for _, c := range []struct {
		spec   string
		d      tensor.DType
		maxPct float64
	}{
		{"planes", tensor.BFloat16, 75}, {"shuffle-deflate", tensor.BFloat16, 76},
		{"planes", tensor.Float32, 90}, {"planes", tensor.Float16, 90},
	} {
		n := 1 << 20
		raw := weights(c.d, n, 5)
		f, err := Encode(tensor.Meta{DType: c.d, Shape: []int64{int64(n)}}, raw, c.spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if pct := 100 * float64(len(f)) / float64(len(raw)); pct > c.maxPct {
			t.Fatalf("%s on %s: %.1f%% of raw, want <= %.0f%%", c.spec, c.d, pct, c.maxPct)
		}
	}
}

func TestQuantErrorBound(t *testing.T) {
	for _, spec := range []string{"q4", "q8", "q4:group=32,dim=1", "q4:group=64,dim=-1", "q8:dim=2"} {
		for _, d := range []tensor.DType{tensor.Float32, tensor.Float16, tensor.BFloat16} {
			shape := []int64{128, 40, 130}
			meta := tensor.Meta{DType: d, Shape: shape}
			n, _ := meta.NumBytes()
			raw := weights(d, int(n)/d.Size(), 3)
			f, err := Encode(meta, raw, spec, Options{ChunkSize: 64 << 10})
			if err != nil {
				t.Fatalf("%s %s: %v", spec, d, err)
			}
			if len(f) >= len(raw) {
				t.Fatalf("%s %s: frame %d bytes >= raw %d", spec, d, len(f), len(raw))
			}
			dst := make([]byte, n)
			if _, err := Decode(ctx, f, dst, DefaultLimits); err != nil {
				t.Fatalf("%s %s: %v", spec, d, err)
			}
			levels := 15.0
			if spec[:2] == "q8" {
				levels = 255
			}
			load := func(b []byte, i int) float64 {
				switch d {
				case tensor.Float32:
					return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
				case tensor.BFloat16:
					return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
				}
				return halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
			}
			// weights are N(0, 0.02): every group spans < 0.2, so the error
			// is at most half a step of 0.2/levels, plus fp16 rounding.
			bound := 0.2/levels/2 + 2e-3
			for i := 0; i < int(n)/d.Size(); i++ {
				if e := math.Abs(load(dst, i) - load(raw, i)); e > bound {
					t.Fatalf("%s %s: element %d off by %g > %g", spec, d, i, e, bound)
				}
			}
		}
	}
}

func halfToFloat(h uint16) float64 {
	e, m := int(h>>10&0x1F), float64(h&0x3FF)
	v := math.Ldexp(m/1024, -14)
	if e != 0 {
		v = math.Ldexp(1+m/1024, e-15)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func TestQuantRejectsBadParams(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{4, 4}}
	for _, spec := range []string{"q4:group=3", "q4:group=0", "q4:dim=x", "q4:size=4", "q4:dim=2", "q4:dim=-3"} {
		if _, err := Encode(meta, make([]byte, 64), spec, Options{}); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%s: %v", spec, err)
		}
	}
	if _, err := Encode(tensor.Meta{DType: tensor.Float32}, make([]byte, 4), "q4", Options{}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal("0-d tensor accepted by q4")
	}
}

// Every single-bit flip in a frame of every codec is reported as CorruptData.
func TestEveryBitFlipEveryCodec(t *testing.T) {
	for _, spec := range append(lossless[1:], "q4", "q8") {
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{2, 1500}}
		raw := weights(meta.DType, 3000, 11)
		f, err := Encode(meta, raw, spec, Options{ChunkSize: MinChunkSize})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(raw))
		for bit := 0; bit < len(f)*8; bit += flipStride {
			g := bytes.Clone(f)
			g[bit/8] ^= 1 << (bit % 8)
			if _, err := Decode(ctx, g, dst, DefaultLimits); !errs.Is(err, errs.CorruptData) {
				t.Fatalf("%s: flip of bit %d (byte %d of %d): got %v", spec, bit, bit/8, len(f), err)
			}
		}
	}
}
