package core

import (
	"context"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A read's factor is its own once reads of a kind are seen; before, the
// writes' factors stand for the reads too, and a codec never read takes
// none's read factor.
func TestReadFactorsAreTheirOwn(t *testing.T) {
	var f factors
	none, _ := codec.ByName("none")
	planes, _ := codec.ByName("planes")
	kind := choiceKey{tensor.BFloat16, 25}
	t0 := time.Unix(0, 0)
	f.observe(kind, planes, false, 3, 1, t0)
	if got := f.get(kind, planes, true, true, t0); got != 2 {
		t.Fatalf("planes written, no read seen: read factor %v, want its write factor 2", got)
	}
	f.observe(kind, none, true, 1.5, 1, t0)
	if got := f.get(kind, planes, true, true, t0); got != 1.25 {
		t.Fatalf("planes never read, none read at 1.5: read factor %v, want none's 1.25", got)
	}
	f.observe(kind, planes, true, 4.75, 1, t0) // from none's 1.25, as it was weighed
	if got, w := f.get(kind, planes, true, true, t0), f.get(kind, planes, false, true, t0); got != 3 || w != 2 {
		t.Fatalf("planes read at 4.75: read factor %v (want 3), write factor %v (want 2)", got, w)
	}
	if later := t0.Add(factorTTL); f.get(kind, planes, true, true, later) != 0 {
		t.Fatal("read factors not observed for factorTTL are forgotten")
	}
}

// readSlowedLink is newContendedLink whose reads of a coded frame also
// cost their stored bytes at readCodeRate: decoding takes the CPU that
// fetching needs, which the decode speed, measured alone, does not show.
type readSlowedLink struct {
	*contendedLink
	readCodeRate float64
}

func (f *readSlowedLink) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	b, size, err := f.contendedLink.GetRange(ctx, key, off, n)
	if all, gerr := f.mem.Get(ctx, key); err == nil && gerr == nil {
		if h, perr := frame.ParseHeader(all, frame.DefaultLimits); perr == nil && h.Codec != codec.IDNone {
			f.clock.advance(time.Duration(float64(len(b)) / f.readCodeRate * 1e9))
		}
	}
	return b, size, err
}

func newReadSlowedLink(t *testing.T, rate, readCodeRate float64) *Store {
	t.Helper()
	s := newContendedLink(t, rate, 1e18) // writes keep the model's promise
	cl := s.st.(*contendedLink)
	s.st = &readSlowedLink{contendedLink: cl, readCodeRate: readCodeRate}
	return s
}

// On a slow link (1 Gbit/s) planes' writes keep their promise, but its
// reads take four times what the model expected: one whole read alone
// teaches that, drops the choice, and the next write of the kind gets
// none. Without reads teaching, planes stays.
func TestAutoLearnsFromReads(t *testing.T) {
	s := newReadSlowedLink(t, 125e6, 25e6)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	raw := bf16Weights(8 << 20)
	back := make([]byte, len(raw))
	var got []string
	for range 3 {
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		got = append(got, chosen(t, s, "w"))
		if err := s.ReadTensor(ctx, "w", meta, back); err != nil {
			t.Fatal(err)
		}
	}
	if got[0] != "planes" || got[1] != "none" || got[2] != "none" {
		t.Fatalf("auto chose %v, want planes, then none once its read proved slow", got)
	}
}

// A fixed codec's writes teach its factor as "auto"'s do: after planes
// writes that took twice their promise (coding took the CPU the link
// needed), "auto"'s first write gets none, where a store that had seen
// none of them tries planes first (TestAutoCorrectsAWrongPick).
func TestFixedCodecWritesTeachAuto(t *testing.T) {
	s := newContendedLink(t, 1e9, 1.5e9)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	raw := bf16Weights(8 << 20)
	for range 2 {
		if err := s.WriteTensor(ctx, "p", meta, raw, "planes"); err != nil {
			t.Fatal(err)
		}
	}
	if got := autoChoices(t, s, 3); got[0] != "none" || got[1] != "none" || got[2] != "none" {
		t.Fatalf("auto after slow planes writes: %v, want none from the first", got)
	}
}
