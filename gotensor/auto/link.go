package auto

import (
	"context"
	"net"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
)

// Link is the Chooser's estimate of the link to its store: a transfer of
// n bytes to the store takes LatencySeconds + n/BytesPerSecond, one from
// it ReadLatencySeconds + n/ReadBytesPerSecond.
type Link struct {
	BytesPerSecond     float64 `json:"bytes_per_second"`
	LatencySeconds     float64 `json:"latency_seconds"`
	ReadBytesPerSecond float64 `json:"read_bytes_per_second"`
	ReadLatencySeconds float64 `json:"read_latency_seconds"`
	// CPUShare is the share of the machine's CPU moving bytes keeps busy at
	// the link's rate: 0 where a NIC moves them, 1 where it takes every core.
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

// fitSums are the weighted sums of a least-squares fit of seconds = a + b*bytes.
type fitSums struct{ w, n, nn, t, nt float64 }

func (f fitSums) plus(g fitSums, k float64) fitSums {
	return fitSums{f.w + k*g.w, f.n + k*g.n, f.nn + k*g.nn, f.t + k*g.t, f.nt + k*g.nt}
}

func point(n, t float64) fitSums { return fitSums{1, n, n * n, t, n * t} }

// line solves for latency a >= 0 and seconds per byte b > 0; where the
// points say otherwise, the line goes through the origin.
func (f fitSums) line() (a, b float64) {
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

// linkFit is the running Link, guarded by its Chooser's mu: each way, a
// least-squares line through recent busy periods (concurrent transfers
// share the link), each its bytes and time, fitted to the way most of its
// bytes went. A period that moved a coded frame is left out: coding slows
// moving where moving takes the CPU, which the model counts (CPUShare).
// Round trips (under LinkBulk bytes) and bulk periods decay apart, so that
// many stats or deletes in a row do not decay the bulk periods away.
type linkFit struct {
	o      *Options
	l      Link
	fit    [2][2]fitSums // by way, and round trip (0) or bulk (1)
	prior  fitSums       // the seed's points, for good
	active int           // transfers in flight
	since  time.Time
	bytes  [2]int64 // moved in the current busy period, by way
	left   bool     // the current busy period is left out
}

func newLinkFit(url string, o *Options) linkFit {
	scheme, _, _ := strings.Cut(url, "://")
	l, ok := o.Seeds[scheme]
	if !ok {
		l = o.Seeds["tcp"]
		l.Seed = "unknown scheme, " + l.Seed
	}
	e, n := linkFit{o: o, l: l}, float64(o.LinkSeedBytes)
	e.seed(l.LatencySeconds, n, l.LatencySeconds+n/l.BytesPerSecond)
	return e
}

// seed makes (0, t0) and (n1, t1) the prior and restarts both ways' fits.
func (e *linkFit) seed(t0, n1, t1 float64) {
	e.prior = fitSums{}.plus(point(0, t0), e.o.LinkPrior).plus(point(n1, t1), e.o.LinkPrior)
	for w := range e.fit {
		e.fit[w] = [2]fitSums{fitSums{}.plus(point(0, t0), e.o.LinkWeight)}
		e.fit[w][e.class(n1)] = e.fit[w][e.class(n1)].plus(point(n1, t1), e.o.LinkWeight)
		e.solve(w)
	}
}

func (e *linkFit) class(n float64) int {
	if n < float64(e.o.LinkBulk) {
		return 0
	}
	return 1
}

func (e *linkFit) solve(w int) {
	a, b := e.prior.plus(e.fit[w][0], 1).plus(e.fit[w][1], 1).line()
	if w == int(ToStore) {
		e.l.LatencySeconds, e.l.BytesPerSecond = a, 1/b
	} else {
		e.l.ReadLatencySeconds, e.l.ReadBytesPerSecond = a, 1/b
	}
}

func (e *linkFit) begin(now time.Time) {
	if e.active == 0 {
		e.since, e.bytes, e.left = now, [2]int64{}, false
	}
	e.active++
}

// end ends a transfer of n bytes (n < 0: failed), coded or not, and fits
// the busy period it closes, at LinkFaster where it ran faster than expected:
// what slows a period (fresh memory, other work) is rarely the link's doing.
func (e *linkFit) end(now time.Time, w Way, n int64, coded bool) {
	e.active--
	e.left = e.left || n < 0 || coded
	e.bytes[w] += max(n, 0)
	out, in := e.bytes[ToStore], e.bytes[FromStore]
	t, all := now.Sub(e.since).Seconds(), float64(out+in)
	if e.active > 0 || e.left || t <= 0 {
		return
	}
	lat := [2]float64{e.l.LatencySeconds, e.l.ReadLatencySeconds}
	rate := [2]float64{e.l.BytesPerSecond, e.l.ReadBytesPerSecond}
	for w, ok := range [2]bool{out >= in, in >= out} {
		if k := e.o.LinkWeight; ok {
			if t < lat[w]+all/rate[w] {
				k = e.o.LinkFaster
			}
			f := &e.fit[w][e.class(all)]
			*f = fitSums{}.plus(*f, 1-k).plus(point(all, t), k)
			e.l.Samples++
			e.solve(w)
		}
	}
}

func (e *linkFit) observeCPU(share float64) {
	e.l.CPUShare += e.o.LinkWeight * (min(max(share, 0), 1) - e.l.CPUShare)
}

// reseed takes a probe's estimate: a round trip of rtt, n bytes moved in
// rtt+d, and the CPU share moving took (negative: unknown).
func (e *linkFit) reseed(rtt, d time.Duration, n int64, cpu float64) {
	e.seed(rtt.Seconds(), float64(n), (rtt + d).Seconds())
	if cpu >= 0 {
		e.l.CPUShare = min(cpu, 1)
	}
	e.l.Seed = "probe"
	e.l.Samples++
}

// Prober is a store across a link, probed before the first write that teaches.
type Prober interface {
	Has(ctx context.Context, key string) (bool, error)
	store.StreamWriter
}

const probeKey = ".gotensor-link-probe"

// probe seeds the link estimate with a round trip (the latency) and a
// streamed upload (the rate and the CPU share moving takes), aborted so
// that nothing is stored. A store that fails it keeps its seed.
func (c *Chooser) probe(ctx context.Context) {
	o, p := &c.o, c.prober
	t0 := o.Now()
	if _, err := p.Has(ctx, probeKey); err != nil {
		return
	}
	rtt := o.Now().Sub(t0)
	sink, err := p.PutStream(ctx, probeKey)
	if err != nil {
		return
	}
	part := make([]byte, o.ProbePart)
	cpu0, cpuOK := o.CPU()
	start := o.Now()
	var sent int64
	for err == nil && sent < o.ProbeMax && (sent < o.ProbeMin || o.Now().Sub(start) < o.ProbeTime) {
		err = sink.WritePart(sent, part)
		sent += o.ProbePart
	}
	sink.Abort() // waits for the parts in flight, then a round trip
	d := o.Now().Sub(start) - rtt
	if err != nil || sent == 0 || d <= 0 {
		return
	}
	share := c.cpuSince(cpu0, cpuOK)
	c.locked(func() { c.link.reseed(rtt, d, sent, share) })
}

// CPUTimes are this process's CPU time (Busy) and wall time × cores (Total), in ns.
type CPUTimes struct{ Busy, Total uint64 }

// ReadCPU reads the process's CPU time (getrusage) and wall time × cores.
func ReadCPU() (CPUTimes, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return CPUTimes{}, false
	}
	wall := uint64(time.Now().UnixNano()) * uint64(runtime.NumCPU())
	return CPUTimes{Busy: uint64(ru.Utime.Nano() + ru.Stime.Nano()), Total: wall}, true
}

// cpuSince is the share of the machine's CPU this process used since a
// (read where aOK), times peerShares; -1 where it cannot tell.
func (c *Chooser) cpuSince(a CPUTimes, aOK bool) float64 {
	if aOK {
		if b, ok := c.o.CPU(); ok && b.Total >= a.Total+uint64(time.Millisecond) && b.Busy >= a.Busy {
			return float64(b.Busy-a.Busy) / float64(b.Total-a.Total) * peerShares(c.url)
		}
	}
	return -1
}

// peerShares is how many times the CPU this process takes to move bytes
// to the store at rawURL the machine spends: twice for a node on the
// loopback, whose receiving takes about what the sending does.
func peerShares(rawURL string) float64 {
	if u, err := url.Parse(strings.Split(rawURL, ",")[0]); err == nil {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			return 2
		}
	}
	return 1
}
