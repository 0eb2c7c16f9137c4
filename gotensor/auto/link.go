package auto

import (
	"strings"
	"sync"
	"time"
)

// Link is the Chooser's estimate of the link to its store: a transfer of
// n bytes to the store takes LatencySeconds + n/BytesPerSecond, one from
// it ReadLatencySeconds + n/ReadBytesPerSecond.
type Link struct {
	BytesPerSecond     float64 `json:"bytes_per_second"`
	LatencySeconds     float64 `json:"latency_seconds"`
	ReadBytesPerSecond float64 `json:"read_bytes_per_second"`
	ReadLatencySeconds float64 `json:"read_latency_seconds"`
	// CPUShare is the share of this machine's CPU that moving bytes keeps
	// busy while the link runs at its rate: 0 where a NIC moves them by
	// itself, 1 where moving takes every core (loopback TCP on a few).
	CPUShare float64 `json:"cpu_share"`
	Samples  int64   `json:"samples"` // busy periods fitted, and probes
	Seed     string  `json:"seed"`    // the estimate it started from, or "probe"
}

// Way is the way a transfer moves bytes: to the store or from it.
type Way int

const (
	ToStore Way = iota
	FromStore
)

// fitSums are the weighted sums of a least-squares fit of seconds = a +
// b*bytes: weight, bytes, bytes², seconds, bytes*seconds.
type fitSums struct{ w, n, nn, t, nt float64 }

func (f *fitSums) add(w, n, t float64) {
	f.w, f.n, f.nn, f.t, f.nt = f.w+w, f.n+w*n, f.nn+w*n*n, f.t+w*t, f.nt+w*n*t
}

func (f *fitSums) scale(k float64) {
	f.w, f.n, f.nn, f.t, f.nt = k*f.w, k*f.n, k*f.nn, k*f.t, k*f.nt
}

// line solves for latency a >= 0 and seconds per byte b > 0; where the
// points say otherwise, the line goes through the origin.
func (f fitSums) line() (a, b float64) {
	if f.w <= 0 || f.n <= 0 {
		return 0, 0
	}
	mn, mt := f.n/f.w, f.t/f.w
	if v := f.nn/f.w - mn*mn; v > 1e-12*mn*mn {
		b = (f.nt/f.w - mn*mt) / v
		a = mt - b*mn
	}
	if b <= 0 || a < 0 {
		a, b = 0, f.nt/f.nn
	}
	return a, b
}

// linkFit is the running Link. Transfers in flight together share the
// link, so a busy period (from the link going busy to it going idle) is
// one sample: its bytes over its time. It goes to the way most of its
// bytes went (both ways when it moved none). A period in which a coded
// frame moved, or the Chooser measured codec speeds, is left out: where
// moving takes the CPU, coding slows it, which the model counts by itself
// (CPUShare). Round trips and bulk periods decay each their own sums.
type linkFit struct {
	o         *Options
	mu        sync.Mutex
	l         Link
	fit       [2][2]fitSums // by way, and round trip (0) or bulk (1)
	prior     fitSums
	active    int // transfers in flight
	measuring int // speed measurements in flight
	since     time.Time
	bytes     [2]int64 // moved in the current busy period, by way
	tainted   bool
}

func newLinkFit(url string, o *Options) *linkFit {
	scheme, _, _ := strings.Cut(url, "://")
	l, ok := o.Seeds[scheme]
	if !ok {
		l = o.Seeds["tcp"]
		l.Seed = "unknown scheme, " + l.Seed
	}
	e := &linkFit{o: o, l: l}
	n := float64(o.LinkSeedBytes)
	e.seed(l.LatencySeconds, n, l.LatencySeconds+n/l.BytesPerSecond)
	return e
}

// seed makes (0, t0) and (n1, t1) the prior and restarts both ways' fits
// from them; e.mu held or e not shared yet.
func (e *linkFit) seed(t0, n1, t1 float64) {
	e.prior = fitSums{}
	e.prior.add(e.o.LinkPrior, 0, t0)
	e.prior.add(e.o.LinkPrior, n1, t1)
	for w := range e.fit {
		e.fit[w] = [2]fitSums{}
		e.fit[w][0].add(e.o.LinkWeight, 0, t0)
		e.fit[w][e.class(int64(n1))].add(e.o.LinkWeight, n1, t1)
		e.solve(Way(w))
	}
}

func (e *linkFit) class(n int64) int {
	if n < e.o.LinkBulk {
		return 0
	}
	return 1
}

func (e *linkFit) solve(w Way) {
	s := e.prior
	for _, f := range e.fit[w] {
		s.w, s.n, s.nn, s.t, s.nt = s.w+f.w, s.n+f.n, s.nn+f.nn, s.t+f.t, s.nt+f.nt
	}
	a, b := s.line()
	if b <= 0 {
		return
	}
	if w == ToStore {
		e.l.LatencySeconds, e.l.BytesPerSecond = a, 1/b
	} else {
		e.l.ReadLatencySeconds, e.l.ReadBytesPerSecond = a, 1/b
	}
}

func (e *linkFit) begin(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active == 0 {
		e.since, e.bytes, e.tainted = now, [2]int64{}, e.measuring > 0
	}
	e.active++
}

// end ends a transfer of n bytes (n < 0: failed) that moved a coded
// frame or not; the busy period it closes is fitted unless tainted.
func (e *linkFit) end(now time.Time, w Way, n int64, coded bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.active--
	e.tainted = e.tainted || n < 0 || coded
	e.bytes[w] += max(n, 0)
	if e.active > 0 || e.tainted {
		return
	}
	took := now.Sub(e.since).Seconds()
	out, in := e.bytes[ToStore], e.bytes[FromStore]
	if out >= in {
		e.add(ToStore, out+in, took)
	}
	if in >= out {
		e.add(FromStore, out+in, took)
	}
}

// add fits a busy period of n bytes that took t seconds; e.mu held.
func (e *linkFit) add(w Way, n int64, t float64) {
	if t <= 0 {
		return
	}
	k := e.o.LinkWeight
	if t < e.l.time(w, float64(n)) {
		k = e.o.LinkFaster
	}
	f := &e.fit[w][e.class(n)]
	f.scale(1 - k)
	f.add(k, float64(n), t)
	e.l.Samples++
	e.solve(w)
}

// time is the seconds l gives n bytes moving w.
func (l Link) time(w Way, n float64) float64 {
	if w == FromStore {
		return l.ReadLatencySeconds + n/l.ReadBytesPerSecond
	}
	return l.LatencySeconds + n/l.BytesPerSecond
}

// measure marks codec speeds being measured (by +1, then -1): the busy
// periods it overlaps are left out.
func (e *linkFit) measure(d int) {
	e.mu.Lock()
	e.measuring += d
	e.tainted = e.tainted || e.active > 0
	e.mu.Unlock()
}

func (e *linkFit) observeCPU(share float64) {
	e.mu.Lock()
	e.l.CPUShare += e.o.LinkWeight * (min(max(share, 0), 1) - e.l.CPUShare)
	e.mu.Unlock()
}

// reseed replaces the estimate by a probe's: a round trip of rtt moving
// nothing, n bytes moved in rtt+d, and the share of the CPU moving took
// (negative: unknown, kept).
func (e *linkFit) reseed(rtt, d time.Duration, n int64, cpu float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seed(rtt.Seconds(), float64(n), (rtt + d).Seconds())
	if cpu >= 0 {
		e.l.CPUShare = min(cpu, 1)
	}
	e.l.Seed = "probe"
	e.l.Samples++
}

func (e *linkFit) estimate() Link {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.l
}
