package core_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

// rowStores are the stores the row tests run on: embedded, directory, a
// memory node over tcp, keys sharded over two nodes, and (where
// redis-server is installed) a Redis server and a 3-master cluster.
func rowStores(t *testing.T) []*core.Store {
	t.Helper()
	var urls []string
	urls = append(urls, "mem://", "file://"+t.TempDir())
	nodes := startNodes(t, 2)
	urls = append(urls, "tcp://"+nodes[0], "tcp://"+nodes[0]+","+nodes[1])
	if redistest.Available(t) { // a Redis server and cluster, in pieces of 64 KiB so that frames are split
		srv := redistest.Start(t)
		c := redistest.StartCluster(t, 3, 0)
		urls = append(urls, "redis://"+srv.Addr()+"?piece=64KiB", "redis://"+c.Nodes[0].Addr()+"?piece=64KiB")
	}
	var out []*core.Store
	for _, u := range urls {
		s, err := core.Open(u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

// fill makes n bytes some codecs compress and some do not, so chunks of
// different encoded lengths are spliced.
func fill(r *rand.Rand, b []byte) {
	mode := r.IntN(3)
	for i := range b {
		switch mode {
		case 0:
			b[i] = byte(r.Uint32())
		case 1:
			b[i] = byte(i / 7)
		default:
			b[i] = byte(r.IntN(4))
		}
	}
}

// Any sequence of row writes and row reads gives what the same slice
// assignments and slices give on the tensor's bytes held in memory.
func TestRowsProperty(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(13, 1))
	codecs := []string{"none", "planes", "lz4", "zstd", "shuffle-deflate", "auto"}
	dtypes := []tensor.DType{tensor.Float32, tensor.BFloat16, tensor.Float16}
	for si, s := range rowStores(t) {
		for round := range 12 {
			s.Frame.ChunkSize = []int{0, 4096, 4096 + 16*r.IntN(300)}[r.IntN(3)]
			s.Frame.AlignRows = r.IntN(3) > 0
			dt := dtypes[r.IntN(len(dtypes))]
			spec := codecs[r.IntN(len(codecs))]
			shape := []int64{int64(1 + r.IntN(300))}
			for range r.IntN(3) {
				shape = append(shape, int64(1+r.IntN(24)))
			}
			meta := tensor.Meta{DType: dt, Shape: shape}
			n, _ := meta.NumBytes()
			row := frame.RowBytes(meta)
			model := make([]byte, n)
			fill(r, model)
			key := fmt.Sprintf("t%d.%d", si, round)
			name := fmt.Sprintf("%s %s %s%v chunk=%d align=%v", s.URL(), spec, dt, shape, s.Frame.ChunkSize, s.Frame.AlignRows)
			if err := s.WriteTensor(ctx, key, meta, model, spec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for range 25 {
				a := int64(r.IntN(int(shape[0]) + 1))
				b := a + int64(r.IntN(int(shape[0]-a)+1))
				rows := tensor.Meta{DType: dt, Shape: append([]int64{b - a}, shape[1:]...)}
				if r.IntN(2) == 0 {
					part := make([]byte, (b-a)*row)
					fill(r, part)
					if err := s.WriteRows(ctx, key, a, rows, part); err != nil {
						t.Fatalf("%s: write rows [%d:%d): %v", name, a, b, err)
					}
					copy(model[a*row:], part)
					continue
				}
				got := make([]byte, (b-a)*row)
				if err := s.ReadRows(ctx, key, a, rows, got); err != nil {
					t.Fatalf("%s: read rows [%d:%d): %v", name, a, b, err)
				}
				if !bytes.Equal(got, model[a*row:b*row]) {
					t.Fatalf("%s: rows [%d:%d) differ", name, a, b)
				}
			}
			whole := make([]byte, n)
			if err := s.ReadTensor(ctx, key, meta, whole); err != nil || !bytes.Equal(whole, model) {
				t.Fatalf("%s: whole tensor after row writes: %v", name, err)
			}
		}
	}
}

func TestRowsErrors(t *testing.T) {
	ctx := context.Background()
	s, err := core.Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{10, 3}}
	if err := s.WriteTensor(ctx, "k", meta, make([]byte, 120), "none"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		start int64
		rows  tensor.Meta
	}{
		{9, tensor.Meta{DType: tensor.Float32, Shape: []int64{2, 3}}},  // past the end
		{-1, tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 3}}}, // before the start
		{0, tensor.Meta{DType: tensor.Float16, Shape: []int64{2, 3}}},  // dtype
		{0, tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 4}}},  // trailing shape
		{0, tensor.Meta{DType: tensor.Float32, Shape: []int64{3}}},     // rank
	} {
		n, _ := c.rows.NumBytes()
		if err := s.WriteRows(ctx, "k", c.start, c.rows, make([]byte, n)); !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("write %d %v: %v", c.start, c.rows, err)
		}
		if err := s.ReadRows(ctx, "k", c.start, c.rows, make([]byte, n)); !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("read %d %v: %v", c.start, c.rows, err)
		}
	}
	one := tensor.Meta{DType: tensor.Float32, Shape: []int64{1, 3}}
	if err := s.WriteRows(ctx, "missing", 0, one, make([]byte, 12)); !errs.Is(err, errs.KeyNotFound) {
		t.Errorf("missing key: %v", err)
	}
	if err := s.WriteRows(ctx, "k", 0, one, make([]byte, 11)); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("short buffer: %v", err)
	}
}

// A one-row append to a tensor of 4096 rows re-encodes and a read of
// [0:pos) decodes what they do for 256 rows: the chunks they touch.
func TestRowsCostTheirChunks(t *testing.T) {
	ctx := context.Background()
	s, err := core.Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	appendCost := func(rows int64) (enc, dec int64) {
		meta := tensor.Meta{DType: tensor.Float16, Shape: []int64{rows, 48, 64}} // FlexGen's KV cache layout
		n, _ := meta.NumBytes()
		raw := make([]byte, n)
		key := fmt.Sprint("kv", rows)
		if err := s.WriteTensor(ctx, key, meta, raw, "planes"); err != nil {
			t.Fatal(err)
		}
		one := tensor.Meta{DType: tensor.Float16, Shape: []int64{1, 48, 64}}
		part := bytes.Repeat([]byte{1, 60}, 48*64)
		e0, d0 := frame.Work.Encoded.Load(), frame.Work.Decoded.Load()
		if err := s.WriteRows(ctx, key, rows/2, one, part); err != nil {
			t.Fatal(err)
		}
		return frame.Work.Encoded.Load() - e0, frame.Work.Decoded.Load() - d0
	}
	e256, d256 := appendCost(256)
	e4096, d4096 := appendCost(4096)
	if e4096 > e256*3/2 || d4096 > d256*3/2 || e4096 > 1<<20 {
		t.Fatalf("one-row append: 256 rows encode %d decode %d bytes, 4096 rows encode %d decode %d", e256, d256, e4096, d4096)
	}
	rows := tensor.Meta{DType: tensor.Float16, Shape: []int64{100, 48, 64}}
	d0 := frame.Work.Decoded.Load()
	if err := s.ReadRows(ctx, "kv4096", 0, rows, make([]byte, 100*48*64*2)); err != nil {
		t.Fatal(err)
	}
	if got := frame.Work.Decoded.Load() - d0; got > 2*100*48*64*2+1<<20 {
		t.Fatalf("reading 100 rows of 4096 decoded %d bytes", got)
	}
}
