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

// measured holds this process's codec speeds, each measured once.
var measured struct {
	sync.Mutex
	m map[speedKey]Speed
}

// measuredSpeed measures a codec on the tensor's own bytes (not a tiling
// of fewer: repeats within a codec's window would make it look faster
// than it is), framed and decoded SpeedRuns times, and keeps the fastest
// run each way: other work on the machine only slows a run down.
func measuredSpeed(d tensor.DType, c codec.Codec, b []byte, o *Options) (sp Speed, ok bool) {
	measured.Lock()
	defer measured.Unlock()
	if sp, ok = measured.m[speedKey{d, c.ID()}]; ok || len(b) < o.SpeedMin {
		return sp, ok
	}
	b = b[:min(len(b), o.SpeedMax)/d.Size()*d.Size()]
	meta := tensor.Meta{DType: d, Shape: []int64{int64(len(b) / d.Size())}}
	back := make([]byte, len(b))
	for range o.SpeedRuns {
		start := time.Now()
		f, err := frame.Encode(meta, b, c.Name(), frame.Options{})
		mid := time.Now()
		if err != nil {
			return sp, false
		} else if _, err := frame.Decode(context.Background(), f, back, frame.DefaultLimits); err != nil {
			return sp, false
		}
		sp.Encode = max(sp.Encode, float64(len(b))/max(mid.Sub(start).Seconds(), 1e-9))
		sp.Decode = max(sp.Decode, float64(len(b))/max(time.Since(mid).Seconds(), 1e-9))
	}
	if measured.m == nil {
		measured.m = map[speedKey]Speed{}
	}
	measured.m[speedKey{d, c.ID()}] = sp
	return sp, true
}
