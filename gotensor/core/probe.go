package core

import (
	"context"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
)

// The probe that seeds the link estimate of a store across a link, run
// once, before the first write "auto" weighs: a round trip for the
// latency, then a streamed upload of probePart-byte parts, aborted so
// that nothing is stored, for probeTime and at least probeMin bytes (the
// CPU share needs a few clock ticks), at most probeMax.
const (
	probeKey  = ".gotensor-link-probe"
	probePart = 1 << 20
	probeMin  = 4 << 20
	probeMax  = 32 << 20
	probeTime = 30 * time.Millisecond
)

var probeBytes = make([]byte, probePart) // only read

// probeOnce probes a store across a link before its first write that
// "auto" weighs or that teaches factors.
func (s *Store) probeOnce(ctx context.Context) {
	if store.Streams(s.st) {
		s.probe.Do(func() { s.probeLink(ctx) })
	}
}

// probeLink seeds s's link estimate; a store that fails the probe keeps its
// seed, and the write goes on.
func (s *Store) probeLink(ctx context.Context) {
	sw, ok := s.st.(store.Streamer)
	if !ok || !store.Streams(s.st) {
		return
	}
	t0 := s.now()
	if _, err := s.st.Has(ctx, probeKey); err != nil {
		return
	}
	rtt := s.now().Sub(t0)
	sink, err := sw.PutStream(ctx, probeKey)
	if err != nil {
		return
	}
	c0, cok := s.cpu(true)
	start := s.now()
	var sent int64
	for sent < probeMax && (sent < probeMin || s.now().Sub(start) < probeTime) {
		if err = sink.WritePart(sent, probeBytes); err != nil {
			break
		}
		sent += probePart
	}
	sink.Abort() // waits for the parts in flight, then one round trip
	d := s.now().Sub(start) - rtt
	if err != nil {
		return
	}
	share := -1.0
	if c1, ok := s.cpu(true); ok && cok {
		if v, ok := cpuShare(c0, c1); ok {
			share = v * peerShares(s.URL())
		}
	}
	s.link.reseed(sent, d, rtt, share)
}
