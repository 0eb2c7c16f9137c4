package core

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/auto"
	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// fakeClock moves only when a fakeLink moves bytes.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeLink is a store across a link of a given rate and latency: every
// call advances the clock by what the transfer would take.
type fakeLink struct {
	store.Store
	clock   *fakeClock
	rate    float64 // bytes per second
	latency time.Duration
}

func (f *fakeLink) cost(n int) time.Duration {
	return f.latency + time.Duration(float64(n)/f.rate*1e9)
}

func (f *fakeLink) URL() string { return "tcp://fake:1" }

// Caps: none; every call goes through the link's costs above.
func (f *fakeLink) Caps() store.Caps { return store.Caps{} }

func (f *fakeLink) Put(ctx context.Context, key string, b []byte) error {
	f.clock.advance(f.cost(len(b)))
	return f.Store.Put(ctx, key, b)
}

func (f *fakeLink) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := f.Store.Get(ctx, key)
	f.clock.advance(f.cost(len(b)))
	return b, err
}

func (f *fakeLink) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	b, size, err := f.Store.Head(ctx, key, n)
	f.clock.advance(f.cost(len(b)))
	return b, size, err
}

func (f *fakeLink) Has(ctx context.Context, key string) (bool, error) {
	f.clock.advance(f.latency)
	return f.Store.Has(ctx, key)
}

func newFakeLink(t *testing.T, rate float64, latency time.Duration) (*Store, *fakeClock) {
	t.Helper()
	mem, err := store.Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(0, 0)}
	s := Wrap(&fakeLink{Store: mem, clock: clock, rate: rate, latency: latency})
	withChooser(s, clock.now, nil)
	t.Cleanup(func() { s.Close() })
	return s, clock
}

// withChooser gives s a chooser on the clock now (s's too), with
// fixedSpeeds and what set changes.
func withChooser(s *Store, now func() time.Time, set func(*auto.Options)) {
	o := auto.Defaults()
	o.Now, o.Speed = now, fixedSpeeds
	if set != nil {
		set(&o)
	}
	s.now, s.auto = now, auto.New(s.st.URL(), proberOf(s.st, s.st.Caps()), o)
}

// fixedSpeeds are codec speeds in the proportions of a few-core machine.
func fixedSpeeds(_ tensor.DType, c codec.Codec, _ []byte) (auto.Speed, bool) {
	switch c.Name() {
	case "none":
		return auto.Speed{Encode: 10e9, Decode: 10e9}, true
	case "planes":
		return auto.Speed{Encode: 1.5e9, Decode: 2e9}, true
	case "lz4":
		return auto.Speed{Encode: 1e9, Decode: 4e9}, true
	}
	return auto.Speed{}, false
}

func bf16Weights(n int) []byte { return testweights.NormalBF16(n, 5, 6) }

