package core

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A tensor under codec.CodeMin written with "auto" takes none's path: no
// weighing (no speeds asked, no sample coded), and no more allocations
// than a write with none.
func TestAutoOnATinyTensorIsANoneWrite(t *testing.T) {
	s, _ := Open("mem://tiny")
	defer s.Close()
	asked := 0
	s.speed = func(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool) {
		asked++
		return fixedSpeeds(d, c, sample)
	}
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{384}} // a bias: 768 B
	raw := bf16Weights(384)
	allocs := func(spec string) float64 {
		return testing.AllocsPerRun(200, func() {
			if err := s.WriteTensor(ctx, "b", meta, raw, spec); err != nil {
				t.Fatal(err)
			}
		})
	}
	none, auto := allocs("none"), allocs("auto")
	if auto > none {
		t.Errorf("auto allocated %.1f times per write of a tiny tensor, none %.1f", auto, none)
	}
	if asked > 0 || len(s.choices.m) > 0 {
		t.Errorf("auto weighed a tiny tensor: %d speeds asked, %d choices kept", asked, len(s.choices.m))
	}
	if got := chosen(t, s, "b"); got != "none" {
		t.Errorf("auto chose %s", got)
	}
	t.Logf("allocations per write: none %.1f, auto %.1f", none, auto)
}
