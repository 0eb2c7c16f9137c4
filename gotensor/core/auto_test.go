package core

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// streamLink is a fakeLink that streams: each part and range costs its
// time on the link, and moving keeps a given share of the CPU busy (on
// the fake clock).
type streamLink struct {
	*fakeLink
	mem store.Store // the store under the link, whose calls cost nothing
}

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
// whose moving keeps share of the CPU busy; each call but a part costs a
// round trip of 100 us too.
func newStreamLink(t *testing.T, rate, share float64) *Store {
	return newStreamLinkLatency(t, rate, share, 100*time.Microsecond)
}

func newStreamLinkLatency(t *testing.T, rate, share float64, latency time.Duration) *Store {
	t.Helper()
	mem := store.NewMem("mem://", 0)
	clock := &fakeClock{t: time.Unix(0, 0)}
	f := &streamLink{fakeLink: &fakeLink{Store: mem, clock: clock, rate: rate, latency: latency}, mem: mem}
	s := Wrap(f)
	s.now, s.speed = clock.now, fixedSpeeds
	s.cpu = func(bool) (cpuTimes, bool) {
		ns := uint64(clock.now().UnixNano())
		return cpuTimes{busy: uint64(share * float64(ns)), total: ns}, true
	}
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

// An 8 Gbit/s link whose moving takes all of a few cores (TCP, or UCX over
// TCP, on loopback): coding planes cannot overlap sending, and bf16 gets
// none. The same link with a NIC that moves bytes by itself: planes.
func TestAutoCountsTheCPUMovingTakes(t *testing.T) {
	raw := bf16Weights(8 << 20) // 16 MiB: streamed
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	for _, tc := range []struct {
		share float64
		want  string
	}{{1, "none"}, {0, "planes"}} {
		s := newStreamLink(t, 1e9, tc.share)
		for i := range 4 {
			if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
				t.Fatal(err)
			}
			if got := chosen(t, s, "w"); got != tc.want {
				t.Errorf("CPU share %v, write %d: %s, want %s (link %+v)", tc.share, i, got, tc.want, s.Stats().Link)
			}
		}
	}
}

// The first write "auto" weighs probes the link: its rate and CPU share
// replace the seed, and the probe leaves nothing behind.
func TestAutoProbesTheLink(t *testing.T) {
	s := newStreamLink(t, 125e6, 0.5)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	if err := s.WriteTensor(ctx, "w", meta, bf16Weights(8<<20), "auto"); err != nil {
		t.Fatal(err)
	}
	l := s.Stats().Link
	if l.Seed != "probe" || math.Abs(l.BytesPerSecond/125e6-1) > 0.15 || math.Abs(l.CPUShare-0.5) > 0.1 {
		t.Fatalf("link after the probe: %+v", l)
	}
	if keys, _ := s.Keys(ctx, ""); len(keys) != 1 || keys[0] != "w" {
		t.Fatalf("keys %v", keys)
	}
	if got := chosen(t, s, "w"); got != "planes" {
		t.Fatalf("1 Gbit/s: %s", got)
	}
}

// A batch of tensors of one dtype and size class gets one codec, weighed
// once: the rest reuse the choice.
func TestAutoChoosesOncePerBatch(t *testing.T) {
	s := newStreamLink(t, 125e6, 0.5)
	var weighed atomic.Int64
	s.speed = func(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool) {
		weighed.Add(1)
		return fixedSpeeds(d, c, sample)
	}
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{300 << 10}}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := bf16Weights(300<<10 + i) // sizes differ a little, class alike
			m := tensor.Meta{DType: meta.DType, Shape: []int64{int64(len(raw) / 2)}}
			if err := s.WriteTensor(ctx, string(rune('a'+i)), m, raw, "auto"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	codecs := map[string]bool{}
	for i := range 12 {
		codecs[chosen(t, s, string(rune('a'+i)))] = true
	}
	if len(codecs) != 1 {
		t.Errorf("one batch, codecs %v", codecs)
	}
	if n := weighed.Load(); n > 3 { // three candidates, weighed once
		t.Errorf("speeds asked %d times for 12 writes", n)
	}
}

