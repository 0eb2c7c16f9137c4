package core

import (
	"strings"
	"sync"
	"time"
)

// Link is what a Store has seen of the link to its frames: a transfer of n
// bytes to the store takes LatencySeconds + n/BytesPerSecond, one from it
// ReadLatencySeconds + n/ReadBytesPerSecond, fitted to recent transfers
// of all sizes, starting from a default for the store's kind
// (memory for mem://, the disk for file://, a network for tcp:// and
// ucx://) or a probe.
type Link struct {
	BytesPerSecond float64 `json:"bytes_per_second"` // to the store, the marginal rate: 1 / seconds per byte
	LatencySeconds float64 `json:"latency_seconds"`  // to the store, the fixed cost of one transfer
	// The same from the store (reads).
	ReadBytesPerSecond float64 `json:"read_bytes_per_second"`
	ReadLatencySeconds float64 `json:"read_latency_seconds"`
	// CPUShare is the share of this machine's CPU that moving bulk bytes
	// took: this process's, twice that for a node on the loopback (see
	// codec.Hint.LinkCPU).
	CPUShare float64 `json:"cpu_share"`
	Samples  int64   `json:"samples"` // busy periods fitted (one of no bytes counts twice, once each way)
	Seed     string  `json:"seed"`    // the default it started from, or "probe"
}

// linkWeight is a new observation's weight in the moving averages (the
// fit's sums and the CPU share); linkPrior the weight the seed's two
// points keep in the fit for good, so that transfers all of one size
// leave the other term where the seed put it. linkSeedBytes is the size
// of the seed's second point.
//
// A busy period faster than the fit expects weighs linkWeightFaster: what
// slows a period down (fresh memory's page faults on either end, a
// collection, other work on the cores) is rarely the link's doing, and the
// cost model counts the CPU that moving takes on its own (LinkCPU), so the
// fit leans toward the link's rate when undisturbed, as TCP BBR takes the
// most a path recently delivered as its bottleneck rate. A store's first
// transfers, into a node that has just started, ran 3-5x slower than its
// later ones in a 25 Gbit/s namespace; at linkWeight alone the estimate
// was still at 0.57x the link's rate five transfers after (at least 0.9x
// now), and "auto" weighed planes against reads a third as fast as they
// were. A link that truly slows is still followed, at linkWeight.
const (
	linkWeight       = 0.1
	linkWeightFaster = 0.5
	linkPrior        = 0.01
	linkSeedBytes    = 1 << 20
)

// linkBulk is the least bytes a transfer moves for its time to say how
// fast the link is rather than how long a round trip takes (the probe's
// parts, the CPU share).
const linkBulk = 256 << 10

// linkSeeds are the starting estimates by URL scheme.
// A store across a link replaces its seed by a probe (see probeLink).
var linkSeeds = map[string]Link{
	"mem":  {BytesPerSecond: 20e9, LatencySeconds: 1e-6, CPUShare: 1, Seed: "memory"},
	"file": {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 0.5, Seed: "disk"},
	"tcp":  {BytesPerSecond: 1.25e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "tcp 10 Gbit/s"},
	"ucx":  {BytesPerSecond: 12.5e9, LatencySeconds: 10e-6, CPUShare: 0.5, Seed: "ucx 100 Gbit/s"},
}

// fitSums are the weighted sums of a least-squares fit of seconds = a +
// b*bytes: weight, bytes, bytes², seconds, bytes*seconds.
type fitSums struct{ w, n, nn, t, nt float64 }

func (f *fitSums) add(w, n, t float64) {
	f.w += w
	f.n += w * n
	f.nn += w * n * n
	f.t += w * t
	f.nt += w * n * t
}

func (f *fitSums) plus(g fitSums) {
	f.w, f.n, f.nn, f.t, f.nt = f.w+g.w, f.n+g.n, f.nn+g.nn, f.t+g.t, f.nt+g.nt
}

func (f *fitSums) scale(k float64) {
	f.w, f.n, f.nn, f.t, f.nt = k*f.w, k*f.n, k*f.nn, k*f.t, k*f.nt
}

// line solves for a and b, with a >= 0 and b > 0: time grows with bytes,
// and a transfer of nothing takes no less than nothing.
func (f fitSums) line() (a, b float64) {
	if f.w <= 0 || f.n <= 0 {
		return 0, 0
	}
	mn, mt := f.n/f.w, f.t/f.w
	if v := f.nn/f.w - mn*mn; v > 1e-12*mn*mn {
		b = (f.nt/f.w - mn*mt) / v
		a = mt - b*mn
	}
	if b <= 0 || a < 0 { // through the origin: all of the time is per byte
		a, b = 0, f.nt/f.nn
	}
	return a, b
}

// direction is the way bytes move: to the store (writes) or from it.
type direction int

const (
	toStore direction = iota
	fromStore
)

// linkEstimate is a Store's running Link; safe for concurrent use.
// Transfers in flight together share the link: a busy period (from the
// link going busy to it going idle) is one sample, its bytes over its
// time, and the fit's latency is what a period costs beyond its bytes.
// Each direction has its own fit (a node may take bytes slower than it
// sends them); a period goes to the direction most of its bytes took, one
// that moved nothing (a round trip) to both. A period during which this
// Store coded (other than none) is left out: on a machine whose moving
// takes the CPU (loopback, TCP on few cores) coding slows it, and the
// cost model counts that itself (LinkCPU); a link learnt while coding
// would look slower the more a codec is used.
//
// Round trips (periods under linkBulk bytes) and bulk periods decay each
// their own sums, and the line is fitted to both: a store asked for many
// stats, deletes or small tensors in a row would otherwise decay its bulk
// samples away and leave the rate to the seed (bench-link's 103 stats and
// deletes after each pass held the read rate at its probe, a third of the
// link's, for a whole run).
type linkEstimate struct {
	mu      sync.Mutex
	l       Link
	now     func() time.Time
	fit     [2][2]fitSums // decayed samples, by direction and size (sizeOf)
	prior   fitSums       // the seed's points, weighted linkPrior
	active  int           // transfers in flight
	coding  int           // codings in flight
	since   time.Time
	bytes   [2]int64 // moved in the current busy period, by direction
	tainted bool     // the current busy period overlapped coding, or a transfer not to count
}

