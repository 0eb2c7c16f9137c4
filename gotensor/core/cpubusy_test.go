package core

import (
	"context"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Coding's CPU is what the process used while it coded, not its wall time
// times the workers: workers that waited for cores moving held (a node
// receiving on the same two cores) did not take them, and counting them
// busy would take moving's CPU away from the CPU share.
func TestCodingCPUIsWhatTheProcessUsed(t *testing.T) {
	a := cpuTimes{busy: 1e9}
	wall := 10 * time.Millisecond
	starved := cpuTimes{busy: a.busy + uint64(8*time.Millisecond)} // two workers, 8 ms of CPU in 10 ms
	if got := codingCPUOf(a, starved, true, wall, 2); got != uint64(8*time.Millisecond) {
		t.Errorf("starved workers: %v, want 8ms", time.Duration(got))
	}
	busy := cpuTimes{busy: a.busy + uint64(30*time.Millisecond)} // sending beside them too
	if got := codingCPUOf(a, busy, true, wall, 2); got != uint64(20*time.Millisecond) {
		t.Errorf("at most wall x workers: %v", time.Duration(got))
	}
	if got := codingCPUOf(a, starved, false, wall, 2); got != uint64(20*time.Millisecond) {
		t.Errorf("unread: wall x workers, got %v", time.Duration(got))
	}
}

// starvedCPU is a fake CPU and clock for a streamLink store: the process
// is busy share of the time the link moves bytes, and each reading of the
// clock takes wall time (step) in which this process uses no CPU and the
// machine is not idle, as coding workers wait while moving (a node's, on
// the same cores) holds the cores: an encoded piece, timed between two
// readings, took step and none of this process's CPU.
type starvedCPU struct {
	clock  *fakeClock
	share  float64
	step   time.Duration
	start  time.Time
	busy   time.Duration // the link's moving so far, times share
	waited time.Duration // steps so far: the machine busy elsewhere
}

func (c *starvedCPU) read(bool) (cpuTimes, bool) {
	return cpuTimes{busy: uint64(c.busy), total: uint64(c.clock.now().Sub(c.start) - c.waited)}, true
}

func (c *starvedCPU) now() time.Time {
	c.clock.advance(c.step)
	c.waited += c.step
	return c.clock.now()
}

// starvedSink counts its parts' link time as busy CPU.
type starvedSink struct {
	store.PartSink
	cpu  *starvedCPU
	rate float64
}

func (s *starvedSink) WritePart(off int64, b []byte) error {
	s.cpu.busy += time.Duration(s.cpu.share * float64(len(b)) / s.rate * 1e9)
	return s.PartSink.WritePart(off, b)
}

type starvedLink struct {
	*streamLink
	cpu *starvedCPU
}

func (f *starvedLink) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	sink, err := f.streamLink.PutStream(ctx, key)
	return &starvedSink{PartSink: sink, cpu: f.cpu, rate: f.rate}, err
}

// Writes over a link whose moving keeps half the CPU busy, while the
// encoding of each piece (none's copy) waits for cores it does not get:
// the CPU share stays near what moving took. Taking the encoding's
// wall time times the workers as coding's CPU would leave moving next to
// nothing, and coding would look free to overlap with sending.
func TestCPUShareOfStarvedCoding(t *testing.T) {
	mem := store.NewMem("mem://", 0)
	clock := &fakeClock{t: time.Unix(0, 0)}
	sl := &streamLink{fakeLink: &fakeLink{Store: mem, clock: clock, rate: 1e9, latency: 100 * time.Microsecond}, mem: mem}
	cpu := &starvedCPU{clock: clock, share: 0.5, step: 2 * time.Millisecond, start: clock.now()}
	s := Wrap(&starvedLink{streamLink: sl, cpu: cpu})
	s.now, s.speed, s.cpu = cpu.now, fixedSpeeds, cpu.read
	t.Cleanup(func() { s.Close() })
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}}
	raw := bf16Weights(8 << 20)
	for range 20 {
		if err := s.WriteTensor(ctx, "w", meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
	}
	if l := s.Stats().Link; l.CPUShare < 0.4 {
		t.Fatalf("CPU share %.2f after none writes whose moving took half the CPU", l.CPUShare)
	}
}

// A streamed write reads the machine's idle time (a read and parse of
// /proc/stat, tens of microseconds on a loaded machine) at its two ends
// only; around each encoded piece it reads the process's CPU time alone.
func TestStreamedWriteReadsIdleTimeAtItsEndsOnly(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 256<<10
	s := newStreamLink(t, 1e9, 0.5)
	s.probeOnce(ctx) // the link's probe, before a store's first write, is not the write's
	fake := s.cpu
	var withIdle, without int
	s.cpu = func(idle bool) (cpuTimes, bool) {
		if idle {
			withIdle++
		} else {
			without++
		}
		return fake(idle)
	}
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{2 << 20}} // 4 MiB: several pieces
	for _, spec := range []string{"none", "planes"} {
		withIdle, without = 0, 0
		if err := s.WriteTensor(ctx, "w", meta, bf16Weights(2<<20), spec); err != nil {
			t.Fatal(err)
		}
		if withIdle > 2 || without < 4 {
			t.Errorf("%s: %d reads with the idle time, %d without; want at most 2, and 2 per piece", spec, withIdle, without)
		}
	}
}
