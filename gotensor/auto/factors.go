package auto

import (
	"math"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
)

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

// own is k's factor where it was observed within FactorTTL of now; c.mu
// held, as for the methods below.
func (c *Chooser) own(k factorKey, now time.Time) (float64, bool) {
	f, ok := c.factors[k]
	if !ok || now.Sub(f.at) >= c.o.FactorTTL || now.Before(f.at) {
		return 0, false
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
	if v, ok := c.own(k, now); ok {
		return v, false
	}
	return 1, false
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
	} else if !noneOwn {
		floor = 1
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