func newLinkEstimate(url string, now func() time.Time) *linkEstimate {
	scheme, _, _ := strings.Cut(url, "://")
	l, ok := linkSeeds[scheme]
	if !ok {
		l = linkSeeds["tcp"]
		l.Seed = "unknown scheme, " + l.Seed
	}
	e := &linkEstimate{l: l, now: now}
	e.seedPoints(0, l.LatencySeconds, linkSeedBytes, l.LatencySeconds+linkSeedBytes/l.BytesPerSecond)
	return e
}

// seedPoints makes (n0, t0) and (n1, t1) the prior and restarts both
// directions' fits from them.
func (e *linkEstimate) seedPoints(n0, t0, n1, t1 float64) {
	e.prior = fitSums{}
	e.prior.add(linkPrior, n0, t0)
	e.prior.add(linkPrior, n1, t1)
	for d := range e.fit {
		e.fit[d] = [2]fitSums{}
		e.fit[d][sizeOf(n0)].add(linkWeight, n0, t0) // each point one sample
		e.fit[d][sizeOf(n1)].add(linkWeight, n1, t1)
		e.solve(direction(d))
	}
}

// sizeOf is the size class of a period of n bytes: 0 a round trip, 1 bulk.
func sizeOf(n float64) int {
	if n < linkBulk {
		return 0
	}
	return 1
}

func (e *linkEstimate) solve(d direction) {
	s := e.prior
	for _, f := range e.fit[d] {
		s.plus(f)
	}
	a, b := s.line()
	if b <= 0 {
		return
	}
	if d == toStore {
		e.l.LatencySeconds, e.l.BytesPerSecond = a, 1/b
	} else {
		e.l.ReadLatencySeconds, e.l.ReadBytesPerSecond = a, 1/b
	}
}

// begin marks a transfer's start; pass what it returns to end.
func (e *linkEstimate) begin() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if e.active == 0 {
		e.since, e.bytes, e.tainted = now, [2]int64{}, e.coding > 0
	}
	e.active++
	return now
}

// end marks the end of a transfer of n bytes in direction d begun at
// start; n < 0: one whose time says nothing of the link (held back by
// coding, or failed), which leaves its busy period out.
func (e *linkEstimate) end(d direction, n int64, start time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.active--
	if n < 0 {
		e.tainted = true
	} else {
		e.bytes[d] += n
	}
	if e.active > 0 || e.tainted {
		return
	}
	took := e.now().Sub(e.since)
	out, in := e.bytes[toStore], e.bytes[fromStore]
	if out >= in {
		e.add(toStore, out+in, took)
	}
	if in >= out {
		e.add(fromStore, out+in, took)
	}
}

// codingBegins and codingEnds bracket coding (other than none) by the
// Store: the busy periods it overlaps are left out.
func (e *linkEstimate) codingBegins() {
	e.mu.Lock()
	e.coding++
	if e.active > 0 {
		e.tainted = true
	}
	e.mu.Unlock()
}

func (e *linkEstimate) codingEnds() {
	e.mu.Lock()
	e.coding--
	e.mu.Unlock()
}

// add fits a busy period of n bytes that took t to direction d; e.mu
// held.
func (e *linkEstimate) add(d direction, n int64, t time.Duration) {
	if t <= 0 {
		return
	}
	w := linkWeight
	if t.Seconds() < e.expected(d, n) {
		w = linkWeightFaster
	}
	f := &e.fit[d][sizeOf(float64(n))]
	f.scale(1 - w)
	f.add(w, float64(n), t.Seconds())
	e.l.Samples++
	e.solve(d)
}

// expected is the seconds the fit gives n bytes in direction d; e.mu held.
// (0 before it has a rate).
func (e *linkEstimate) expected(d direction, n int64) float64 {
	lat, rate := e.l.LatencySeconds, e.l.BytesPerSecond
	if d == fromStore {
		lat, rate = e.l.ReadLatencySeconds, e.l.ReadBytesPerSecond
	}
	if rate <= 0 {
		return 0
	}
	return lat + float64(n)/rate
}

// observeCPU adds the share of the CPU that was busy while bulk bytes moved.
func (e *linkEstimate) observeCPU(share float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.l.CPUShare += linkWeight * (min(max(share, 0), 1) - e.l.CPUShare)
}

// reseed replaces the estimate by a probe's: a round trip of rtt moving
// nothing, and n bytes moved in d after a round trip, with the
// given share of the CPU busy (negative: not known, the seed's is kept).
func (e *linkEstimate) reseed(n int64, d, rtt time.Duration, cpu float64) {
	if n <= 0 || d <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seedPoints(0, rtt.Seconds(), float64(n), (rtt + d).Seconds())
	if cpu >= 0 {
		e.l.CPUShare = min(cpu, 1)
	}
	e.l.Seed = "probe"
	e.l.Samples++
}

func (e *linkEstimate) estimate() Link {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.l
}
