package core

import (
	"context"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// contendedLink is a streaming fake link on which coding takes the CPU
// that moving needs: a coded frame's write costs its coding time on top
// of its moving (raw bytes at codeRate), though the CPU share it shows
// says moving leaves the CPU free. So on two cores shared with a node on
// the loopback planes' writes take what their speeds, measured alone,
// do not promise.
type contendedLink struct {
	*streamLink
	codeRate float64       // raw bytes per second a coded write's coding adds
	openCost time.Duration // what opening a stream costs beyond the link (a node readying memory), which no transfer shows
}

func (f *contendedLink) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	f.clock.advance(f.openCost)
	sink, err := f.streamLink.PutStream(ctx, key)
	return &contendedSink{PartSink: sink, f: f}, err
}

type contendedSink struct {
	store.PartSink
	f *contendedLink
}

func (c *contendedSink) Commit(h []byte) error {
	if hdr, err := frame.ParseHeader(h, frame.DefaultLimits); err == nil && hdr.Codec != codec.IDNone {
		c.f.clock.advance(time.Duration(float64(hdr.RawSize) / c.f.codeRate * 1e9))
	}
	return c.PartSink.Commit(h)
}

// newContendedLink is newStreamLink (CPU share 0) whose coded writes
// also cost their raw bytes at codeRate.
func newContendedLink(t *testing.T, rate, codeRate float64) *Store {
	return newSlowedLink(t, rate, codeRate, 0)
}

// newSlowedLink is newContendedLink whose writes, whatever their codec,
// also cost openCost before their bytes move.
func newSlowedLink(t *testing.T, rate, codeRate float64, openCost time.Duration) *Store {
	t.Helper()
	mem := store.NewMem("mem://", 0)
	clock := &fakeClock{t: time.Unix(0, 0)}
	sl := &streamLink{fakeLink: &fakeLink{Store: mem, clock: clock, rate: rate, latency: 100 * time.Microsecond}, mem: mem}
	s := Wrap(&contendedLink{streamLink: sl, codeRate: codeRate, openCost: openCost})
	s.now, s.speed = clock.now, fixedSpeeds
	s.cpu = func(bool) (cpuTimes, bool) {
		ns := uint64(clock.now().UnixNano())
		return cpuTimes{busy: 0, total: ns}, true
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// autoChoices writes a bf16 tensor of 16 MiB (streamed) n times with
// "auto" and returns what each write chose.
func autoChoices(t *testing.T, s *Store, n int) []string {
	return autoChoicesOf(t, s, 8<<20, n)
}

func autoChoicesOf(t *testing.T, s *Store, elems int64, n int) []string {
	t.Helper()
	raw := bf16Weights(int(elems))
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{elems}}
	var got []string
	for range n {
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		got = append(got, chosen(t, s, "w"))
	}
	return got
}

// A 10 Gbit/s-like link where, on paper, planes' coding hides behind
// sending (the CPU share says moving leaves the CPU free) and planes saves
// a third; but coding takes the CPU the link needs and a planes write
// takes its coding and its moving one after the other. The first write
// believes the model; its time (twice what was expected) proves it
// wrong, and the next and all later ones take none, whose writes keep
// the model's promise.
func TestAutoCorrectsAWrongPick(t *testing.T) {
	s := newContendedLink(t, 1e9, 1.5e9)
	got := autoChoices(t, s, 6)
	if got[0] != "planes" {
		t.Fatalf("the model's first pick: %v, want planes", got)
	}
	for i, c := range got[1:] {
		if c != "none" {
			t.Fatalf("write %d after planes proved slow: %v, want none from the second on", i+1, got)
		}
	}
}

// Where coding costs the link little (a slow link: coding planes takes a
// tenth of moving its frame), planes keeps its promise and is kept.
func TestAutoKeepsARightPick(t *testing.T) {
	s := newContendedLink(t, 125e6, 15e9)
	for i, c := range autoChoices(t, s, 6) {
		if c != "planes" {
			t.Fatalf("write %d: %s, want planes", i, c)
		}
	}
}

// A fast link (40 Gbit/s) whose writes all take longer than the link
// shows (a cost per write before any byte moves, which the model leaves
// out): none's writes take several times what the model expected. That is in every codec's writes, planes'
// too, so planes, not yet tried, must not look that much better than none
// for having no writes of its own: none is kept.
func TestAutoUntriedCodecTakesNonesFactor(t *testing.T) {
	s := newSlowedLink(t, 5e9, 1.5e9, 100*time.Millisecond)
	for i, c := range autoChoicesOf(t, s, 32<<20, 4) {
		if c != "none" {
			t.Fatalf("write %d: %s, want none", i, c)
		}
	}
}
