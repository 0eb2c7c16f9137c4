package auto

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
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

// Speed is a codec's throughput on one dtype on this machine with all its
// workers, in raw bytes per second.
type Speed struct{ Encode, Decode float64 }

// speed is Options.Speed, but none's is known before it is measured: no
// coding time.
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

// measuredSpeed measures a codec on the tensor's own bytes (not a tiling
// of fewer: repeats within a codec's window would make it look faster
// than it is), framed and decoded SpeedRuns times, and keeps the fastest
// run each way: other work on the machine only slows a run down.
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

// A factor is how much longer than the model expected a store's
// transfers of a kind of tensor with a codec took one way (observed /
// expected seconds): what the model leaves out, such as coding and moving
// taking the same cores, measured where it matters.
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
	f, ok := c.factors[k]
	if !ok || now.Sub(f.at) >= c.o.FactorTTL || now.Before(f.at) {
		return 1, false
	}
	return f.v, true
}

// weighed is the factor a codec is weighed with before any floor: its
// own, else none's (what slowed none's transfers, such as a link slower
// than its estimate, slows every codec's), else 1: the model's word, so
// that a codec the model says pays is tried and its own transfers tell.
func (c *Chooser) weighed(k factorKey, now time.Time) (float64, bool) {
	if v, ok := c.own(k, now); ok {
		return v, true
	}
	k.c = codec.IDNone
	v, _ := c.own(k, now)
	return v, false
}

// factor is id's factor for a kind and way, and whether it is id's own. A
// coded codec's is no less than none's (1 where none has none of its
// own) unless both are their own and learnt from transfers like this one
// (alone): its speeds are the fastest of several runs alone, so a
// transfer of it faster than expected shows a link faster than its
// estimate, over which none would have moved as fast.
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

// time is the expected write+read seconds, each scaled by its factor.
func (c *cost) time() float64 { return c.wf*c.write + c.rf*c.read }

// costs weighs each candidate for a tensor whose bytes are raw, over m;
// candidates whose speed is not known, or that shrink the sample
// (codec.SampleRatio) by less than Gain, are left out (none never is).
// samples counts the candidates coded on the sample.
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

// margin is the share of simpler's time x must save to replace it, from
// Gain, CodingGain, ObservedGain and Keep, the kind's last choice being
// simpler (Keep more) or x (Keep less).
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
