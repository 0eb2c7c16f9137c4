package core

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// partStore records how frames come and go in pieces.
type partStore struct {
	*store.Mem
	mu          sync.Mutex
	parts       int // parts written before the last commit
	ranges      int // GetRange calls
	corruptNext bool
	replace     func()   // runs before the second range of a read
	layout      [2]int64 // the last write's announced header and payload lengths
}

// Caps: a memory store that also streams, as a store across a link does.
func (p *partStore) Caps() store.Caps {
	c := p.Mem.Caps()
	c.Stream, c.Ranges, c.Nonblocking = p, p, false
	return c
}

func (p *partStore) PutStream(ctx context.Context, key string) (store.PartSink, error) {
	return &countingSink{PartSink: store.BufferedStream(ctx, p.Mem, key), p: p}, nil
}

type countingSink struct {
	store.PartSink
	p *partStore
	n int
}

func (c *countingSink) WritePart(off int64, b []byte) error {
	c.n++
	return c.PartSink.WritePart(off, b)
}
func (c *countingSink) Announce(header int, payload int64) error {
	c.p.mu.Lock()
	c.p.layout = [2]int64{int64(header), payload}
	c.p.mu.Unlock()
	return c.PartSink.Announce(header, payload)
}

func (c *countingSink) Commit(h []byte) error {
	c.p.mu.Lock()
	c.p.parts = c.n
	c.p.mu.Unlock()
	return c.PartSink.Commit(h)
}

func (p *partStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	p.mu.Lock()
	p.ranges++
	r, replace, corrupt := p.ranges, p.replace, p.corruptNext
	if r == 2 {
		p.replace = nil
	}
	p.mu.Unlock()
	if r == 2 && replace != nil {
		replace()
	}
	b, size, err := store.ReadRange(ctx, p.Mem, key, off, n)
	if err == nil && off > 0 && corrupt {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 1
	}
	return b, size, err
}

func weights(n int) []byte {
	raw := make([]byte, 2*n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n { // bfloat16 of small normal values
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(math.Float32bits(float32(rng.NormFloat64()*0.02))>>16))
	}
	return raw
}

func TestStreamedWriteAndRead(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 256<<10
	ps := &partStore{Mem: store.NewMem("mem://parts", 0)}
	s := Wrap(ps)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{3 << 20}}
	raw := weights(3 << 20) // 6 MiB
	for _, codec := range []string{"none", "planes", "lz4", "shuffle-deflate", "auto"} {
		ps.ranges, ps.layout = 0, [2]int64{}
		if err := s.WriteTensor(ctx, "w", meta, raw, codec); err != nil {
			t.Fatal(err)
		}
		if got, _ := ps.Mem.Get(ctx, "w"); codec == "none" { // its layout is known up front, and announced
			if hl, _ := frame.HeaderLen(got); ps.layout != [2]int64{int64(hl), int64(len(raw))} {
				t.Fatalf("none: announced %v, the frame has a %d-byte header and %d payload bytes", ps.layout, hl, len(raw))
			}
		} else if codec != "auto" && ps.layout != [2]int64{} {
			t.Fatalf("%s: a coded frame's layout was announced: %v", codec, ps.layout)
		}
		if ps.parts < 4 {
			t.Fatalf("%s: %d parts: the write did not stream", codec, ps.parts)
		}
		dst := make([]byte, len(raw))
		if err := s.ReadTensor(ctx, "w", meta, dst); err != nil || !bytes.Equal(dst, raw) {
			t.Fatalf("%s: %v", codec, err)
		}
		if ps.ranges < 3 {
			t.Fatalf("%s: %d ranges: the read did not stream", codec, ps.ranges)
		}
		// a ranged decode (how CUDA reads are staged) streams the same way
		f, err := s.Fetch(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		cs := int(f.Header.ChunkSize)
		part := make([]byte, 2*cs)
		if err := f.DecodeRange(ctx, int64(2*cs), part); err != nil || !bytes.Equal(part, raw[2*cs:4*cs]) {
			t.Fatalf("%s: range: %v", codec, err)
		}
		// the streamed frame is byte for byte the frame a whole write makes
		got, _ := ps.Mem.Get(ctx, "w")
		if codec == "auto" {
			continue
		}
		if whole, _ := frame.Encode(meta, raw, codec, s.Frame); !bytes.Equal(got, whole) {
			t.Fatalf("%s: streamed frame differs from the whole-write frame", codec)
		}
	}
}

func TestStreamedReadSurvivesReplacementAndCatchesCorruption(t *testing.T) {
	defer func(m, p int64) { StreamMin, StreamPiece = m, p }(StreamMin, StreamPiece)
	StreamMin, StreamPiece = 1<<20, 256<<10
	ps := &partStore{Mem: store.NewMem("mem://parts", 0)}
	s := Wrap(ps)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 20}}
	a, b := weights(1<<20), weights(1<<20)
	b[0] ^= 0xff
	s.WriteTensor(ctx, "w", meta, a, "planes")
	// another writer replaces the tensor between the pieces of a read
	ps.replace = func() { s.WriteTensor(ctx, "w", meta, b, "none") }
	ps.ranges = 0
	dst := make([]byte, len(a))
	if err := s.ReadTensor(ctx, "w", meta, dst); err != nil || !bytes.Equal(dst, b) {
		t.Fatalf("replaced mid-read: %v", err)
	}
	// a piece corrupted in flight is caught; the retry reads the intact frame
	ps.mu.Lock()
	ps.corruptNext = true
	ps.mu.Unlock()
	err := s.ReadTensor(ctx, "w", meta, dst)
	if err != nil || !bytes.Equal(dst, b) {
		t.Fatalf("corrupted piece: %v", err)
	}
	// corruption in the store itself is CorruptData
	ps.mu.Lock()
	ps.corruptNext = false
	ps.mu.Unlock()
	f, _ := ps.Mem.Get(ctx, "w")
	bad := append([]byte(nil), f...)
	bad[len(bad)-100] ^= 1
	ps.Mem.Put(ctx, "w", bad)
	if err := s.ReadTensor(ctx, "w", meta, dst); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("corrupted frame: %v", err)
	}
}

// Parts back to back in memory go as one; others stay apart, in order.
func TestAdjacentPartsJoin(t *testing.T) {
	raw := []byte("abcdefghij")
	other := []byte("xyz")
	got := adjacent([][]byte{raw[0:2], raw[2:5], other, raw[5:7], raw[8:10]})
	var s []string
	for _, b := range got {
		s = append(s, string(b))
	}
	if want := []string{"abcde", "xyz", "fg", "ij"}; !slices.Equal(s, want) {
		t.Fatalf("joined %q, want %q", s, want)
	}
}