// A node on the loopback moves bytes with this machine's cores too.
func TestPeerShares(t *testing.T) {
	for url, want := range map[string]float64{
		"tcp://127.0.0.1:7000": 2, "ucx://localhost:1?transports=tcp": 2, "tcp://[::1]:7": 2,
		"tcp://10.0.0.5:7000": 1, "tcp://127.0.0.1:1,10.0.0.2:1": 2, "mem://x": 1,
	} {
		if got := peerShares(url); got != want {
			t.Errorf("%s: %v, want %v", url, got, want)
		}
	}
	a, ok := readCPU(true)
	if !ok {
		t.Skip("no process CPU time here")
	}
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	b, _ := readCPU(true)
	if v, ok := cpuShare(a, b); !ok || v <= 0 || v > 1.05 {
		t.Errorf("a busy loop: share %v %v", v, ok)
	}
}

// A link whose calls cost a fixed 2 ms each on top of their bytes at
// 10 Gbit/s (the probe sees both): a 2 MiB bf16 tensor moves faster as
// none than coded, the round trip being the same either way. Planes
// frames are smaller, so the same round trip moves fewer bytes; a link
// learnt as bytes over time would look slower after planes writes and
// make planes look better. The fit of latency and rate must not drift:
// auto keeps none.
func TestAutoLinkDoesNotDriftAfterPlanes(t *testing.T) {
	s := newStreamLinkLatency(t, 1.25e9, 1, 2*time.Millisecond)
	raw := bf16Weights(1 << 20)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	write := func(key, spec string) {
		t.Helper()
		if err := s.WriteTensor(ctx, key, meta, raw, spec); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		s.ResetStats() // (Stats, unlike Stat, moves nothing)
		for range 4 {
			write("w", "auto")
		}
		if st := s.Stats(); st.Codecs["none"] != 4 {
			t.Fatalf("round %d: auto chose %v (link %+v)", round, st.Codecs, st.Link)
		}
		for i := range 8 {
			write(fmt.Sprintf("p%d", i), "planes")
		}
	}
	if l := s.Stats().Link; math.Abs(l.BytesPerSecond/1.25e9-1) > 0.1 || math.Abs(l.LatencySeconds/2e-3-1) > 0.1 {
		t.Errorf("link %+v, want 1.25e9 B/s and 2 ms", l)
	}
}

// A write that ran beside other calls waited on them too: its time says
// nothing of how far the model was off, and only writes that ran alone
// teach a codec's factor.
func TestFactorsLearntFromWritesAlone(t *testing.T) {
	s := newStreamLink(t, 125e6, 0.5)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	raw := bf16Weights(1 << 20)
	if err := s.WriteTensor(ctx, "r", meta, raw, "none"); err != nil {
		t.Fatal(err)
	}
	taught := maps.Clone(s.factors.m) // a fixed codec's write alone teaches too
	if len(taught) != 1 {
		t.Fatalf("a none write alone taught %v", taught)
	}
	f, err := s.Fetch(ctx, "r") // a read in flight while the writes run
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := s.WriteTensor(ctx, fmt.Sprint("b", i), meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.DecodeInto(ctx, make([]byte, len(raw))); err != nil {
		t.Fatal(err)
	}
	f.Release()
	if !maps.Equal(s.factors.m, taught) {
		t.Fatalf("writes beside a read, and the read beside them, taught factors %v", s.factors.m)
	}
	if err := s.WriteTensor(ctx, "alone", meta, raw, "auto"); err != nil {
		t.Fatal(err)
	}
	if maps.Equal(s.factors.m, taught) {
		t.Fatalf("a write alone taught nothing: %v", s.factors.m)
	}
}

// Other work on the machine takes CPU from coding and moving alike: a
// busy loop beside processes that keep the other cores busy has all the
// CPU this process could get, not its share of the cores.
func TestCPUShareLeavesOutOtherWork(t *testing.T) {
	if _, ok := machineIdle(); !ok {
		t.Skip("no /proc/stat here")
	}
	for range runtime.NumCPU() - 1 {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	time.Sleep(20 * time.Millisecond)
	a, _ := readCPU(true)
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	b, _ := readCPU(true)
	if v, ok := cpuShare(a, b); !ok || v < 0.75 {
		t.Errorf("a busy loop beside %d busy processes: share %v %v", runtime.NumCPU()-1, v, ok)
	}
}

// A write beside others overlaps its coding with their moving, as a
// streamed write does with its own: on a slow link whose moving leaves
// the CPU free, a tensor too small to stream gets planes in a batch even
// where, alone, coding then sending it would cost what it saves.
func TestAutoOverlapsCodingInABatch(t *testing.T) {
	slowPlanes := func(d tensor.DType, c codec.Codec, sample []byte) (codec.Speed, bool) {
		if c.ID() == codec.IDPlanes {
			return codec.Speed{Encode: 0.3e9, Decode: 0.5e9}, true
		}
		return fixedSpeeds(d, c, sample)
	}
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}} // 1 MiB: not streamed
	raw := bf16Weights(1 << 19)
	for _, batch := range []bool{false, true} {
		s := newStreamLink(t, 125e6, 0)
		s.speed = slowPlanes
		if err := s.WriteTensor(ctx, "r", meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
		if batch {
			f, err := s.Fetch(ctx, "r") // another call in flight
			if err != nil {
				t.Fatal(err)
			}
			defer f.Release()
		}
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "none", true: "planes"}[batch]
		if got := chosen(t, s, "w"); got != want {
			t.Errorf("beside another call %v: %s, want %s", batch, got, want)
		}
	}
}

