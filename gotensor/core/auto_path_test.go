package core

import (
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// An "auto" write that resolves to none takes the codec-none write's path:
// it allocates what an explicit none write does, plus, when it weighs
// again, the codecs' 64 KiB samples; nothing per byte of the tensor.
func TestAutoResolvedToNoneCostsANoneWrite(t *testing.T) {
	raw := bf16Weights(8 << 20) // 16 MiB: streamed
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	s := newStreamLink(t, 1e9, 1)
	if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil { // probes, measures, weighs
		t.Fatal(err)
	}
	if got := chosen(t, s, "w"); got != "none" {
		t.Fatalf("auto chose %s", got)
	}
	allocated := func(spec string, reweigh bool) uint64 {
		var least uint64
		for i := range 5 {
			if reweigh {
				s.choices = choices{}
			}
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			if err := s.WriteTensor(ctx, "w", meta, raw, spec); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&b)
			if n := b.TotalAlloc - a.TotalAlloc; i == 0 || n < least {
				least = n
			}
		}
		return least
	}
	none := allocated("none", false)
	for _, reweigh := range []bool{false, true} {
		auto := allocated("auto", reweigh)
		if got := chosen(t, s, "w"); got != "none" {
			t.Fatalf("auto chose %s", got)
		}
		if limit := none + 1<<20; auto > limit {
			t.Errorf("reweigh %v: auto allocated %d bytes, none %d", reweigh, auto, none)
		}
		t.Logf("reweigh %v: auto allocated %d bytes, none %d", reweigh, auto, none)
	}
}
