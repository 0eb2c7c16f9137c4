// Package auto chooses the codec of writes whose spec is "auto": the
// lossless codec with the least expected write+read time to one store,
// from a model of its link, this machine's codec speeds and what the
// store's writes and reads took. docs/AUTO.md defines its terms and names
// the benchmark row each of its mechanisms answers to.
package auto

import (
	"context"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Spec is the codec spec that leaves the codec to the Chooser.
const Spec = "auto"

var none, _ = codec.ByName("none")

// Options are a Chooser's clock, CPU sampler and codec speeds, and its
// tuning constants; Defaults has each one's default.
type Options struct {
	Now func() time.Time        // the clock transfers are timed by (time.Now)
	CPU func() (CPUTimes, bool) // this process's and the machine's CPU time (ReadCPU)
	// Speed is a codec's speed on a dtype, measured on sample where not
	// known yet, and whether it is known (nil: measured once per process).
	Speed func(d tensor.DType, c codec.Codec, sample []byte) (Speed, bool)

	// Candidates are the codecs weighed, simplest first; planes for
	// floating-point dtypes only (none, planes, lz4).
	Candidates []codec.Codec
	// Seeds are the link's first estimate by URL scheme; another scheme
	// takes tcp's (memory, disk, 10 and 100 Gbit/s networks).
	Seeds map[string]Link
	// LinkWeight is a busy period's weight in the link fit and the CPU
	// share (0.1), LinkFaster its weight where it ran faster than the fit
	// expected (0.5), LinkPrior the weight the seed's points at 0 and
	// LinkSeedBytes bytes keep for good (0.01, 1 MiB), LinkBulk the least
	// bytes of a period fitted as bulk, not as a round trip (256 KiB).
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
	// time that is coding (0.1, 0.1); ObservedGain replaces both where both
	// are observed (0.05); Keep is the hysteresis about that margin (0.05).
	// A codec that shrinks the sample by less than Gain is not weighed.
	Gain, CodingGain, ObservedGain, Keep float64
	// ChoiceTTL is how long a kind's choice is reused (1 s). FactorWeight is
	// a transfer's weight in its factor (0.5), kept within [MinFactor,
	// MaxFactor] (0.25, 8) and forgotten after FactorTTL unobserved (20 s);
	// a transfer the model expects under FactorMin teaches nothing (5 ms);
	// a factor moving by more than Drift of itself re-weighs its kind (0.25).
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

// Chooser resolves the codec spec of every write to one store, choosing
// where it is "auto", and learns from what the store's writes, reads and
// transfers took. Its user calls Choose per write and Read per read, Done
// on each, and Begin and End around every transfer. Safe for concurrent use.
type Chooser struct {
	o        Options
	url      string
	prober   Prober
	probed   sync.Once
	weighing sync.Mutex // held while a kind is weighed: a batch's writes of a kind take the first's choice

	mu      sync.Mutex // guards what follows
	link    linkFit
	factors map[factorKey]factor
	choices map[kind]choice
	stats   Stats
	active  int    // writes and reads in flight
	started uint64 // writes and reads begun
}

// kind is what choices and factors are kept per: a dtype and a size class.
type kind struct {
	d    tensor.DType
	size int
}

func kindOf(d tensor.DType, raw int) kind { return kind{d, bits.Len(uint(raw))} }

type choice struct {
	c     codec.Codec
	at    time.Time
	stale bool // a factor it was weighed with has since moved past Drift
}

// Stats count how "auto" chose for writes of CodeMin bytes or more: each
// reused its kind's recent choice or weighed the candidates, the kind being
// new, its choice expired or a factor it was weighed with moved. Flips are
// weighs that changed the codec, Samples candidates coded on a sample.
type Stats struct {
	Reused  int64 `json:"reused"`
	Weighed int64 `json:"weighed"`
	New     int64 `json:"new"`
	Expired int64 `json:"expired"`
	Factor  int64 `json:"factor"`
	Flips   int64 `json:"flips"`
	Samples int64 `json:"samples"`
}

// New is a Chooser for the store at url, whose link p probes (nil: none).
func New(url string, p Prober, o Options) *Chooser {
	c := &Chooser{o: o, url: url, prober: p, factors: map[factorKey]factor{}, choices: map[kind]choice{}}
	if c.o.Speed == nil {
		c.o.Speed = c.measuredSpeed
	}
	c.link = newLinkFit(url, &c.o)
	return c
}

func (c *Chooser) locked(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// Write is one write's codec and its parameter; report it with Done.
type Write struct {
	Codec codec.Codec
	Param uint32
	c     *Chooser // nil: nothing to learn
	call  call
	k     kind
	raw   int
	m     model // what the write is measured against
	chose time.Time
	cpu   CPUTimes // at the choice, where cpuOK
	cpuOK bool
}

// Choose resolves spec for a write of a tensor whose bytes are raw (nil:
// staged part by part), streamed or not. "auto" gives, without the bytes,
// planes where it codes the dtype, else none; none under CodeMin; else the
// candidate of least expected write+read time, once per kind per ChoiceTTL.
// A store across a link is probed first, so that writes weigh a measured link.
func (c *Chooser) Choose(ctx context.Context, spec string, meta tensor.Meta, raw []byte, streamed bool) (w Write, err error) {
	switch {
	case spec != Spec:
		w.Codec, w.Param, err = codec.Parse(spec)
	case raw == nil:
		w.Codec = none
		if planes, err := codec.ByName("planes"); err == nil && planes.Supports(meta.DType) {
			w.Codec = planes
		}
	case len(raw) < c.o.CodeMin:
		w.Codec = none
	}
	if err != nil || raw == nil || len(raw) < c.o.CodeMin && !streamed {
		return w, err // nothing to weigh, nor to learn (see learn)
	}
	w.c, w.call, w.k, w.raw = c, c.begin(), kindOf(meta.DType, len(raw)), len(raw)
	if len(raw) >= c.o.CodeMin && c.prober != nil {
		c.probed.Do(func() { c.probe(ctx) })
	}
	if w.Codec == nil {
		w.Codec = c.choose(meta, raw, streamed)
	}
	if streamed && w.Codec.ID() == codec.IDNone {
		w.cpu, w.cpuOK = c.o.CPU()
	}
	w.m, w.chose = c.model(streamed), c.o.Now()
	return w, nil
}

// choose reuses the choice for a tensor's kind or weighs the candidates.
func (c *Chooser) choose(meta tensor.Meta, raw []byte, streamed bool) codec.Codec {
	c.weighing.Lock()
	defer c.weighing.Unlock()
	k, now := kindOf(meta.DType, len(raw)), c.o.Now()
	c.mu.Lock()
	last, seen := c.choices[k]
	if seen && !last.stale && now.Sub(last.at) < c.o.ChoiceTTL && !now.Before(last.at) {
		c.stats.Reused++
		c.mu.Unlock()
		return last.c
	}
	c.mu.Unlock()
	costs, samples := c.costs(meta, raw, c.model(streamed))
	best := c.pick(costs, last.c).c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.choices[k] = choice{c: best, at: now}
	c.stats.Weighed++
	c.stats.Samples += int64(samples)
	switch {
	case !seen:
		c.stats.New++
	case last.stale:
		c.stats.Factor++
	default:
		c.stats.Expired++
	}
	if seen && last.c.ID() != best.ID() {
		c.stats.Flips++
	}
	return best
}

// model is for a transfer starting now: a batch where others are in flight.
func (c *Chooser) model(streamed bool) (m model) {
	c.locked(func() { m = model{Link: c.link.l, streamed: streamed, batch: c.active > 1} })
	return m
}

// call is a write or read in flight. Its time says how far off the model
// was only where it ran alone (the model weighs one tensor at a time):
// none other was in flight when it began, and none began before it ended.
type call struct {
	alone   bool
	started uint64
}

func (c *Chooser) begin() call {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active++
	c.started++
	return call{alone: c.active == 1, started: c.started}
}

func (c *Chooser) end(t call) (alone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
	return t.alone && c.started == t.started
}

// Done reports the write over, with a frame of stored bytes or err. A
// streamed write of none tells the CPU share moving takes; one that ran
// alone teaches its codec's write factor.
func (w *Write) Done(stored int64, err error) {
	c := w.c
	if c == nil {
		return
	}
	alone := c.end(w.call)
	if v := c.cpuSince(w.cpu, w.cpuOK && err == nil); v >= 0 {
		c.locked(func() { c.link.observeCPU(v) })
	}
	if alone && err == nil {
		c.learn(w.k, w.Codec, ToStore, w.m, w.raw, stored, c.o.Now().Sub(w.chose))
	}
}

// Read is one read of a tensor; report it with Done.
type Read struct {
	c    *Chooser
	call call
	m    model
}

// Read starts a read, from its fetch to its last decode.
func (c *Chooser) Read() Read { return Read{c: c, call: c.begin(), m: c.model(false)} }

// Done reports the read over: a frame of stored bytes coded with id, of raw
// bytes of dtype d, streamed or not, took this from start to last decode
// (0: not all decoded). One that ran alone teaches its codec's read factor.
func (r *Read) Done(d tensor.DType, id codec.ID, raw, stored int64, streamed bool, took time.Duration) {
	if cd, err := codec.ByID(id); r.c.end(r.call) && took > 0 && err == nil {
		r.m.streamed = streamed
		r.c.learn(kindOf(d, int(raw)), cd, FromStore, r.m, int(raw), stored, took)
	}
}

// learn weighs a transfer with cd that took took against what m expected
// of it, and marks its kind's choice stale where the factor moved.
func (c *Chooser) learn(k kind, cd codec.Codec, w Way, m model, raw int, stored int64, took time.Duration) {
	if raw < c.o.CodeMin {
		return // ruled by costs per call
	}
	sp, ok := c.speed(k.d, cd, nil)
	if !ok {
		return // not modelled
	}
	write, read := m.times(float64(raw), float64(stored), sp)
	expected := [2]float64{write, read}[w]
	c.locked(func() {
		if ch, ok := c.choices[k]; c.observe(k, cd.ID(), w, took.Seconds(), expected, c.o.Now()) && ok {
			ch.stale = true
			c.choices[k] = ch
		}
	})
}

// Begin marks a transfer to or from the store starting at now (Options.Now).
func (c *Chooser) Begin(now time.Time) { c.locked(func() { c.link.begin(now) }) }

// End reports a transfer begun with Begin over at now: it moved n bytes way
// w (n < 0: it failed), of a frame coded with a codec other than none or not.
func (c *Chooser) End(now time.Time, w Way, n int64, coded bool) {
	c.locked(func() { c.link.end(now, w, n, coded) })
}

// Link is the link's estimate now.
func (c *Chooser) Link() (l Link) {
	c.locked(func() { l = c.link.l })
	return l
}

// Stats are the counts since New or ResetStats.
func (c *Chooser) Stats() (s Stats) {
	c.locked(func() { s = c.stats })
	return s
}

func (c *Chooser) ResetStats() { c.locked(func() { c.stats = Stats{} }) }

// model is what a transfer is weighed with: the link as estimated when it
// began, and whether coding overlaps moving (streamed in pieces, or batch).
type model struct {
	Link
	streamed, batch bool
}

// times are the model's write and read seconds for raw bytes coded at sp
// into stored: moving takes move = stored/rate plus the latency and keeps
// CPUShare of the CPU busy, coding code = raw/speed with all of it.
// Overlapped they share the CPU: max(move, code+CPUShare*move); else add.
func (m model) times(raw, stored float64, sp Speed) (write, read float64) {
	return m.combine(raw/sp.Encode, stored/m.BytesPerSecond) + m.LatencySeconds,
		m.combine(raw/sp.Decode, stored/m.ReadBytesPerSecond) + m.ReadLatencySeconds
}

func (m model) combine(code, move float64) float64 {
	if m.streamed || m.batch {
		return max(move, code+min(max(m.CPUShare, 0), 1)*move)
	}
	return code + move
}

// Speed is a codec's raw bytes per second on a dtype, all workers on this machine.
type Speed struct{ Encode, Decode float64 }

// speed is Options.Speed, none's known before it is measured (no coding).
func (c *Chooser) speed(d tensor.DType, cd codec.Codec, sample []byte) (Speed, bool) {
	sp, ok := c.o.Speed(d, cd, sample)
	if !ok && cd.ID() == codec.IDNone {
		return Speed{math.Inf(1), math.Inf(1)}, true
	}
	return sp, ok
}

type speedKey struct {
	d tensor.DType
	c codec.ID
}

// measured holds this process's codec speeds, each measured once.
var measured = struct {
	sync.Mutex
	m map[speedKey]Speed
}{m: map[speedKey]Speed{}}

// measuredSpeed frames and decodes the tensor's own bytes (a tiling of
// fewer would repeat within a codec's window and look faster) SpeedRuns
// times, the fastest run each way: other work only slows a run down.
func (c *Chooser) measuredSpeed(d tensor.DType, cd codec.Codec, b []byte) (sp Speed, ok bool) {
	measured.Lock()
	defer measured.Unlock()
	if sp, ok = measured.m[speedKey{d, cd.ID()}]; ok || len(b) < c.o.SpeedMin {
		return sp, ok
	}
	b = b[:min(len(b), c.o.SpeedMax)/d.Size()*d.Size()]
	meta := tensor.Meta{DType: d, Shape: []int64{int64(len(b) / d.Size())}}
	back := make([]byte, len(b))
	for range c.o.SpeedRuns {
		start := time.Now()
		f, err := frame.Encode(meta, b, cd.Name(), frame.Options{})
		mid := time.Now()
		if err != nil {
			return sp, false
		} else if _, err := frame.Decode(context.Background(), f, back, frame.DefaultLimits); err != nil {
			return sp, false
		}
		sp.Encode = max(sp.Encode, float64(len(b))/max(mid.Sub(start).Seconds(), 1e-9))
		sp.Decode = max(sp.Decode, float64(len(b))/max(time.Since(mid).Seconds(), 1e-9))
	}
	measured.m[speedKey{d, cd.ID()}] = sp
	return sp, true
}

// A factor is observed over expected seconds of a store's transfers of a
// kind with a codec one way: what the model leaves out, such as coding and
// moving taking the same cores, measured where it matters.
type factorKey struct {
	k kind
	c codec.ID
	w Way
}

type factor struct {
	v  float64
	at time.Time // last observed
}

// own is k's factor where it was observed within FactorTTL of now, else
// 1; c.mu held, as for the methods below.
func (c *Chooser) own(k factorKey, now time.Time) (float64, bool) {
	if f, ok := c.factors[k]; ok && now.Sub(f.at) < c.o.FactorTTL && !now.Before(f.at) {
		return f.v, true
	}
	return 1, false
}

// weighed is a codec's factor before any floor: its own, else none's (what
// slowed none, such as a link slower than its estimate, slows all), else 1,
// so that a codec the model says pays is tried and its transfers tell.
func (c *Chooser) weighed(k factorKey, now time.Time) (float64, bool) {
	if v, ok := c.own(k, now); ok {
		return v, true
	}
	k.c = codec.IDNone
	v, _ := c.own(k, now)
	return v, false
}

// factor is id's factor for a kind and way, and whether it is id's own. A
// coded codec's is floored at none's (1 where none has none of its own)
// unless both are their own and learnt alone, like this transfer: its
// speeds are the fastest of runs alone, so a transfer of it faster than
// expected shows a link faster than its estimate, as none's would.
func (c *Chooser) factor(k kind, id codec.ID, w Way, alone bool, now time.Time) (float64, bool) {
	v, own := c.weighed(factorKey{k, id, w}, now)
	floor, noneOwn := c.own(factorKey{k, codec.IDNone, w}, now)
	if id == codec.IDNone || own && noneOwn && alone {
		return v, own
	}
	return max(v, min(floor, 1)), own
}

// observe moves id's factor by FactorWeight from what it was weighed with
// toward actual/expected, and says whether it moved by more than Drift.
func (c *Chooser) observe(k kind, id codec.ID, w Way, actual, expected float64, now time.Time) bool {
	if expected < c.o.FactorMin.Seconds() || actual <= 0 {
		return false
	}
	old, _ := c.weighed(factorKey{k, id, w}, now)
	v := old + c.o.FactorWeight*(min(max(actual/expected, c.o.MinFactor), c.o.MaxFactor)-old)
	c.factors[factorKey{k, id, w}] = factor{v, now}
	return math.Abs(v-old) > c.o.Drift*old
}

// cost is one candidate's expected write and read for a tensor.
type cost struct {
	c           codec.Codec
	ratio       float64 // raw / stored bytes, on the tensor's sample
	write, read float64 // the model's seconds
	coding      float64 // of those, encoding and decoding
	wf, rf      float64 // write and read factors
	observed    bool    // both factors are the codec's own
}

func (c *cost) time() float64 { return c.wf*c.write + c.rf*c.read }

// costs weighs the candidates for a tensor whose bytes are raw, over m,
// but those whose speed is not known or that shrink the sample by less
// than Gain (none never is left out); samples counts those coded on it.
func (c *Chooser) costs(meta tensor.Meta, raw []byte, m model) (out []cost, samples int) {
	k, now, n := kindOf(meta.DType, len(raw)), c.o.Now(), float64(len(raw))
	for _, cd := range c.o.Candidates {
		id := cd.ID()
		if !cd.Supports(meta.DType) || id == codec.IDPlanes && !meta.DType.IsFloat() {
			continue
		}
		sp, ok := c.speed(meta.DType, cd, raw)
		if !ok {
			continue
		}
		x := cost{c: cd, ratio: 1}
		if id != codec.IDNone {
			samples++
			if x.ratio = codec.SampleRatio(cd, meta, raw, c.o.SampleBytes); x.ratio < 1+c.o.Gain {
				continue // it would only cost time: the frame stores such chunks raw
			}
		}
		x.write, x.read = m.times(n, n/x.ratio, sp)
		x.coding = n/sp.Encode + n/sp.Decode // 0 for none's speed before it is measured
		var wOwn, rOwn bool
		c.mu.Lock()
		x.wf, wOwn = c.factor(k, id, ToStore, !m.batch, now)
		x.rf, rOwn = c.factor(k, id, FromStore, !m.batch, now)
		c.mu.Unlock()
		x.observed = wOwn && rOwn && !m.batch
		out = append(out, x)
	}
	return out, samples
}

// pick is the fastest candidate, each replacing the best before it by margin.
func (c *Chooser) pick(costs []cost, last codec.Codec) *cost {
	var best *cost
	for i := range costs {
		if x := &costs[i]; best == nil || x.time() < (1-c.margin(x, best, last))*best.time() {
			best = x
		}
	}
	return best
}

// margin is the share of simpler's time x must save to replace it (Gain
// to Keep in Options), where last is the kind's last choice.
func (c *Chooser) margin(x, simpler *cost, last codec.Codec) float64 {
	m := c.o.Gain
	if t := x.write + x.read; t > 0 {
		m += c.o.CodingGain * min(x.coding/t, 1)
	}
	if x.observed && simpler.observed {
		m = c.o.ObservedGain
	}
	switch {
	case last == nil:
	case last.ID() == simpler.c.ID():
		m += c.o.Keep
	case last.ID() == x.c.ID():
		m -= c.o.Keep
	}
	return m
}
