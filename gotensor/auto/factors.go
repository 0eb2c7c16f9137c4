package auto

import (
	"math"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
)

// factors are, per kind of tensor, codec and way, how much longer than
// the model expected the store's transfers took (observed / expected
// seconds): what the model leaves out, such as coding and moving taking
// the same cores, measured where it matters.
type factors struct {
	o  *Options
	mu sync.Mutex
	m  map[factorKey]factor
}

type factorKey struct {
	k kind
	c codec.ID
	w Way
}

type factor struct {
	v  float64
	at time.Time // last observed
}

// own is k's factor where it was observed within FactorTTL of now.
func (f *factors) own(k factorKey, now time.Time) (float64, bool) {
	v, ok := f.m[k]
	if !ok || now.Sub(v.at) >= f.o.FactorTTL || now.Before(v.at) {
		return 0, false
	}
	return v.v, true
}

// weighed is the factor c is weighed with before any floor: its own, else
// none's (what slowed none's transfers, such as a link slower than its
// estimate, slows every codec's), else 1: the model's word, so that a
// codec the model says pays is tried and its own transfers tell; f.mu held.
func (f *factors) weighed(k factorKey, now time.Time) (float64, bool) {
	if v, ok := f.own(k, now); ok {
		return v, true
	}
	k.c = codec.IDNone
	if v, ok := f.own(k, now); ok {
		return v, false
	}
	return 1, false
}

// get is c's factor for a kind and way, and whether it is c's own. A
// coded codec's is no less than none's (1 where none has none of its own)
// unless both are their own and learnt from transfers like this one
// (alone): its speeds are the fastest of several runs alone, so a
// transfer of it faster than expected shows a link faster than its
// estimate, over which none would have moved as fast.
func (f *factors) get(k kind, c codec.ID, w Way, alone bool, now time.Time) (float64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, own := f.weighed(factorKey{k, c, w}, now)
	if c == codec.IDNone {
		return v, own
	}
	floor, noneOwn := f.own(factorKey{k, codec.IDNone, w}, now)
	if own && noneOwn && alone {
		return v, own
	}
	if !noneOwn {
		floor = 1
	}
	return max(v, min(floor, 1)), own
}

// observe moves c's factor by FactorWeight from what it was weighed with
// toward actual/expected, and says whether it moved by more than Drift.
func (f *factors) observe(k kind, c codec.ID, w Way, actual, expected float64, now time.Time) bool {
	if expected < f.o.FactorMin.Seconds() || actual <= 0 {
		return false
	}
	r := min(max(actual/expected, f.o.MinFactor), f.o.MaxFactor)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[factorKey]factor{}
	}
	old, _ := f.weighed(factorKey{k, c, w}, now)
	v := old + f.o.FactorWeight*(r-old)
	f.m[factorKey{k, c, w}] = factor{v, now}
	return math.Abs(v-old) > f.o.Drift*old
}
