package auto

import (
	"math"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// model is what a transfer is weighed with: the link as estimated when
// it began, and whether its coding overlaps moving, as it does for a
// tensor that streams (in pieces) or one of a batch (beside other calls).
type model struct {
	Link
	streamed, batch bool
}

// times are the model's write and read seconds for raw bytes coded at sp
// into stored bytes. Moving takes move = stored/rate plus the latency, and
// keeps CPUShare of the CPU busy; coding takes code = raw/speed with all
// of it. Overlapped, the two share the CPU: max(move, code +
// CPUShare*move); else they add.
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

// cost is one candidate's expected write and read for a tensor.
type cost struct {
	c           codec.Codec
	ratio       float64 // raw / stored bytes, on the tensor's sample
	write, read float64 // the model's seconds
	coding      float64 // of those, encoding and decoding
	wf, rf      float64 // write and read factors
	observed    bool    // both factors are the codec's own
}

// time is the expected write+read seconds, each scaled by its factor.
func (c *cost) time() float64 { return c.wf*c.write + c.rf*c.read }

var unknownSpeed = Speed{math.Inf(1), math.Inf(1)} // none's before it is measured: no coding time

// costs weighs each candidate for a tensor whose bytes are raw, over m;
// candidates whose speed is not known, or that shrink the sample by less
// than Gain, are left out (none never is). samples counts the candidates
// coded on the sample.
func (c *Chooser) costs(meta tensor.Meta, raw []byte, m model) (out []cost, samples int) {
	k, now := kindOf(meta.DType, len(raw)), c.o.Now()
	n := float64(len(raw))
	for _, cd := range c.o.Candidates {
		id := cd.ID()
		if !cd.Supports(meta.DType) || id == codec.IDPlanes && !meta.DType.IsFloat() {
			continue
		}
		sp, ok := c.o.Speed(meta.DType, cd, raw)
		if !ok && id != codec.IDNone {
			continue
		} else if !ok {
			sp = unknownSpeed
		}
		r := 1.0
		if id != codec.IDNone {
			samples++
			if r = codec.SampleRatio(cd, meta, raw, c.o.SampleBytes); r < 1+c.o.Gain {
				continue // it would only cost time: the frame stores such chunks raw
			}
		}
		x := cost{c: cd, ratio: r}
		x.write, x.read = m.times(n, n/r, sp)
		if !math.IsInf(sp.Encode, 1) {
			x.coding = n/sp.Encode + n/sp.Decode
		}
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

// pick is the candidate with the least expected time, each one replacing
// the best before it (simpler) only where it saves margin of its time.
func (c *Chooser) pick(costs []cost, last codec.Codec) *cost {
	var best *cost
	for i := range costs {
		if x := &costs[i]; best == nil || x.time() < (1-c.margin(x, best, last))*best.time() {
			best = x
		}
	}
	return best
}

// margin is the share of simpler's time x must save to replace it: Gain
// plus CodingGain for each share of x's time that is coding, or
// ObservedGain where both are observed; Keep more where simpler was the
// kind's last choice, Keep less where x was.
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
