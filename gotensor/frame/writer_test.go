package frame

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

func newWriter(t testing.TB, meta tensor.Meta, spec string, opt Options, alloc Alloc) *Writer {
	c, p, err := codec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(meta, c, p, opt, alloc)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// writeShuffled writes raw to w in two-chunk parts, in random order and
// concurrently, and says the parts were not retained.
func writeShuffled(t *testing.T, w *Writer, raw []byte, take func()) {
	seg := w.ChunkSize() * 2
	var offs []int64
	for o := int64(0); o < w.RawSize(); o += seg {
		offs = append(offs, o)
	}
	rand.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
	var wg sync.WaitGroup
	for _, o := range offs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := bytes.Clone(raw[o:min(o+seg, w.RawSize())])
			if err := w.WriteAt(part, o); err != nil {
				t.Error(err)
			}
			clear(part) // not retained
			if take != nil {
				take()
			}
		}()
	}
	wg.Wait()
}

// Parts written in any order, concurrently, whole or in pieces, give the
// frame Encode gives. Taking chunks while other parts are written is the
// race the old Encoder had (run with -race).
func TestWriterPartsMatchEncode(t *testing.T) {
	for _, spec := range []string{"none", "planes", "q4", "zstd", "lz4"} {
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{64, 5000}}
		raw := weights(meta.DType, 64*5000, 4)
		opt := Options{ChunkSize: 64 << 10}
		want, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		w := newWriter(t, meta, spec, opt, Heap)
		writeShuffled(t, w, raw, nil)
		got, err := w.Finish()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: whole frame from parts differs from Encode (%v)", spec, err)
		}

		s := newWriter(t, meta, spec, opt, nil)
		var mu sync.Mutex
		var taken [][]byte
		writeShuffled(t, s, raw, func() {
			ch := s.Take()
			mu.Lock()
			taken = append(taken, ch...)
			mu.Unlock()
		})
		taken = append(taken, s.Take()...)
		hdr, err := s.HeaderBytes()
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(append([][]byte{hdr}, taken...), nil); !bytes.Equal(got, want) {
			t.Fatalf("%s: streamed frame differs from Encode", spec)
		}

		// and decodes range by range
		r, err := NewReader(want, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		seg := int64(r.Header.ChunkSize) * 2
		dst := make([]byte, len(raw))
		for o := int64(0); o < r.Header.RawSize; o += seg {
			if err := r.DecodeRange(ctx, o, dst[o:min(o+seg, r.Header.RawSize)], nil); err != nil {
				t.Fatal(err)
			}
		}
		full := make([]byte, len(raw))
		Decode(ctx, want, full, DefaultLimits)
		if !bytes.Equal(dst, full) {
			t.Fatalf("%s: ranged decode differs", spec)
		}
	}
}

func TestWriterRefusesMisalignedAndIncomplete(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{200000}}
	w := newWriter(t, meta, "none", Options{ChunkSize: 64 << 10}, Heap)
	raw := make([]byte, 200000)
	if err := w.WriteAt(raw[:1000], 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("short part: %v", err)
	}
	if err := w.WriteAt(raw[:65536], 100); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("misaligned: %v", err)
	}
	if err := w.WriteAt(raw[:65536], 0); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAt(raw[:65536], 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("rewrite: %v", err)
	}
	if _, err := w.Finish(); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("incomplete finish: %v", err)
	}
	if err := w.WriteAt(raw[65536:], 65536); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAt(raw[:65536], 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("write after finish: %v", err)
	}
}

// countingAlloc records what a writer takes from and gives back to a store.
type countingAlloc struct {
	mu        sync.Mutex
	got, back int
}

func (a *countingAlloc) Get(n int) []byte {
	a.mu.Lock()
	a.got++
	a.mu.Unlock()
	return make([]byte, n)
}
func (a *countingAlloc) Put([]byte) { a.mu.Lock(); a.back++; a.mu.Unlock() }

