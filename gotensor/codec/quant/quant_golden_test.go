package quant

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// quantCases cover every dtype, group dimension position, padding, constant
// groups, NaN, infinities and float16 subnormals.
func quantCases() (names []string, metas []tensor.Meta, params []uint32, srcs [][]byte) {
	shapes := [][]int64{{1000}, {96, 130}, {3, 40, 7}, {128, 64}, {5, 2, 64}}
	r := rand.New(rand.NewPCG(7, 11))
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32} {
		for si, shape := range shapes {
			for _, dim := range []int{0, -1, 1} {
				if dim == 1 && len(shape) < 2 {
					continue
				}
				for _, group := range []int{64, 32, 6} {
					n := 1
					for _, s := range shape {
						n *= int(s)
					}
					src := make([]byte, n*d.Size())
					sd := []float64{0.02, 1, 1e-5}[si%3]
					for i := 0; i < n; i++ {
						x := float32(r.NormFloat64() * sd)
						switch {
						case i < 70: // a constant stretch: constant groups
							x = 0.25
						case i == 200:
							x = float32(math.NaN())
						case i == 301:
							x = float32(math.Inf(1))
						case i == 402:
							x = float32(math.Inf(-1))
						}
						storer(d)(src, i, x)
					}
					for _, q := range []string{"q4", "q8"} {
						c, _ := codec.ByName(q)
						p, err := c.(codec.Parametric).ParseParam(fmt.Sprintf("group=%d,dim=%d", group, dim))
						if err != nil {
							panic(err)
						}
						names = append(names, fmt.Sprintf("%s/%s/%v/dim%d/g%d", q, d, shape, dim, group))
						metas = append(metas, tensor.Meta{DType: d, Shape: shape})
						params = append(params, p)
						srcs = append(srcs, src)
					}
				}
			}
		}
	}
	return
}

// The quantizers must keep producing the bytes FlexGen's
// TorchCompressedDevice produces (python/tests/test_codecs.py checks them
// against FlexGen itself): testdata/quant_golden.txt holds the SHA-256 of
// the encoding and of its decoding, as the FlexGen-checked code gave them.
func TestQuantGolden(t *testing.T) {
	path := filepath.Join("testdata", "quant_golden.txt")
	names, metas, params, srcs := quantCases()
	var got strings.Builder
	for i, name := range names {
		c, _ := codec.ByName(name[:2])
		in := codec.Info{Meta: metas[i], Param: params[i]}
		enc, _, err := c.Encode(nil, srcs[i], in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dec := make([]byte, len(srcs[i]))
		if len(enc) == len(srcs[i]) { // stored raw by the frame
			copy(dec, enc)
		} else if err := c.Decode(dec, enc, in, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		canonicalNaNs(dec, metas[i].DType)
		he, hd := sha256.Sum256(enc), sha256.Sum256(dec)
		fmt.Fprintf(&got, "%s %s %s\n", name, hex.EncodeToString(he[:8]), hex.EncodeToString(hd[:8]))
	}
	if os.Getenv("GOTENSOR_WRITE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%d cases, golden file has %d", len(gl), len(wl))
	}
	for i := range wl {
		if wl[i] != gl[i] {
			t.Errorf("got  %s\nwant %s", gl[i], wl[i])
		}
	}
}

// storer writes float32 values as dtype d, for building test tensors.
func storer(d tensor.DType) func([]byte, int, float32) {
	return func(b []byte, i int, x float32) { putWord(b, i, fromF32(x, d), d.Size()) }
}

// The SSE kernels and the Go loops (their twins) give the same bytes on
// random shapes, parameters and values, specials included.
func TestQuantKernelsMatchGo(t *testing.T) {
	if !haveSSSE3 {
		t.Skip("no SSSE3: only the Go loops run")
	}
	r := rand.New(rand.NewPCG(12, 13))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-30, 65504}
	for it := 0; it < 300; it++ {
		d := []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32}[r.IntN(3)]
		shape := []int64{int64(1 + r.IntN(40)), int64(1 + r.IntN(40))}
		n := int(shape[0] * shape[1])
		src := make([]byte, n*d.Size())
		for i := 0; i < n; i++ {
			x := float32(r.NormFloat64())
			if r.IntN(50) == 0 {
				x = specials[r.IntN(len(specials))]
			}
			storer(d)(src, i, x)
		}
		name := []string{"q4", "q8"}[r.IntN(2)]
		c, _ := codec.ByName(name)
		p, err := c.(codec.Parametric).ParseParam(fmt.Sprintf("group=%d,dim=%d", 2*(1+r.IntN(20)), r.IntN(2)))
		if err != nil {
			t.Fatal(err)
		}
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: shape}, Param: p}
		var enc, dec [2][]byte
		for k, fast := range []bool{true, false} {
			useKernels(t, fast, fast)
			enc[k], _, err = c.Encode(nil, src, in)
			if err != nil {
				t.Fatal(err)
			}
			dec[k] = make([]byte, len(src))
			if len(enc[k]) < len(src) {
				if err := c.Decode(dec[k], enc[k], in, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		canonicalNaNs(dec[0], d)
		canonicalNaNs(dec[1], d)
		if !bytes.Equal(enc[0], enc[1]) || !bytes.Equal(dec[0], dec[1]) {
			t.Fatalf("%s %s %v param %#x: SSE and Go differ", name, d, shape, p)
		}
	}
}

// canonicalNaNs sets every NaN element of b to one quiet NaN: which NaN
// (sign, payload) an operation on NaNs returns depends on the order the
// compiler gives its operands, the race detector's builds included.
func canonicalNaNs(b []byte, d tensor.DType) {
	switch d {
	case tensor.Float16, tensor.BFloat16:
		exp, quiet := uint16(0x7C00), uint16(0x7E00)
		if d == tensor.BFloat16 {
			exp, quiet = 0x7F80, 0x7FC0
		}
		for i := 0; i+2 <= len(b); i += 2 {
			if h := binary.LittleEndian.Uint16(b[i:]); h&exp == exp && h&^(exp|0x8000) != 0 {
				binary.LittleEndian.PutUint16(b[i:], quiet)
			}
		}
	default:
		for i := 0; i+4 <= len(b); i += 4 {
			if x := math.Float32frombits(binary.LittleEndian.Uint32(b[i:])); x != x {
				binary.LittleEndian.PutUint32(b[i:], 0x7FC00000)
			}
		}
	}
}