// A choice is reweighed when the link's time for such a tensor moves by a
// share of what was weighed, not when a link that takes next to nothing
// (memory) takes twice next to nothing.
func TestChoiceDriftIsOfTheWeighedTime(t *testing.T) {
	var cs choices
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}}
	raw := 1 << 20
	at := time.Unix(0, 0)
	none, _ := codec.ByName("none")
	// memory: 1 us to move, 100 us expected to write (coding)
	cs.put(meta, raw, choice{c: none, expected: 100e-6 / float64(raw), at: at, link: 1e-6})
	if _, why := cs.get(meta, raw, at, 3e-6); why != reuse {
		t.Error("memory's link at 3 us instead of 1 us reweighed")
	}
	// a network: 10 ms to move, 12 ms expected
	cs.put(meta, raw, choice{c: none, expected: 12e-3 / float64(raw), at: at, link: 10e-3})
	if _, why := cs.get(meta, raw, at, 11e-3); why != reuse {
		t.Error("a link 10% slower reweighed")
	}
	if _, why := cs.get(meta, raw, at, 20e-3); why != missDrift {
		t.Error("a link twice as slow kept the choice")
	}
}

// twoCoreSpeeds are bfloat16's speeds as bench-link's two-core machine
// measured them with a node on the same cores.
func twoCoreSpeeds(_ tensor.DType, c codec.Codec, _ []byte) (codec.Speed, bool) {
	switch c.Name() {
	case "none":
		return codec.Speed{Encode: 1.43e9, Decode: 6.98e9}, true
	case "planes":
		return codec.Speed{Encode: 5.77e8, Decode: 1.2e9}, true
	}
	return codec.Speed{}, false
}

// A link whose moving takes all of two cores, at the 2.5e8 B/s a shaped
// 10 Gbit/s loopback moves on them: the model expects planes to save 11%,
// a third of its time coding, and bench-link's planes there ran at 0.7x
// none. Every write gets none; on main the first got planes, and its
// writes, faster than the model expected on the fake clock (coding takes
// none of its time), made it look better still for the ones after.
func TestAutoKeepsNoneOnACPUBoundFastLink(t *testing.T) {
	s := newStreamLink(t, 2.5e8, 1)
	s.speed = twoCoreSpeeds
	raw := bf16Weights(8 << 20) // 16 MiB: streamed
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	for i := range 4 {
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		if got := chosen(t, s, "w"); got != "none" {
			t.Errorf("write %d: %s, want none (link %+v)", i, got, s.Stats().Link)
		}
	}
}
