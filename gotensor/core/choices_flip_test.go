package core

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// setLink makes s's link estimate and its fake link move n bytes at rate
// after a round trip of the link's latency.
func setLink(s *Store, rate float64) {
	f := s.st.(*fakeLink)
	f.rate = rate
	const n = 1 << 20
	s.link.reseed(n, time.Duration(n/rate*1e9), f.latency, -1)
}

// pastMargin is how far planes' expected saving over none lies beyond the
// margin it needs (codec.Cost.Need) for such a tensor at s's link now.
func pastMargin(t *testing.T, s *Store, meta tensor.Meta, raw []byte) float64 {
	t.Helper()
	h := s.hint(meta, raw)
	var none, planes *codec.Cost
	for _, c := range h.Costs(meta, int64(len(raw)), raw) {
		switch c.Codec.Name() {
		case "none":
			none = &c
		case "planes":
			planes = &c
		}
	}
	if none == nil || planes == nil {
		t.Fatal("none or planes not weighed")
	}
	return 1 - (planes.Write+planes.Read)/(none.Write+none.Read) - planes.Need()
}

// rateAt is the link rate at which planes' expected saving lies past its
// margin by want (the saving falls as the rate grows).
func rateAt(t *testing.T, s *Store, meta tensor.Meta, raw []byte, want float64) float64 {
	lo, hi := 1e6, 1e11
	for range 100 {
		mid := (lo + hi) / 2
		setLink(s, mid)
		if pastMargin(t, s, meta, raw) > want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// A link whose estimate wanders either side of where planes just pays (its
// expected saving 2% past its margin, then 2% short of it), weighed afresh
// for each write (its choice and factors expired): the kind keeps the
// codec its first write got. On main each weigh flipped it.
func TestAutoDoesNotFlipOnAWanderingLink(t *testing.T) {
	s, clock := newFakeLink(t, 1e9, 100*time.Microsecond)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}} // 1 MiB: whole
	raw := bf16Weights(1 << 19)
	above, below := rateAt(t, s, meta, raw, 0.02), rateAt(t, s, meta, raw, -0.02)
	s.ResetStats()
	const writes = 12
	got := map[string]int{}
	for i := range writes {
		clock.advance(factorTTL + choiceTTL) // weigh again, from the model alone
		setLink(s, map[bool]float64{true: above, false: below}[i%2 == 0])
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		got[chosen(t, s, "w")]++
	}
	a := s.Stats().Auto
	if a.Weighed != writes || a.Flips != 0 || got["planes"] != writes {
		t.Errorf("%d writes at %.3g and %.3g B/s: chose %v, %+v", writes, above, below, got, a)
	}
	if a.Samples != writes*2 { // planes and lz4, once a weigh
		t.Errorf("samples %d, want %d", a.Samples, writes*2)
	}
}

// Writes of a kind in quick succession over a steady link, once its
// estimate has settled from the seed, reuse its choice: a weigh per
// choiceTTL, none for drift or factors.
func TestAutoWeighsOncePerTTL(t *testing.T) {
	s, _ := newFakeLink(t, 1e8, 100*time.Microsecond)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}}
	raw := bf16Weights(1 << 19)
	for range 100 { // the link's fit leaves the seed (10 Gbit/s), the factors settle
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
	}
	s.ResetStats()
	start := s.now()
	const writes = 200
	for range writes {
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
	}
	a := s.Stats().Auto
	most := 1 + int64(s.now().Sub(start)/choiceTTL)
	if a.Weighed > most || a.Weighed != a.Expired || a.Flips > 0 || a.Weighed+a.Reused != writes {
		t.Errorf("%d writes over %v: %+v, want at most %d weighs", writes, s.now().Sub(start), a, most)
	}
	t.Logf("%d writes over %v: %+v", writes, s.now().Sub(start), a)
}
