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

// get is the codec chosen for such a tensor within choiceTTL of now, over
// a link that moves it about as fast as now (link: linkTime): its time
// has moved by less than choiceDrift of what the choice weighed, the link
// time then and the write the model expected. A link that takes next to
// nothing next to coding (memory) can double its time without changing
// what pays.
func (cs *choices) get(meta tensor.Meta, raw int, now time.Time, link float64) (choice, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ch, ok := cs.m[keyOf(meta, raw)]
	if !ok || now.Sub(ch.at) >= choiceTTL || now.Before(ch.at) || math.Abs(link-ch.link) > choiceDrift*(ch.link+ch.expected*float64(raw)) {
		return choice{}, false
	}
	return ch, true
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

// drop forgets the choice for such a tensor: what it was weighed with has
// changed (a codec's factor), and the next write weighs again.
func (cs *choices) drop(meta tensor.Meta, raw int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.m, keyOf(meta, raw))
}
