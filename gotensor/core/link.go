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
	Samples        int64   `json:"samples"` // transfers observed
	Seed           string  `json:"seed"`    // the default it started from
}

// Transfers of at least linkBulk bytes update the throughput; smaller ones
// the latency. linkWeight is a new observation's weight in the averages.
const (
	linkBulk   = 256 << 10
	linkWeight = 0.25
)

// linkSeeds are the starting estimates by URL scheme.
var linkSeeds = map[string]Link{
	"mem":  {BytesPerSecond: 20e9, LatencySeconds: 1e-6, Seed: "memory"},
	"file": {BytesPerSecond: 1e9, LatencySeconds: 100e-6, Seed: "disk"},
	"tcp":  {BytesPerSecond: 1.25e9, LatencySeconds: 100e-6, Seed: "tcp 10 Gbit/s"},
	"ucx":  {BytesPerSecond: 12.5e9, LatencySeconds: 10e-6, Seed: "ucx 100 Gbit/s"},
}

// linkEstimate is a Store's running Link; safe for concurrent use.
type linkEstimate struct {
	mu sync.Mutex
	l  Link
}

func newLinkEstimate(url string) *linkEstimate {
	scheme, _, _ := strings.Cut(url, "://")
	l, ok := linkSeeds[scheme]
	if !ok {
		l = linkSeeds["tcp"]
		l.Seed = "unknown scheme, " + l.Seed
	}
	return &linkEstimate{l: l}
}

// observe adds one transfer of n bytes that took d.
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

func (e *linkEstimate) estimate() Link {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.l
}
