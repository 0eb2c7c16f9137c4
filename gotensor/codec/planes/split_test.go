package planes

import (
	"bytes"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

func info(d tensor.DType, n int) codec.Info {
	return codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}}
}

func roundTrip(t *testing.T, enc []byte, src []byte, d tensor.DType) {
	t.Helper()
	out := make([]byte, len(src))
	if err := (planes{}).Decode(out, enc, info(d, len(src)/d.Size()), 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, src) {
		t.Fatal("decoded other bytes")
	}
}

// Real float16 weights take the split layout and decode bit for bit, as
// do chunks in the classic layout (every frame written before it).
// bfloat16 weights, and float16 whose low bits are not random (small
// integers: mantissas of zeros), keep the classic layout.
func TestSplitLayoutWhereTheLowBitsAreRandom(t *testing.T) {
	w := testweights.Real(t)
	ints := make([]float32, 1<<18)
	for i := range ints {
		ints[i] = float32(i % 13)
	}
	for _, c := range []struct {
		name  string
		d     tensor.DType
		w     []float32
		split bool
	}{
		{"float16 weights", tensor.Float16, w, true},
		{"bfloat16 weights", tensor.BFloat16, w, false},
		{"float16 small integers", tensor.Float16, ints, false},
	} {
		for _, n := range []int{1 << 18, 1<<18 - 5} { // whole groups of 32, and a tail
			src := testweights.As(c.w[:n], c.d)
			enc, _, err := planes{}.Encode(nil, src, info(c.d, n))
			if err != nil {
				t.Fatal(err)
			}
			if got := enc[0] == splitHalf; got != c.split {
				t.Errorf("%s, %d elements: split %v, want %v", c.name, n, got, c.split)
			}
			roundTrip(t, enc, src, c.d)
			classic, _, _ := encode(nil, src, c.d, false)
			if classic[0] != 2 {
				t.Fatalf("%s: the classic layout starts with %#x", c.name, classic[0])
			}
			roundTrip(t, classic, src, c.d)
		}
	}
}

// A split chunk cut short in its low bits, or whose top plane is raw,
// is CorruptData; a split layout on another width is refused.
func TestSplitLayoutCorrupt(t *testing.T) {
	n := 1 << 18
	src := testweights.As(testweights.Real(t)[:n], tensor.Float16)
	enc, _, _ := planes{}.Encode(nil, src, info(tensor.Float16, n))
	if enc[0] != splitHalf {
		t.Fatal("not split")
	}
	out := make([]byte, len(src))
	for _, bad := range [][]byte{
		enc[:3+100], // low bits truncated
		append([]byte{splitHalf, 0, 0}, enc[3:]...), // top plane raw
	} {
		if err := (planes{}).Decode(out, bad, info(tensor.Float16, n), 0); !errs.Is(err, errs.CorruptData) {
			t.Errorf("decoded a corrupt split chunk: %v", err)
		}
	}
	f32 := testweights.As(testweights.Real(t)[:n], tensor.Float32)
	e32, _, _ := planes{}.Encode(nil, f32, info(tensor.Float32, n))
	e32[0] = splitHalf
	if err := (planes{}).Decode(make([]byte, len(f32)), e32, info(tensor.Float32, n), 0); !errs.Is(err, errs.CorruptData) {
		t.Errorf("a float32 chunk in the split layout decoded: %v", err)
	}
}
