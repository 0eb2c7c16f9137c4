package binding

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
	"github.com/gotensor/gotensor/gotensor/store"
)

// Views: a read that returns a tensor viewing the stored bytes in place
// (core.View) crosses to Python as a DLPack managed tensor, a 1-d uint8
// tensor of the view's bytes (torch.from_dlpack takes it; Python views it
// as the dtype and shape Read's meta gives), whose deleter releases the
// view when torch frees the tensor. Where the tensor cannot be viewed it
// is read as a copy: the call returns a fetch handle instead.

// openViews are the views handed out and not yet released, by id.
var (
	openViews sync.Map // int64 -> *core.View
	viewIDs   atomic.Int64
)

// View fetches the tensor under key for reading in place and describes it
// in meta (as Read does). It returns the address of a DLPack managed
// tensor (> 0) over the view's bytes, or the negated fetch handle of a
// copy to decode (Decode) where the tensor cannot be viewed.
func View(h int64, key string, meta []int64, timeoutNs int64) (int64, error) {
	s, ctx, cancel, err := syncCall(h, key, timeoutNs)
	if err != nil {
		return 0, err
	}
	defer cancel()
	return view(ctx, s, key, meta)
}

// Maps says whether h's store maps frames for views (core.Store.Maps).
func Maps(h int64) bool {
	s := storeFor(h)
	return s != nil && s.Maps()
}

// StartView is View on a goroutine: the completion's value is View's.
func StartView(h int64, key string, meta []int64, timeoutNs int64) int64 {
	s := storeFor(h)
	return start(s, h, key, timeoutNs, func(ctx context.Context) (int64, error) {
		if s == nil {
			return noValue(badStore(h))
		}
		return view(ctx, s, key, meta)
	})
}

func view(ctx context.Context, s *openStore, key string, meta []int64) (int64, error) {
	v, err := s.View(ctx, key)
	if err != nil {
		return 0, ctxError(ctx, err)
	}
	if v != nil && !viewsCross {
		v.Release()
		v = nil
	}
	if v == nil { // read a copy
		f, err := s.Fetch(ctx, key)
		if err != nil {
			return 0, ctxError(ctx, err)
		}
		if err := putMeta(meta, f.Header); err != nil {
			release(f)
			return 0, err
		}
		return -fetches.add(f), nil
	}
	if err := putMeta(meta, v.Header); err != nil {
		v.Release()
		return 0, err
	}
	id := viewIDs.Add(1)
	openViews.Store(id, v)
	sweep()
	addr, err := crossView(v, id)
	if err != nil {
		viewDone(id)
		return 0, err
	}
	return addr, nil
}

// viewDone releases view id (its tensor was freed).
func viewDone(id int64) {
	if v, ok := openViews.LoadAndDelete(id); ok {
		v.(*core.View).Release()
	}
}

// sweepEvery is how often freed views are released while views are out,
// for a program that frees its views and calls nothing more: their
// mappings, and frames a delete or a close left to them, go within it.
const sweepEvery = 100 * time.Millisecond

var sweeping atomic.Bool

// sweep starts the sweeper unless it runs; it stops once no view is out.
func sweep() {
	if sweeping.Load() || sweeping.Swap(true) { // a load first: each view calls this
		return
	}
	go func() {
		for {
			time.Sleep(sweepEvery)
			if OpenViews() > 0 {
				continue
			}
			sweeping.Store(false)
			// a view handed out before the Store found the sweeper running
			if OpenViews() == 0 || sweeping.Swap(true) {
				return
			}
		}
	}()
}

// OpenViews is the number of views handed out and not yet released (freed
// views are released first).
func OpenViews() int {
	releaseFreed()
	n := 0
	openViews.Range(func(any, any) bool { n++; return true })
	return n
}

// ViewCountsJSON describes this process's views: open (handed out, not yet
// released), mappings made and reused, pinned, bytes restored into pinned
// mappings, and released mappings not yet back in their pools.
func ViewCountsJSON() string {
	c := &store.Views
	b, _ := json.Marshal(map[string]int64{
		"open": int64(OpenViews()), "maps": c.Maps.Load(), "reused": c.Reused.Load(), "live_maps": c.Live.Load(),
		"pinned": c.Pinned.Load(), "restored_bytes": c.Restored.Load(), "recycle_pending": store.RecyclePending(),
		"mapped_now": cowmap.Counts.Mapped.Load() - cowmap.Counts.Unmapped.Load(), "reverted_pages": cowmap.Counts.Reverted.Load(),
	})
	return string(b)
}
