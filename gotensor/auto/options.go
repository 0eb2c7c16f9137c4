// Package auto chooses the codec of writes whose spec is "auto": the
// lossless codec with the least expected write+read time to one store,
// from a model of its link, this machine's codec speeds and what the
// store's writes and reads took. docs/AUTO.md defines its terms and says
// which benchmark row each mechanism answers to.
package auto

import (
	"os"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Options are a Chooser's clock, CPU sampler and codec speeds, and its
// tuning constants. Defaults gives every one; New takes them as given.
type Options struct {
	// Now is the clock transfers are timed by (default time.Now).
	Now func() time.Time
	// CPU samples this process's CPU time and, withIdle, the machine's
	// idle time (default ReadCPU).
	CPU func(withIdle bool) (CPUTimes, bool)
	// Speed gives a codec's speed on a dtype, measuring it on sample when
	// not known yet; false when it cannot be known (default nil: measured
	// once per process, see SpeedMin).
	Speed func(d tensor.DType, c codec.Codec, sample []byte) (Speed, bool)
	// Trace, when not nil, gets a line per candidate of every weigh
	// (default os.Stderr where GOTENSOR_AUTO_TRACE is set, else nil).
	Trace func(line string)

	// Candidates are the codecs weighed, simplest first; planes only for
	// floating-point dtypes (default none, planes, lz4).
	Candidates []codec.Codec
	// Seeds are the link's first estimate by URL scheme, used until
	// transfers or a probe replace it; an unknown scheme takes "tcp"'s
	// (default: memory, disk, 10 Gbit/s and 100 Gbit/s networks).
	Seeds map[string]Link

	// LinkWeight is a busy period's weight in the link fit and the CPU
	// share (default 0.1); LinkFaster its weight when it ran faster than
	// the fit expected (default 0.5).
	LinkWeight, LinkFaster float64
	// LinkPrior is the weight the seed's two points, at 0 and
	// LinkSeedBytes bytes, keep in the fit for good (default 0.01, 1 MiB).
	LinkPrior     float64
	LinkSeedBytes int64
	// LinkBulk is the least bytes of a busy period that is fitted as bulk
	// rather than as a round trip (default 256 KiB).
	LinkBulk int64

	// The probe streams ProbePart-byte parts for ProbeTime and at least
	// ProbeMin bytes, at most ProbeMax (default 1 MiB, 30 ms, 4 and 32 MiB).
	ProbePart, ProbeMin, ProbeMax int64
	ProbeTime                     time.Duration

	// A codec's speed is measured on at least SpeedMin and at most
	// SpeedMax bytes of a tensor, the fastest of SpeedRuns runs each way
	// (default 1 MiB, 16 MiB, 3).
	SpeedMin, SpeedMax, SpeedRuns int
	// SampleBytes is the most bytes of a tensor coded for a codec's
	// ratio (default 64 KiB).
	SampleBytes int
	// CodeMin is the least bytes "auto" codes (default 16 KiB).
	CodeMin int

	// Gain is the least share of a simpler codec's expected time another
	// must save to replace it, plus CodingGain for each share of its own
	// time that is coding (default 0.1, 0.1); ObservedGain replaces both
	// where both codecs are observed (default 0.05). Keep is the
	// hysteresis either side of that margin (default 0.05).
	Gain, CodingGain, ObservedGain, Keep float64
	// ChoiceTTL is how long a choice is reused for its kind (default 1 s).
	ChoiceTTL time.Duration
	// Drift is the share by which a factor must move for its kind to be
	// weighed again (default 0.25).
	Drift float64

	// FactorWeight is a transfer's weight in its factor (default 0.5),
	// kept within [MinFactor, MaxFactor] (default 0.25, 8) and forgotten
	// after FactorTTL unobserved (default 20 s); a transfer the model
	// expects to take less than FactorMin teaches nothing (default 5 ms).
	FactorWeight, MinFactor, MaxFactor float64
	FactorTTL, FactorMin               time.Duration
}

// Defaults are the Options gotensor runs with.
func Defaults() Options {
	none, _ := codec.ByName("none")
	planes, _ := codec.ByName("planes")
	lz4, _ := codec.ByName("lz4")
	o := Options{
		Now: time.Now, CPU: ReadCPU,
		Candidates: []codec.Codec{none, planes, lz4},
		Seeds: map[string]Link{
			"mem":  {BytesPerSecond: 20e9, LatencySeconds: 1e-6, CPUShare: 1, Seed: "memory"},
			"file": {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 0.5, Seed: "disk"},
			"tcp":  {BytesPerSecond: 1.25e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "tcp 10 Gbit/s"},
			"ucx":  {BytesPerSecond: 12.5e9, LatencySeconds: 10e-6, CPUShare: 0.5, Seed: "ucx 100 Gbit/s"},
		},
		LinkWeight: 0.1, LinkFaster: 0.5, LinkPrior: 0.01, LinkSeedBytes: 1 << 20, LinkBulk: 256 << 10,
		ProbePart: 1 << 20, ProbeMin: 4 << 20, ProbeMax: 32 << 20, ProbeTime: 30 * time.Millisecond,
		SpeedMin: 1 << 20, SpeedMax: 16 << 20, SpeedRuns: 3, SampleBytes: 64 << 10, CodeMin: 16 << 10,
		Gain: 0.1, CodingGain: 0.1, ObservedGain: 0.05, Keep: 0.05, ChoiceTTL: time.Second, Drift: 0.25,
		FactorWeight: 0.5, MinFactor: 0.25, MaxFactor: 8, FactorTTL: 20 * time.Second, FactorMin: 5 * time.Millisecond,
	}
	if os.Getenv("GOTENSOR_AUTO_TRACE") != "" {
		o.Trace = func(line string) { os.Stderr.WriteString(line + "\n") }
	}
	return o
}
