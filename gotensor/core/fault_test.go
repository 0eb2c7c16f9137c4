package core

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/faultcodec"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A codec that panics on a large tensor, coded on parallel workers and
// streamed piece by piece, fails that call with Internal; the process
// lives (on the old code the test binary died).
func TestCodecPanicIsInternalError(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 1<<20
	parallel.SetWorkers(4)
	defer parallel.SetWorkers(0)
	file, err := Open("file://" + t.TempDir() + "?fsync=false")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	mem, _ := Open("mem://")
	streamed := Wrap(&partStore{Mem: store.NewMem("mem://parts", 0)})
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{4 << 20}}
	raw := weights(4 << 20) // 8 MiB
	dst := make([]byte, len(raw))
	for name, s := range map[string]*Store{"mem": mem, "file": file, "streamed": streamed} {
		if err := s.WriteTensor(ctx, "p", meta, raw, faultcodec.PanicEncode); !errs.Is(err, errs.Internal) {
			t.Fatalf("%s: encode panic: %v", name, err)
		}
		if err := s.WriteTensor(ctx, "p", meta, raw, faultcodec.PanicDecode); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.ReadTensor(ctx, "p", meta, dst); !errs.Is(err, errs.Internal) {
			t.Fatalf("%s: decode panic: %v", name, err)
		}
		small := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1000}} // one chunk, coded inline
		if err := s.WriteTensor(ctx, "s", small, raw[:1000], faultcodec.PanicEncode); !errs.Is(err, errs.Internal) {
			t.Fatalf("%s: small encode panic: %v", name, err)
		}
		s.WriteTensor(ctx, "s", small, raw[:1000], faultcodec.PanicDecode)
		if err := s.ReadTensor(ctx, "s", small, dst[:1000]); !errs.Is(err, errs.Internal) {
			t.Fatalf("%s: small decode panic: %v", name, err)
		}
		w, err := s.BeginWrite(ctx, "q", meta, faultcodec.PanicEncode)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteAt(raw, 0); !errs.Is(err, errs.Internal) {
			t.Fatalf("%s: staged encode panic: %v", name, err)
		}
		w.Abort()
	}
}

// blockingStore serves the first piece of a frame, then blocks every
// range fetch and whole read until the caller's context is done.
type blockingStore struct {
	*partStore
	block atomic.Bool
}

func (b *blockingStore) Caps() store.Caps {
	c := b.partStore.Caps()
	c.Ranges = b
	return c
}

func (b *blockingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	if b.block.Load() && off > 0 {
		<-ctx.Done()
		return nil, 0, errs.Wrap(errs.Timeout, ctx.Err(), "range")
	}
	return b.partStore.GetRange(ctx, key, off, n)
}

func (b *blockingStore) Get(ctx context.Context, key string) ([]byte, error) {
	if b.block.Load() {
		<-ctx.Done()
		return nil, errs.Wrap(errs.Timeout, ctx.Err(), "get")
	}
	return b.partStore.Get(ctx, key)
}

// Every wait of a read honours the caller's deadline: piece fetches, and
// the re-read of a frame replaced mid-read (on the old code, that re-read
// ignored the deadline and the read hung).
func TestReadWaitsHonourDeadline(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 256<<10
	bs := &blockingStore{partStore: &partStore{Mem: store.NewMem("mem://parts", 0)}}
	s := Wrap(bs)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	a := weights(1 << 20)
	if err := s.WriteTensor(ctx, "w", meta, a, "planes"); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(a))
	read := func(what string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.ReadTensor(tctx, "w", meta, dst) }()
		select {
		case err := <-done:
			if !errs.Is(err, errs.Timeout) {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read ignored its deadline", what)
		}
	}
	bs.block.Store(true)
	read("blocked piece")
	// a replacement mid-read leads to a re-read of the whole frame, which blocks
	bs.block.Store(false)
	bs.replace = func() {
		s.WriteTensor(ctx, "w", meta, a[:len(a)/2*2], "none")
		bs.block.Store(true)
	}
	bs.ranges = 0
	read("blocked re-read")
}
