// Package auto chooses the codec of writes whose spec is "auto": the
// lossless codec with the least expected write+read time to one store,
// from a model of its link, this machine's codec speeds and what the
// store's writes and reads took. docs/AUTO.md defines its terms and names
// the benchmark row each of its mechanisms answers to.
package auto

import (
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Options are a Chooser's clock, CPU sampler and codec speeds, and its
// tuning constants; Defaults has each one's default.
type Options struct {
	Now func() time.Time        // the clock transfers are timed by (time.Now)
	CPU func() (CPUTimes, bool) // this process's and the machine's CPU time (ReadCPU)
	// Speed is a codec's speed on a dtype, measured on sample where not
	// known yet; false where it cannot be known (nil: measured once per
	// process, see SpeedMin).
	Speed func(d tensor.DType, c codec.Codec, sample []byte) (Speed, bool)

	// Candidates are the codecs weighed, simplest first; planes for
	// floating-point dtypes only (none, planes, lz4).
	Candidates []codec.Codec
	// Seeds are the link's first estimate by URL scheme; another scheme
	// takes tcp's (memory, disk, 10 and 100 Gbit/s networks).
	Seeds map[string]Link
	// LinkWeight is a busy period's weight in the link fit and the CPU
	// share (0.1), LinkFaster its weight in the fit where it ran faster
	// than the fit expected (0.5). LinkPrior is the weight the seed's
	// points, at 0 and LinkSeedBytes bytes, keep for good (0.01, 1 MiB).
	// LinkBulk is the least bytes of a period fitted as bulk, not as a
	// round trip (256 KiB).
	LinkWeight, LinkFaster, LinkPrior float64
	LinkSeedBytes, LinkBulk           int64
	// The probe streams ProbePart-byte parts for ProbeTime, and at least
	// ProbeMin bytes, at most ProbeMax (1 MiB, 30 ms, 4 MiB, 32 MiB).
	ProbePart, ProbeMin, ProbeMax int64
	ProbeTime                     time.Duration
	// A codec's speed is measured on SpeedMin to SpeedMax bytes of a
	// tensor, the fastest of SpeedRuns runs each way (1 MiB, 16 MiB, 3).
	// SampleBytes is the most bytes of a tensor coded for a ratio (64
	// KiB); CodeMin the least bytes "auto" codes, or learns from (16 KiB).
	SpeedMin, SpeedMax, SpeedRuns, SampleBytes, CodeMin int
	// Gain is the least share of the simpler codec's expected time a codec
	// must save to replace it, plus CodingGain for each share of its own
	// time that is coding (0.1, 0.1); ObservedGain replaces both where
	// both codecs are observed (0.05). Keep is the hysteresis about that
	// margin (0.05).
	Gain, CodingGain, ObservedGain, Keep float64
	// ChoiceTTL is how long a kind's choice is reused (1 s). FactorWeight
	// is a transfer's weight in its factor (0.5), which is kept within
	// [MinFactor, MaxFactor] (0.25, 8) and forgotten after FactorTTL
	// unobserved (20 s); a transfer the model expects to take under
	// FactorMin teaches nothing (5 ms). A factor that moves by more than
	// Drift of itself has its kind weighed again (0.25).
	ChoiceTTL, FactorTTL, FactorMin           time.Duration
	FactorWeight, MinFactor, MaxFactor, Drift float64
}

// Defaults are the Options gotensor runs with.
func Defaults() Options {
	planes, _ := codec.ByName("planes")
	lz4, _ := codec.ByName("lz4")
	return Options{
		Now: time.Now, CPU: ReadCPU, Candidates: []codec.Codec{none, planes, lz4},
		Seeds: map[string]Link{
			"mem":  {BytesPerSecond: 20e9, LatencySeconds: 1e-6, CPUShare: 1, Seed: "memory"},
			"file": {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 0.5, Seed: "disk"},
			"tcp":  {BytesPerSecond: 1.25e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "tcp 10 Gbit/s"},
			"ucx":  {BytesPerSecond: 12.5e9, LatencySeconds: 10e-6, CPUShare: 0.5, Seed: "ucx 100 Gbit/s"},
			// a Redis or Valkey server or cluster: TCP, and a server's copy of each value
			"redis":   {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "redis over tcp"},
			"rediss":  {BytesPerSecond: 1e9, LatencySeconds: 150e-6, CPUShare: 1, Seed: "redis over tls"},
			"valkey":  {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "valkey over tcp"},
			"valkeys": {BytesPerSecond: 1e9, LatencySeconds: 150e-6, CPUShare: 1, Seed: "valkey over tls"},
		},
		LinkWeight: 0.1, LinkFaster: 0.5, LinkPrior: 0.01, LinkSeedBytes: 1 << 20, LinkBulk: 256 << 10,
		ProbePart: 1 << 20, ProbeMin: 4 << 20, ProbeMax: 32 << 20, ProbeTime: 30 * time.Millisecond,
		SpeedMin: 1 << 20, SpeedMax: 16 << 20, SpeedRuns: 3, SampleBytes: 64 << 10, CodeMin: 16 << 10,
		Gain: 0.1, CodingGain: 0.1, ObservedGain: 0.05, Keep: 0.05, ChoiceTTL: time.Second, Drift: 0.25,
		FactorWeight: 0.5, MinFactor: 0.25, MaxFactor: 8, FactorTTL: 20 * time.Second, FactorMin: 5 * time.Millisecond,
	}
}
