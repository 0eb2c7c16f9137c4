package core

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/auto"
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// How "auto" chooses is package auto's, tested there on scenarios; these
// tests check that a Store hands its chooser what it needs: every write,
// read and transfer, and its link to probe.

// streamLink is a fakeLink that streams: each part and range costs its
// time on the link (on the fake clock).
type streamLink struct {
	*fakeLink
	mem store.Store // the store under the link, whose calls cost nothing
	// readCodeRate, where not 0, slows the reads of coded frames: decoding
	// takes the CPU that fetching needs, which decode speeds do not show.
	readCodeRate float64
}

// Caps: a link that streams.
func (f *streamLink) Caps() store.Caps { return store.Caps{Stream: f, Ranges: f} }

func (f *streamLink) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	return &clockSink{PartSink: store.BufferedStream(ctx, f.mem, key), f: f.fakeLink}, nil
}

func (f *streamLink) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	all, err := f.mem.Get(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	size := int64(len(all))
	b := all[min(off, size):min(off+n, size)]
	f.clock.advance(f.cost(len(b)))
	if h, err := frame.ParseHeader(all, frame.DefaultLimits); err == nil && h.Codec != codec.IDNone && f.readCodeRate > 0 {
		f.clock.advance(time.Duration(float64(len(b)) / f.readCodeRate * 1e9))
	}
	return b, size, nil
}

type clockSink struct {
	store.PartSink
	f *fakeLink
}

func (c *clockSink) WritePart(off int64, b []byte) error {
	c.f.clock.advance(time.Duration(float64(len(b)) / c.f.rate * 1e9))
	return c.PartSink.WritePart(off, b)
}

func (c *clockSink) Commit(h []byte) error {
	c.f.clock.advance(c.f.cost(len(h)))
	return c.PartSink.Commit(h)
}

func (c *clockSink) Abort() {
	c.f.clock.advance(c.f.latency)
	c.PartSink.Abort()
}

// newStreamLink is a store across a streaming fake link at rate bytes/s
// and 100 us a round trip, whose moving keeps share of the CPU busy.
func newStreamLink(t *testing.T, rate, share float64) *Store {
	t.Helper()
	mem := store.NewMem("mem://", 0)
	clock := &fakeClock{t: time.Unix(0, 0)}
	s := Wrap(&streamLink{fakeLink: &fakeLink{Store: mem, clock: clock, rate: rate, latency: 100 * time.Microsecond}, mem: mem})
	withChooser(s, clock.now, func(o *auto.Options) {
		o.CPU = func() (auto.CPUTimes, bool) {
			ns := uint64(clock.now().UnixNano())
			return auto.CPUTimes{Busy: uint64(share * float64(ns)), Total: ns}, true
		}
	})
	t.Cleanup(func() { s.Close() })
	return s
}

func chosen(t *testing.T, s *Store, key string) string {
	t.Helper()
	st, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return st.Codec
}

// The first write "auto" weighs probes a store across a link: its rate
// and CPU share replace the seed, and the probe leaves nothing behind.
func TestAutoProbesTheLink(t *testing.T) {
	s := newStreamLink(t, 125e6, 0.5)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	if err := s.WriteTensor(ctx, "w", meta, bf16Weights(8<<20), "auto"); err != nil {
		t.Fatal(err)
	}
	if l := s.Stats().Link; l.Seed != "probe" || l.BytesPerSecond < 0.85*125e6 || l.BytesPerSecond > 1.15*125e6 || l.CPUShare < 0.4 || l.CPUShare > 0.6 {
		t.Fatalf("link after the probe: %+v", l)
	}
	if keys, _ := s.Keys(ctx, ""); len(keys) != 1 || keys[0] != "w" {
		t.Fatalf("keys %v", keys)
	}
	if got := chosen(t, s, "w"); got != "planes" {
		t.Fatalf("1 Gbit/s: %s", got)
	}
}

