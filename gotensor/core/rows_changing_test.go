package core_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// changingStore is a store across a link, as a node's client is: a row
// read takes the frame's header (Head), then ranges of it (GetRange), each
// a call of its own. Before each of its first changes ranges another
// writer writes row 40 (an append to a KV cache) between the two.
type changingStore struct {
	store.Store // the frames, on mem://
	writer      *core.Store
	changes     atomic.Int32
	wrote       atomic.Int32
}

// Caps: ranged reads only, as a store across a link serves them.
func (s *changingStore) Caps() store.Caps { return store.Caps{Ranges: s} }

func (s *changingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	if s.changes.Add(-1) >= 0 {
		k := s.wrote.Add(1)
		row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
		if err := s.writer.WriteRows(ctx, key, 40, row, bytes.Repeat([]byte{byte(k)}, 256)); err != nil {
			return nil, 0, err
		}
	}
	b, size, release, err := store.LeaseRange(ctx, s.Store, key, off, n)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	return bytes.Clone(b), size, nil
}

// kvOnChangingStore writes a 64-row cache of a chunk a row (coded none:
// an append edits the frame in place, its size unchanged) and returns the
// store whose ranges change it changes times, and a reader through it.
func kvOnChangingStore(t *testing.T, changes int32) (*changingStore, *core.Store) {
	t.Helper()
	mem := store.NewMem("mem://", 0)
	w := core.Wrap(mem)
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{64, 256}}
	if err := w.WriteTensor(core.WithChunkRows(ctx, 1), "kv", meta, make([]byte, 64*256), "none"); err != nil {
		t.Fatal(err)
	}
	cs := &changingStore{Store: mem, writer: w}
	cs.changes.Store(changes)
	return cs, core.Wrap(cs)
}

// A row read whose frame a writer changes between its header and its
// chunks, three times running, reads the header again each time and
// returns the rows as they are at last; it used to give up after one
// retry with a false CorruptData (33 in 28,596 reads from a node while
// another process appended).
func TestRowReadRetriesWhileTheFrameChanges(t *testing.T) {
	cs, r := kvOnChangingStore(t, 3)
	want := tensor.Meta{DType: tensor.Uint8, Shape: []int64{8, 256}}
	dst := make([]byte, 8*256)
	if err := r.ReadRows(ctx, "kv", 40, want, dst); err != nil {
		t.Fatalf("after %d changes: %v", cs.wrote.Load(), err)
	}
	if !bytes.Equal(dst[:256], bytes.Repeat([]byte{3}, 256)) || !bytes.Equal(dst[256:], make([]byte, 7*256)) {
		t.Fatalf("rows read are not the last written: row 40 starts %v", dst[:4])
	}
}

// Bytes that are corrupt are CorruptData still: a second read through the
// same header fails the same way.
func TestRowReadOfCorruptBytesIsCorruptData(t *testing.T) {
	cs, r := kvOnChangingStore(t, 0)
	f, err := cs.Store.Get(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(f)
	bad[len(bad)-20*256] ^= 1 // in row 44's chunk
	if err := cs.Store.Put(ctx, "kv", bad); err != nil {
		t.Fatal(err)
	}
	want := tensor.Meta{DType: tensor.Uint8, Shape: []int64{8, 256}}
	if err := r.ReadRows(ctx, "kv", 40, want, make([]byte, 8*256)); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("got %v", err)
	}
}

// A frame that changes under every read ends the read Unavailable (other
// writers, not corruption), after a bounded number of tries.
func TestRowReadOfAFrameThatNeverSettles(t *testing.T) {
	cs, r := kvOnChangingStore(t, 1000)
	want := tensor.Meta{DType: tensor.Uint8, Shape: []int64{8, 256}}
	err := r.ReadRows(ctx, "kv", 40, want, make([]byte, 8*256))
	if !errs.Is(err, errs.Unavailable) || cs.wrote.Load() > 100 {
		t.Fatalf("after %d changes: %v", cs.wrote.Load(), err)
	}
}

// Rows read from a memory node while another client appends rows to the
// same cache are never CorruptData.
func TestRowReadsFromANodeWhileRowsAreAppended(t *testing.T) {
	r := nodeStore(t)
	w, err := core.Open(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const rows = 256
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{rows, 256}}
	if err := w.WriteTensor(core.WithChunkRows(ctx, 1), "kv", meta, make([]byte, rows*256), "none"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		row := tensor.Meta{DType: tensor.Uint8, Shape: []int64{1, 256}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := w.WriteRows(ctx, "kv", int64(i%rows), row, bytes.Repeat([]byte{byte(i)}, 256)); err != nil {
				done <- err
				return
			}
		}
	}()
	want := tensor.Meta{DType: tensor.Uint8, Shape: []int64{32, 256}}
	dst := make([]byte, 32*256)
	for i := 0; i < 1000; i++ {
		if err := r.ReadRows(ctx, "kv", int64(i*7%(rows-32)), want, dst); err != nil {
			close(stop)
			t.Fatalf("read %d: %v", i, err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