// An aborted codec-none writer gives its lent frame buffer back.
func TestWriterAbortReturnsBuffer(t *testing.T) {
	a := &countingAlloc{}
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{200000}}
	w := newWriter(t, meta, "none", Options{}, a)
	w.WriteAt(make([]byte, w.ChunkSize()), 0)
	w.Abort()
	w.Abort()
	if a.got != 1 || a.back != 1 {
		t.Fatalf("lent %d, returned %d", a.got, a.back)
	}
}

// source serves a frame by ranges, like a store across a link.
type source struct {
	frame []byte
	block chan struct{} // when set, ranges wait on it or on ctx
}

func (s *source) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return nil, errs.Wrap(errs.Timeout, ctx.Err(), "range")
		}
	}
	return s.frame[off:min(off+n, int64(len(s.frame)))], nil
}

// A frame read in pieces decodes like one at hand, and a blocked fetch
// ends with the caller's deadline.
func TestReaderPiecesAndDeadline(t *testing.T) {
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	raw := weights(meta.DType, 1<<20, 5)
	f, err := Encode(meta, raw, "planes", Options{ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	src := &source{frame: f}
	r, err := OpenReader(ctx, src, f[:100], int64(len(f)), 200<<10, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(raw))
	if err := r.Decode(ctx, dst, nil); err != nil || !bytes.Equal(dst, raw) {
		t.Fatalf("pieces: %v", err)
	}
	if _, err := OpenReader(ctx, src, f[:100], int64(len(f))+1, 200<<10, DefaultLimits); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("wrong size: %v", err)
	}
	src.block = make(chan struct{})
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := r.Decode(tctx, dst, nil); !errs.Is(err, errs.Timeout) {
		t.Fatalf("blocked fetch: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the deadline did not end the read")
	}
}

// intoSource is a source that also places ranges in the reader's memory;
// scribble, when set, changes what lands there (another writer of the
// same memory at once).
type intoSource struct {
	source
	into     atomic.Int32 // ranges placed in the reader's memory
	scribble bool
}

func (s *intoSource) ReadRangeInto(ctx context.Context, off int64, dst []byte) (bool, error) {
	b, err := s.ReadRange(ctx, off, int64(len(dst)))
	if err != nil {
		return true, err
	}
	s.into.Add(1)
	copy(dst, b)
	if s.scribble {
		dst[len(dst)/2] ^= 1
	}
	return true, nil
}

// Raw chunks fetched from a source that places ranges in the reader's
// memory land there and are checked in place; coded ones are not asked of
// it. A chunk that fails its checksum in place is CorruptData when the
// source's bytes are bad, and InvalidArgument (the caller's race) when
// they are good and only the reader's memory changed.
func TestReaderChecksRangesPlacedInItsMemory(t *testing.T) {
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	raw := weights(meta.DType, 1<<20, 5)
	read := func(f []byte, scribble bool) (*intoSource, []byte, error) {
		src := &intoSource{source: source{frame: f}, scribble: scribble}
		r, err := OpenReader(ctx, src, f[:100], int64(len(f)), 200<<10, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(raw))
		return src, dst, r.Decode(ctx, dst, nil)
	}
	f, err := Encode(meta, raw, "none", Options{ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if src, dst, err := read(f, false); err != nil || !bytes.Equal(dst, raw) || src.into.Load() == 0 {
		t.Fatalf("raw: %v, %d ranges placed", err, src.into.Load())
	}
	if _, _, err := read(f, true); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("reader's memory changed: %v, want InvalidArgument", err)
	}
	bad := bytes.Clone(f)
	bad[len(bad)-10] ^= 0x40
	if _, _, err := read(bad, false); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("corrupt chunk: %v, want CorruptData", err)
	}
	coded, err := Encode(meta, raw, "planes", Options{ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if src, dst, err := read(coded, false); err != nil || !bytes.Equal(dst, raw) || src.into.Load() != 0 {
		t.Fatalf("coded: %v, %d ranges placed", err, src.into.Load())
	}
}
