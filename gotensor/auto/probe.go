package auto

import (
	"context"

	"github.com/gotensor/gotensor/gotensor/store"
)

// Prober is a store across a link, which the Chooser probes before the
// first write it weighs or learns from.
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
	for sent < o.ProbeMax && (sent < o.ProbeMin || o.Now().Sub(start) < o.ProbeTime) {
		if err = sink.WritePart(sent, part); err != nil {
			break
		}
		sent += int64(len(part))
	}
	sink.Abort() // waits for the parts in flight, then a round trip
	d := o.Now().Sub(start) - rtt
	if err != nil || sent == 0 || d <= 0 {
		return
	}
	share := -1.0
	if cpu1, ok := o.CPU(); ok && cpuOK {
		if v, ok := cpuShare(cpu0, cpu1); ok {
			share = v * peerShares(c.url)
		}
	}
	c.mu.Lock()
	c.link.reseed(rtt, d, sent, share)
	c.mu.Unlock()
}
