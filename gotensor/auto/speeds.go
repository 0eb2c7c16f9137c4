package auto

import (
	"context"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Speed is a codec's throughput on one dtype on this machine with all its
// workers, in raw bytes per second.
type Speed struct{ Encode, Decode float64 }

type speedKey struct {
	d tensor.DType
	c codec.ID
}

// speedTable holds this process's measured speeds, each measured once on
// the first tensor of its dtype large enough.
type speedTable struct {
	mu sync.Mutex
	m  map[speedKey]Speed
}

var measured = &speedTable{m: map[speedKey]Speed{}}

func (t *speedTable) get(d tensor.DType, c codec.Codec, sample []byte, least, most, runs int) (Speed, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sp, ok := t.m[speedKey{d, c.ID()}]; ok {
		return sp, true
	}
	if len(sample) < least {
		return Speed{}, false
	}
	sp, err := measure(d, c, sample[:min(len(sample), most)], runs)
	if err != nil {
		return Speed{}, false
	}
	t.m[speedKey{d, c.ID()}] = sp
	return sp, true
}

// measure frames the tensor's own bytes with c and decodes them, runs
// times, and keeps the fastest run each way: other work on the machine
// only slows a run down. Its own bytes, not a tiling of fewer: repeats
// within a codec's window would make it look faster than it is.
func measure(d tensor.DType, c codec.Codec, b []byte, runs int) (Speed, error) {
	n := len(b) - len(b)%d.Size()
	meta := tensor.Meta{DType: d, Shape: []int64{int64(n / d.Size())}}
	back := make([]byte, n)
	var sp Speed
	for range runs {
		start := time.Now()
		w, err := frame.NewWriter(meta, c, 0, frame.Options{}, frame.Heap)
		if err != nil {
			return sp, err
		}
		f, err := w.Encode(b[:n])
		if err != nil {
			return sp, err
		}
		mid := time.Now()
		if _, err := frame.Decode(context.Background(), f, back, frame.DefaultLimits); err != nil {
			return sp, err
		}
		sp.Encode = max(sp.Encode, float64(n)/max(mid.Sub(start).Seconds(), 1e-9))
		sp.Decode = max(sp.Decode, float64(n)/max(time.Since(mid).Seconds(), 1e-9))
	}
	return sp, nil
}
