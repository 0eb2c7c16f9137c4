package core

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

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
	s.now = clock.now
	s.speed = fixedSpeeds
	t.Cleanup(func() { s.Close() })
	return s, clock
}

// fixedSpeeds are codec speeds in the proportions of a few-core machine.
func fixedSpeeds(_ tensor.DType, c codec.Codec, _ []byte) (codec.Speed, bool) {
	switch c.Name() {
	case "none":
		return codec.Speed{Encode: 10e9, Decode: 10e9}, true
	case "planes":
		return codec.Speed{Encode: 1.5e9, Decode: 2e9}, true
	case "lz4":
		return codec.Speed{Encode: 1e9, Decode: 4e9}, true
	}
	return codec.Speed{}, false
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

// autoOver writes a bfloat16 tensor with "auto" n times over a fake link
// and returns the codec each write chose.
func autoOver(t *testing.T, rate float64, d tensor.DType, raw []byte, n int) []string {
	s, _ := newFakeLink(t, rate, 100*time.Microsecond)
	meta := tensor.Meta{DType: d, Shape: []int64{int64(len(raw) / d.Size())}}
	var got []string
	for i := range n {
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

// Transfers in flight together count the link busy once, not once each:
// two overlapping transfers are one busy period of their bytes.
func TestLinkEstimateCountsOverlapOnce(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	e := newLinkEstimate("tcp://x:1", clock.now)
	var got []fitSums
	for _, overlap := range []bool{false, true} {
		e.fit = [2][2]fitSums{}
		a := e.begin()
		clock.advance(time.Second)
		if overlap {
			b := e.begin() // a second transfer while the first is in flight
			clock.advance(time.Second)
			e.end(toStore, 1<<20, a)
			clock.advance(time.Second)
			e.end(toStore, 1<<20, b) // 2 MiB in 3 s of busy link, not in 5 s of transfers
		} else {
			clock.advance(2 * time.Second)
			e.end(toStore, 2<<20, a)
		}
		got = append(got, e.fit[toStore][1])
	}
	if got[0] != got[1] || math.Abs(got[0].t-linkWeight*3) > 1e-9 || got[0].n != linkWeight*(2<<20) {
		t.Fatalf("alone %+v, overlapping %+v", got[0], got[1])
	}
}

// The link is fitted as time = latency + bytes/rate over transfers of all
// sizes, each way on its own; busy periods that overlapped coding, or a transfer marked as not
// saying anything of the link, are left out.
func TestLinkEstimateFitsLatencyAndRate(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	e := newLinkEstimate("tcp://x:1", clock.now) // seeded 1.25 GB/s, 100 us
	const lat, rate = 2e-3, 500e6                // writes
	const readLat, readRate = 1e-3, 2e9          // reads: a node sends faster than it takes
	moveWay := func(d direction, n int64) {
		l, r := lat, rate
		if d == fromStore {
			l, r = readLat, readRate
		}
		start := e.begin()
		clock.advance(time.Duration((l + float64(n)/r) * 1e9))
		e.end(d, n, start)
	}
	for i := range 40 {
		moveWay(toStore, int64(64<<10)<<(i%6)) // 64 KiB to 2 MiB
		moveWay(fromStore, int64(64<<10)<<(i%6))
	}
	l := e.estimate()
	if math.Abs(l.LatencySeconds/lat-1) > 0.05 || math.Abs(l.BytesPerSecond/rate-1) > 0.05 ||
		math.Abs(l.ReadLatencySeconds/readLat-1) > 0.05 || math.Abs(l.ReadBytesPerSecond/readRate-1) > 0.05 {
		t.Fatalf("fit %+v, want latency %v rate %v, reads %v %v", l, lat, rate, readLat, readRate)
	}
	move := func(n int64) { moveWay(toStore, n) }
	before := e.fit
	e.codingBegins()
	move(1 << 20)
	e.codingEnds()
	start := e.begin()
	clock.advance(time.Second)
	e.end(toStore, -1, start)
	if e.fit != before {
		t.Fatal("a period that overlapped coding, or a marked transfer, was fitted")
	}
}

// A codec not yet written with takes none's factor (what slowed none's
// writes, a link slower than its estimate, slows every codec's), else the
// model's word: a coded codec slower than expected (for its coding) must
// not make none look as slow. Each write moves a factor halfway (the
// first from what it was weighed with), within bounds; a move past choiceDrift is reported so
// that the choice is weighed again; after factorTTL a factor is
// forgotten.
func TestFactorsOfUnobservedCodecs(t *testing.T) {
	var f factors
	none, _ := codec.ByName("none")
	planes, _ := codec.ByName("planes")
	lz4, _ := codec.ByName("lz4")
	kind := choiceKey{tensor.BFloat16, 25}
	t0 := time.Unix(0, 0)
	if f.get(kind, planes, false, true, t0) != 0 {
		t.Fatal("nothing observed: 0 (the model's word)")
	}
	if !f.observe(kind, planes, false, 3, 1, t0) || f.get(kind, planes, false, true, t0) != 2 {
		t.Fatalf("first write: planes %v", f.get(kind, planes, false, true, t0))
	}
	if f.get(kind, none, false, true, t0) != 0 || f.get(kind, lz4, false, true, t0) != 0 || f.get(choiceKey{tensor.BFloat16, 24}, planes, false, true, t0) != 0 {
		t.Fatal("a coded codec's factor is its own and its kind's")
	}
	if f.observe(kind, planes, false, 2.9, 1, t0) {
		t.Fatal("a move within choiceDrift reported")
	}
	if !f.observe(kind, planes, false, 1, 1, t0) || math.Abs(f.get(kind, planes, false, true, t0)-1.725) > 1e-9 {
		t.Fatalf("halfway to 1: %v", f.get(kind, planes, false, true, t0))
	}
	f.observe(kind, none, false, 1.5, 1, t0)
	if f.get(kind, lz4, false, true, t0) != 1.25 || f.get(kind, planes, false, true, t0) != 1.725 {
		t.Fatalf("none's factor for the untried: lz4 %v, planes keeps its own %v", f.get(kind, lz4, false, true, t0), f.get(kind, planes, false, true, t0))
	}
	f.observe(kind, lz4, false, 2.25, 1, t0) // from none's 1.25, as lz4 was weighed
	if f.get(kind, lz4, false, true, t0) != 1.75 {
		t.Fatalf("lz4's first write moves it from none's factor: %v", f.get(kind, lz4, false, true, t0))
	}
	f.observe(kind, none, false, 1e6, 1, t0) // clamped
	if f.get(kind, none, false, true, t0) > maxFactor {
		t.Fatal(f.get(kind, none, false, true, t0))
	}
	if later := t0.Add(factorTTL); f.get(kind, planes, false, true, later) != 0 {
		t.Fatal("a factor not observed for factorTTL is forgotten")
	}
	if f.observe(kind, planes, false, 1.5, 1, t0.Add(factorTTL)); f.get(kind, planes, false, true, t0.Add(factorTTL)) != 1.25 {
		t.Fatal("after factorTTL the next write moves the factor from 1")
	}
}

// A coded codec's write that took less than expected shows a link faster
// than its estimate (its speeds are the fastest of three runs alone), not
// cheaper coding: its factor weighs no less than none's, or 1, where that
// is under 1, so that a low link estimate (a probe on a busy machine)
// does not make planes look better than none from then on. Where none
// has a factor of its own too, planes' own is taken as it is: none's then
// shows what the link estimate was off by.
func TestFactorsOfCodingNoLessThanNone(t *testing.T) {
	var f factors
	none, _ := codec.ByName("none")
	planes, _ := codec.ByName("planes")
	kind := choiceKey{tensor.BFloat16, 26}
	t0 := time.Unix(0, 0)
	f.observe(kind, planes, false, 0.5, 1, t0) // took half what was expected: halfway, 0.75
	if got := f.get(kind, planes, false, true, t0); got != 1 {
		t.Fatalf("planes faster than expected, none unobserved: factor %v, want 1", got)
	}
	lz4, _ := codec.ByName("lz4")
	f.observe(kind, none, false, 0.6, 1, t0) // none too: 0.8
	if got := f.get(kind, planes, false, true, t0); got != 0.75 {
		t.Fatalf("planes 0.75, none 0.8, both their own: factor %v, want planes' own", got)
	}
	f.observe(kind, none, false, 2, 0.8, t0) // none slower than expected: 1.65
	if got := f.get(kind, planes, false, true, t0); got != 0.75 {
		t.Fatalf("planes 0.75, none 1.65, both their own: factor %v, want planes' own", got)
	}
	if got := f.get(kind, planes, false, false, t0); got != 1 {
		t.Fatalf("planes 0.75, none 1.65, weighed for a batch: factor %v, want 1 (learnt alone, floored)", got)
	}
	f.observe(kind, lz4, false, 0.3, 1, t0)                                     // lz4 weighed from none's 1.65, moved to 0.975
	f.m[factorKey{kind, codec.IDNone, false}] = factor{0.8, t0.Add(-factorTTL)} // none's forgotten
	if got := f.get(kind, lz4, false, true, t0); got != 1 {
		t.Fatalf("lz4 0.975, none unobserved: factor %v, want 1", got)
	}
	f.observe(kind, planes, false, 3.25, 1, t0) // slower than expected: its own, 2
	if got := f.get(kind, planes, false, true, t0); got != 2 {
		t.Fatalf("planes slower than expected: factor %v, want its own 2", got)
	}
}

// A store's first transfers run slower than its later ones (a node's fresh
// memory, a cold heap): the estimate must reach the link's rate within a
// few transfers once they speed up, and still follow a link that truly
// slows down.
func TestLinkEstimateRecoversFromAColdStart(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	e := newLinkEstimate("tcp://x:1", clock.now)
	const n = 45 << 20
	move := func(rate float64) {
		start := e.begin()
		clock.advance(time.Duration(float64(n) / rate * 1e9))
		e.end(toStore, n, start)
	}
	e.reseed(32<<20, 112*time.Millisecond, 100*time.Microsecond, -1) // a cold probe: 300 MB/s
	move(250e6)
	move(300e6) // two cold writes
	const fast = 1.1e9
	for range 5 {
		move(fast)
	}
	rate := func() float64 { return n / e.expected(toStore, n) } // what the fit gives a transfer of n
	if got := rate(); got < 0.9*fast {
		t.Fatalf("after 5 transfers at %.3g B/s the estimate is %.3g", fast, got)
	}
	const slow = 400e6 // the link now carries less
	for range 25 {
		move(slow)
	}
	if got := rate(); math.Abs(got/slow-1) > 0.1 {
		t.Fatalf("after 25 transfers at %.3g B/s the estimate is %.3g", slow, got)
	}
}

// Round trips that move nothing (stats, deletes, small tensors) must not
// decay the bulk transfers away: after many of them the rate is still the
// one bulk transfers showed, and their latency is learnt.
func TestLinkEstimateKeepsTheRateThroughRoundTrips(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	e := newLinkEstimate("tcp://x:1", clock.now) // seeded 1.25 GB/s, 100 us
	const rate, rtt = 400e6, 300 * time.Microsecond
	const n = 8 << 20
	for range 20 {
		start := e.begin()
		clock.advance(rtt + time.Duration(float64(n)/rate*1e9))
		e.end(fromStore, n, start)
	}
	for range 300 {
		start := e.begin()
		clock.advance(rtt)
		e.end(fromStore, 0, start)
	}
	l := e.estimate()
	if math.Abs(l.ReadBytesPerSecond/rate-1) > 0.05 || math.Abs(l.ReadLatencySeconds/rtt.Seconds()-1) > 0.2 {
		t.Fatalf("reads fitted %.3g B/s + %.3g s, want %.3g + %.3g", l.ReadBytesPerSecond, l.ReadLatencySeconds, rate, rtt.Seconds())
	}
}