// A batch of tensors of one dtype and size class, written concurrently,
// gets one codec, weighed once.
func TestAutoChoosesOncePerBatch(t *testing.T) {
	s := newStreamLink(t, 125e6, 0.5)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			raw := bf16Weights(300<<10 + i) // sizes differ a little, class alike
			m := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(len(raw) / 2)}}
			if err := s.WriteTensor(ctx, string(rune('a'+i)), m, raw, "auto"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	codecs := map[string]bool{}
	for i := range 12 {
		codecs[chosen(t, s, string(rune('a'+i)))] = true
	}
	if a := s.Stats().Auto; len(codecs) != 1 || a.Weighed != 1 || a.Reused != 11 {
		t.Errorf("one batch: codecs %v, %+v", codecs, a)
	}
}

// Reads report to the chooser: at 1 Gbit/s planes' writes keep their
// promise but its reads take four times what the model expects, and once
// a read shows it, the next write gets none.
func TestAutoLearnsFromReads(t *testing.T) {
	s := newStreamLink(t, 125e6, 0)
	s.st.(*streamLink).readCodeRate = 40e6
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

// An "auto" write that resolves to none takes the codec-none write's
// path: it allocates what an explicit none write does, plus, when it
// weighs again, the codecs' 64 KiB samples; nothing per byte of the
// tensor.
func TestAutoResolvedToNoneCostsANoneWrite(t *testing.T) {
	raw := bf16Weights(8 << 20) // 16 MiB: streamed
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	s := newStreamLink(t, 1e9, 1)
	if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil { // probes, weighs
		t.Fatal(err)
	}
	allocated := func(spec string, reweigh bool) uint64 {
		var least uint64
		for i := range 5 {
			if reweigh {
				s.st.(*streamLink).clock.advance(2 * time.Second) // the choice expires
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
		if auto > none+1<<20 {
			t.Errorf("reweigh %v: auto allocated %d bytes, none %d", reweigh, auto, none)
		}
	}
}

// A tensor under CodeMin written with "auto" takes none's path: nothing
// weighed, and no more allocations than a write with none.
func TestAutoOnATinyTensorIsANoneWrite(t *testing.T) {
	s, _ := Open("mem://tiny")
	defer s.Close()
	var asked atomic.Int64
	withChooser(s, time.Now, func(o *auto.Options) {
		o.Speed = func(d tensor.DType, c codec.Codec, sample []byte) (auto.Speed, bool) {
			asked.Add(1)
			return fixedSpeeds(d, c, sample)
		}
	})
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{384}} // a bias: 768 B
	raw := bf16Weights(384)
	allocs := func(spec string) float64 {
		return testing.AllocsPerRun(200, func() {
			if err := s.WriteTensor(ctx, "b", meta, raw, spec); err != nil {
				t.Fatal(err)
			}
		})
	}
	if none, auto := allocs("none"), allocs("auto"); auto > none {
		t.Errorf("auto allocated %.1f times per write of a tiny tensor, none %.1f", auto, none)
	}
	if n, a := asked.Load(), s.Stats().Auto; n > 0 || a.Weighed+a.Reused > 0 {
		t.Errorf("auto weighed a tiny tensor: %d speeds asked, %+v", n, a)
	}
	if got := chosen(t, s, "b"); got != "none" {
		t.Errorf("auto chose %s", got)
	}
}

// A streamed write tells the chooser it streams: one of none has the CPU
// read at its two ends (the share moving takes), one of planes not.
func TestStreamedWriteOfNoneTellsTheCPUShare(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 256<<10
	var reads atomic.Int64
	s := newStreamLink(t, 1e9, 0.5)
	withChooser(s, s.now, func(o *auto.Options) {
		o.CPU = func() (auto.CPUTimes, bool) {
			reads.Add(1)
			return auto.CPUTimes{}, true
		}
	})
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{2 << 20}} // 4 MiB: several pieces
	for i, spec := range []string{"none", "none", "planes"} {
		reads.Store(0)
		if err := s.WriteTensor(ctx, "w", meta, bf16Weights(2<<20), spec); err != nil {
			t.Fatal(err)
		}
		if n, want := reads.Load(), map[string]int64{"none": 2, "planes": 0}[spec]; i > 0 && n != want { // the first probes too
			t.Errorf("%s: %d CPU readings, want %d", spec, n, want)
		}
	}
}