func TestStatsCountKnownOperations(t *testing.T) {
	const rate, lat = 1e9, time.Millisecond
	s, _ := newFakeLink(t, rate, lat)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}}
	raw := bf16Weights(1 << 19)
	if err := s.WriteTensor(ctx, "a", meta, raw, "none"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTensor(ctx, "b", meta, raw, "planes"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTensor(ctx, "c", meta, raw, "nope"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	sa, _ := s.Stat(ctx, "a")
	sb, _ := s.Stat(ctx, "b")
	dst := make([]byte, len(raw))
	if err := s.ReadTensor(ctx, "b", meta, dst); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadTensor(ctx, "missing", meta, dst); !errs.Is(err, errs.KeyNotFound) {
		t.Fatal(err)
	}
	s.Exists(ctx, "a")
	s.Keys(ctx, "")
	s.Delete(ctx, "a")

	st := s.Stats()
	wantOps := map[string]int64{OpWrite: 3, OpRead: 2, OpStat: 2, OpExists: 1, OpKeys: 1, OpDelete: 1}
	for k, v := range wantOps {
		if st.Ops[k] != v {
			t.Errorf("ops[%s] = %d, want %d (%v)", k, st.Ops[k], v, st.Ops)
		}
	}
	stored := sa.StoredBytes + sb.StoredBytes
	switch {
	case st.Errors != 2:
		t.Errorf("errors %d", st.Errors)
	case st.RawBytesWritten != 2*int64(len(raw)) || st.StoredBytesWritten != stored || st.WireBytesOut != stored:
		t.Errorf("written raw %d stored %d wire %d, want %d %d", st.RawBytesWritten, st.StoredBytesWritten, st.WireBytesOut, 2*len(raw), stored)
	case st.RawBytesRead != int64(len(raw)) || st.StoredBytesRead != sb.StoredBytes || st.WireBytesIn != sb.StoredBytes:
		t.Errorf("read raw %d stored %d wire %d", st.RawBytesRead, st.StoredBytesRead, st.WireBytesIn)
	case st.Codecs["none"] != 1 || st.Codecs["planes"] != 1 || len(st.Codecs) != 2:
		t.Errorf("codecs %v", st.Codecs)
	case math.Abs(st.Ratio-float64(2*len(raw))/float64(stored)) > 1e-9 || st.Ratio <= 1:
		t.Errorf("ratio %v", st.Ratio)
	}
	// The fake clock moves only with the link: two puts and one get.
	wantMove := (3*lat + time.Duration(float64(stored+sb.StoredBytes)/rate*1e9)).Seconds()
	if math.Abs(st.MoveSeconds-wantMove) > 1e-6 || st.EncodeSeconds != 0 {
		t.Errorf("move %v s, want %v; encode %v", st.MoveSeconds, wantMove, st.EncodeSeconds)
	}
	if st.ReadSeconds <= 0 || st.ReadGBps <= 0 || st.WriteGBps <= 0 || st.Link.Samples == 0 {
		t.Errorf("derived %+v", st)
	}
	s.ResetStats()
	if st := s.Stats(); st.Ops[OpWrite] != 0 || st.RawBytesWritten != 0 || len(st.Codecs) != 0 || st.Link.Samples == 0 {
		t.Errorf("after reset %+v", st)
	}
}

// autoOver writes a tensor with "auto" n times over a fake link (which
// does not stream: no probe), a second apart so that each write weighs
// again with the link as learnt from the writes before, and returns the
// codec each write chose.
func autoOver(t *testing.T, rate float64, d tensor.DType, raw []byte, n int) []string {
	s, clock := newFakeLink(t, rate, 100*time.Microsecond)
	meta := tensor.Meta{DType: d, Shape: []int64{int64(len(raw) / d.Size())}}
	var got []string
	for i := range n {
		clock.advance(time.Second)
		if err := s.WriteTensor(ctx, "w", meta, raw, "auto"); err != nil {
			t.Fatal(err)
		}
		st, _ := s.Stat(ctx, "w")
		got = append(got, st.Codec)
		if i == n-1 && s.Stats().Codecs[st.Codec] == 0 {
			t.Fatalf("stats miss the chosen codec: %v", s.Stats().Codecs)
		}
	}
	return got
}

func TestAutoFollowsTheLink(t *testing.T) {
	raw := bf16Weights(1 << 20)
	// 100 Gbit/s: coding costs more than the bytes it saves.
	for i, c := range autoOver(t, 12.5e9, tensor.BFloat16, raw, 6) {
		if c != "none" {
			t.Fatalf("fast link, write %d: %s", i, c)
		}
	}
	// 1 Gbit/s: once the estimate has learnt the link, planes.
	slow := autoOver(t, 125e6, tensor.BFloat16, raw, 8)
	if slow[len(slow)-1] != "planes" {
		t.Fatalf("slow link: %v", slow)
	}
	// Integers never get planes.
	ints := make([]byte, 2<<20)
	for i := range ints {
		ints[i] = byte(i % 7)
	}
	for _, c := range autoOver(t, 125e6, tensor.Int32, ints, 6) {
		if c == "planes" {
			t.Fatal("int32 got planes")
		}
	}
}
