package core_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

var ctx = context.Background()

// rowOf is row i of a writer's tensor: 256 bytes it alone writes.
func rowOf(writer, i int) []byte {
	b := make([]byte, 256)
	for j := range b {
		b[j] = byte(writer*31 + i*7 + j%5)
	}
	return b
}

// Two writers of different rows of one key, each keeping the frame's
// header between its writes (two goroutines on one Store, and two Stores
// on one mem or dir store), lose no row: every row is what its writer
// wrote last, for codecs that keep and that change chunk lengths, with a
// chunk a row and with rows sharing chunks.
func TestConcurrentRowWritersLoseNoRow(t *testing.T) {
	dir, err := store.OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, st := range []store.Store{store.NewMem("mem://", 0), dir} {
		one := core.Wrap(st)
		for _, pair := range [][2]*core.Store{{one, one}, {one, core.Wrap(st)}} {
			for _, codec := range []string{"none", "zstd"} {
				for _, chunkRows := range []int{1, 32} {
					name := fmt.Sprintf("%s/%s/rows-a-chunk=%d/stores=%d", st.URL()[:4], codec, chunkRows, 1+btoi(pair[0] != pair[1]))
					t.Run(name, func(t *testing.T) { concurrentRows(t, pair, codec, chunkRows) })
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func concurrentRows(t *testing.T, pair [2]*core.Store, codec string, chunkRows int) {
	const rows = 64
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{rows, 256}}
	wctx := core.WithChunkRows(ctx, int64(chunkRows))
	if err := pair[0].WriteTensor(wctx, "kv", meta, make([]byte, rows*256), codec); err != nil {
		t.Fatal(err)
	}
	row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pass := range 3 {
				for i := w; i < rows; i += 2 { // writer w owns rows of its parity
					if err := pair[w].WriteRows(ctx, "kv", int64(i), row, rowOf(w+2*pass, i)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	got := make([]byte, rows*256)
	if err := pair[0].ReadRows(ctx, "kv", 0, meta, got); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if want := rowOf(i%2+4, i); !bytes.Equal(got[i*256:(i+1)*256], want) {
			t.Fatalf("row %d lost: not its writer's last", i)
		}
	}
}

// replacing is a store whose next edit or splice finds the frame replaced
// (by a Put of frame) after the writer read it.
type replacing struct {
	*store.Mem
	frame []byte
	once  atomic.Bool
}

func (r *replacing) Caps() store.Caps {
	c := r.Mem.Caps()
	c.Editor, c.Checked = r, r
	return c
}

func (r *replacing) replace(ctx context.Context, key string) {
	if r.frame != nil && r.once.CompareAndSwap(false, true) {
		r.Mem.PutChecked(ctx, key, bytes.Clone(r.frame))
	}
}

func (r *replacing) EditChecked(ctx context.Context, key string, ver uint64, e store.Edit) (uint64, bool, error) {
	r.replace(ctx, key)
	return r.Mem.EditChecked(ctx, key, ver, e)
}

func (r *replacing) SpliceChecked(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error) {
	r.replace(ctx, key)
	return r.Mem.SpliceChecked(ctx, key, old, header, off, n, data)
}

// A Put that replaces the frame between a row write's read and its edit
// (with the same header: a tensor of the same shape and codec) is not
// overwritten by an edit computed from the old frame: the write is done
// again on the new one, whose other rows stay.
func TestRowWriteAfterFrameReplaced(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{16, 256}}
	row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
	for _, chunkRows := range []int{1, 16} {
		st := &replacing{Mem: store.NewMem("mem://", 0)}
		s := core.Wrap(st)
		wctx := core.WithChunkRows(ctx, int64(chunkRows))
		newer := bytes.Repeat([]byte{9}, 16*256)
		// the replacing frame: encoded by a second store, taken from it
		src := store.NewMem("mem://", 0)
		if err := core.Wrap(src).WriteTensor(wctx, "kv", meta, newer, "none"); err != nil {
			t.Fatal(err)
		}
		st.frame, _ = src.Get(ctx, "kv")
		if err := s.WriteTensor(wctx, "kv", meta, make([]byte, 16*256), "none"); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteRows(ctx, "kv", 3, row, rowOf(1, 3)); err != nil { // parses, then finds it replaced
			t.Fatal(err)
		}
		got := make([]byte, 16*256)
		if err := s.ReadRows(ctx, "kv", 0, meta, got); err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(newer)
		copy(want[3*256:], rowOf(1, 3))
		if !bytes.Equal(got, want) {
			t.Fatalf("%d rows a chunk: the write went over the replaced frame's rows", chunkRows)
		}
	}
}

// A header kept from an earlier write is not used once another Store on
// the same mem store replaced the frame: the next write lands on the new
// frame, whose other rows stay.
func TestKeptHeaderNotUsedAfterReplace(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{16, 256}}
	row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
	st := store.NewMem("mem://", 0)
	a, b := core.Wrap(st), core.Wrap(st)
	wctx := core.WithChunkRows(ctx, 1)
	if err := a.WriteTensor(wctx, "kv", meta, make([]byte, 16*256), "zstd"); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteRows(ctx, "kv", 0, row, rowOf(0, 0)); err != nil { // a keeps the header
		t.Fatal(err)
	}
	newer := bytes.Repeat([]byte{5}, 16*256)
	if err := b.WriteTensor(wctx, "kv", meta, newer, "zstd"); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteRows(ctx, "kv", 15, row, rowOf(0, 15)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 16*256)
	if err := b.ReadRows(ctx, "kv", 0, meta, got); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(newer)
	copy(want[15*256:], rowOf(0, 15))
	if !bytes.Equal(got, want) {
		t.Fatal("the write used a header kept from the replaced frame")
	}
}
