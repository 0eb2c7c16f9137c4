package core

import (
	"strings"
	"sync"
	"time"
)

// Link is what a Store has seen of the link to its frames: throughput and
// latency as moving averages of recent transfers, starting from a default
// for the store's kind (memory for mem://, the disk for file://, a network
// for tcp:// and ucx://).
type Link struct {
	BytesPerSecond float64 `json:"bytes_per_second"`
	LatencySeconds float64 `json:"latency_seconds"`
	// CPUShare is the share of this machine's CPU that moving bulk bytes
	// took: this process's, twice that for a node on the loopback (see
	// codec.Hint.LinkCPU).
	CPUShare float64 `json:"cpu_share"`
	Samples  int64   `json:"samples"` // transfers observed
	Seed     string  `json:"seed"`    // the default it started from, or "probe"
}

// Transfers of at least linkBulk bytes update the throughput; smaller ones
// the latency. linkWeight is a new observation's weight in the averages.
const (
	linkBulk   = 256 << 10
	linkWeight = 0.25
)

// linkSeeds are the starting estimates by URL scheme.
// A store across a link replaces its seed by a probe (see probeLink).
var linkSeeds = map[string]Link{
	"mem":  {BytesPerSecond: 20e9, LatencySeconds: 1e-6, CPUShare: 1, Seed: "memory"},
	"file": {BytesPerSecond: 1e9, LatencySeconds: 100e-6, CPUShare: 0.5, Seed: "disk"},
	"tcp":  {BytesPerSecond: 1.25e9, LatencySeconds: 100e-6, CPUShare: 1, Seed: "tcp 10 Gbit/s"},
	"ucx":  {BytesPerSecond: 12.5e9, LatencySeconds: 10e-6, CPUShare: 0.5, Seed: "ucx 100 Gbit/s"},
}

// linkEstimate is a Store's running Link; safe for concurrent use.
// Transfers in flight together share the link: its throughput is the bytes
// they moved over the time at least one was in flight, not over their
// times summed, and only a small transfer that ran alone is a latency
// sample.
type linkEstimate struct {
	mu     sync.Mutex
	l      Link
	now    func() time.Time
	active int       // transfers in flight
	since  time.Time // when the link last went busy
	shared bool      // transfers overlapped since it went busy
	bytes  int64     // moved in busy periods not yet averaged in
	busy   time.Duration
}

func newLinkEstimate(url string, now func() time.Time) *linkEstimate {
	scheme, _, _ := strings.Cut(url, "://")
	l, ok := linkSeeds[scheme]
	if !ok {
		l = linkSeeds["tcp"]
		l.Seed = "unknown scheme, " + l.Seed
	}
	return &linkEstimate{l: l, now: now}
}

// begin marks a transfer's start; pass what it returns to end.
func (e *linkEstimate) begin() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if e.active > 0 {
		e.shared = true
	} else {
		e.since = now
	}
	e.active++
	return now
}

// end marks the end of a transfer of n bytes begun at start.
func (e *linkEstimate) end(n int64, start time.Time) {
	e.mu.Lock()
	now := e.now()
	e.active--
	alone := e.active == 0 && !e.shared
	if !alone || n >= linkBulk {
		e.bytes += n
	}
	var bytes int64
	var busy time.Duration
	if e.active == 0 {
		e.busy += now.Sub(e.since)
		e.shared = false
		if e.bytes >= linkBulk {
			bytes, busy, e.bytes, e.busy = e.bytes, e.busy, 0, 0
		}
	}
	e.mu.Unlock()
	switch {
	case alone && n < linkBulk:
		e.observe(n, now.Sub(start))
	case bytes > 0:
		e.observe(bytes, busy)
	}
}

// observe adds n bytes that kept the link busy for d: a latency sample
// when n is small, else a throughput one.
func (e *linkEstimate) observe(n int64, d time.Duration) {
	if d < 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.l.Samples++
	sec := d.Seconds()
	if n < linkBulk {
		e.l.LatencySeconds += linkWeight * (sec - e.l.LatencySeconds)
		return
	}
	move := sec - e.l.LatencySeconds
	if move < sec/2 {
		move = sec / 2 // a latency estimate too high must not make the link look infinitely fast
	}
	if move <= 0 {
		move = 1e-9
	}
	e.l.BytesPerSecond += linkWeight * (float64(n)/move - e.l.BytesPerSecond)
}

// observeCPU adds the share of the CPU that was busy while bulk bytes moved.
func (e *linkEstimate) observeCPU(share float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.l.CPUShare += linkWeight * (min(max(share, 0), 1) - e.l.CPUShare)
}

// reseed replaces the estimate by a probe's: n bytes moved in d, after a
// round trip of rtt, with the given share of the CPU busy (negative: not
// known, the seed's is kept).
func (e *linkEstimate) reseed(n int64, d, rtt time.Duration, cpu float64) {
	if n <= 0 || d <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	lat := rtt.Seconds()
	move := max(d.Seconds()-lat, d.Seconds()/2)
	e.l.BytesPerSecond, e.l.LatencySeconds = float64(n)/move, lat
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
