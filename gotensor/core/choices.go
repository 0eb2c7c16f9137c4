package core

import (
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// choiceTTL is how long a store reuses what "auto" chose for a dtype and
// size class (a power of two of raw bytes), as long as the link's time to
// move such a tensor raw stays within choiceDrift (see get): a batch
// of writes (say a model's tensors) gets one codec per kind of tensor,
// each chosen once, and a change in the link or the store shows within a
// second.
const (
	choiceTTL   = time.Second
	choiceDrift = 0.25
)

type choiceKey struct {
	d    tensor.DType
	size int // bits.Len of the raw byte count
}

type choice struct {
	c        codec.Codec
	expected float64 // seconds per raw byte the model expected to write (0: chosen without it)
	at       time.Time
	link     float64 // the link's seconds to move the tensor raw then (see linkTime)
	dropped  bool    // what it was weighed with changed: weigh again (see drop)
}

// choices are a store's recent "auto" choices; safe for concurrent use.
type choices struct {
	mu sync.Mutex
	m  map[choiceKey]choice
}

func keyOf(meta tensor.Meta, raw int) choiceKey {
	return choiceKey{meta.DType, bits.Len(uint(raw))}
}

// linkTime is the seconds l takes to move raw bytes there and back.
func linkTime(l Link, raw int) float64 {
	t := l.LatencySeconds + float64(raw)/l.BytesPerSecond
	if l.ReadBytesPerSecond > 0 {
		return t + l.ReadLatencySeconds + float64(raw)/l.ReadBytesPerSecond
	}
	return 2 * t
}

// miss says why get found no choice to reuse (reuse: it found one).
type miss int

const (
	reuse       miss = iota
	missNew          // the kind was never weighed
	missExpired      // its choice is choiceTTL old
	missDrift        // the link's time for it moved past choiceDrift
	missFactor       // a codec's factor moved (see drop)
)

// get is the codec chosen for such a tensor within choiceTTL of now, over
// a link that moves it about as fast as now (link: linkTime): its time
// has moved by less than choiceDrift of what the choice weighed, the link
// time then and the write the model expected. A link that takes next to
// nothing next to coding (memory) can double its time without changing
// what pays. On a miss, last is the kind's last choice (nil: none yet),
// which the next weigh keeps unless another codec is clearly better (see
// codec.Hint.Last).
func (cs *choices) get(meta tensor.Meta, raw int, now time.Time, link float64) (ch choice, why miss) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ch, ok := cs.m[keyOf(meta, raw)]
	switch {
	case !ok:
		return choice{}, missNew
	case ch.dropped:
		return ch, missFactor
	case now.Sub(ch.at) >= choiceTTL || now.Before(ch.at):
		return ch, missExpired
	case math.Abs(link-ch.link) > choiceDrift*(ch.link+ch.expected*float64(raw)):
		return ch, missDrift
	}
	return ch, reuse
}

func (cs *choices) put(meta tensor.Meta, raw int, ch choice) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[choiceKey]choice{}
	}
	cs.m[keyOf(meta, raw)] = ch
}

// classLocks are a mutex per kind of tensor (choiceKey); safe for
// concurrent use.
type classLocks struct {
	mu sync.Mutex
	m  map[choiceKey]*sync.Mutex
}

// lock locks k's mutex and returns its unlock.
func (l *classLocks) lock(k choiceKey) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[choiceKey]*sync.Mutex{}
	}
	m, ok := l.m[k]
	if !ok {
		m = &sync.Mutex{}
		l.m[k] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// drop marks the choice for such a tensor stale: what it was weighed with
// has changed (a codec's factor), and the next write weighs again.
func (cs *choices) drop(meta tensor.Meta, raw int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k := keyOf(meta, raw)
	if ch, ok := cs.m[k]; ok {
		ch.dropped = true
		cs.m[k] = ch
	}
}
