//go:build linux

package core

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// viewStores are the stores views map: mem:// and file://.
func viewStores(t *testing.T) map[string]*Store {
	t.Helper()
	out := map[string]*Store{}
	for name, url := range map[string]string{"mem": "mem://", "file": "file://" + t.TempDir()} {
		s, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}

// expert is a bfloat16 1024x2048 matrix: 4 MiB.
var expert = tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1024, 2048}}

func mustView(t *testing.T, s *Store, key string) *View {
	t.Helper()
	v, err := s.View(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		t.Fatalf("%s: key %q gave no view", s.URL(), key)
	}
	return v
}

func readBack(t *testing.T, s *Store, key string, meta tensor.Meta) []byte {
	t.Helper()
	dst := make([]byte, len(randomBytes(0, 0))+int(must(meta.NumBytes())))
	if err := s.ReadTensor(ctx, key, meta, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// waitRecycled waits for released mappings to be back in their pools.
func waitRecycled(t *testing.T) {
	t.Helper()
	for i := 0; store.RecyclePending() > 0; i++ {
		if i > 2000 {
			t.Fatal("released mappings were not recycled")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestViewIsTheStoredBytesAlignedAndCounted(t *testing.T) {
	raw := randomBytes(4<<20, 1)
	for name, s := range viewStores(t) {
		if err := s.WriteTensor(ctx, "e", expert, raw, "none"); err != nil {
			t.Fatal(err)
		}
		v := mustView(t, s, "e")
		if !bytes.Equal(v.Data, raw) || !v.Header.Meta.Equal(expert) {
			t.Fatalf("%s: the view is not the tensor", name)
		}
		if name == "mem" && uintptr(unsafe.Pointer(&v.Data[0]))%4096 != 0 {
			t.Fatalf("mem: the payload does not start on a page")
		}
		v.Release()
		v.Release() // idempotent
		st := s.Stats()
		if st.Views != 1 || st.ViewCopies != 0 || st.ViewBytes != 4<<20 || st.Ops[OpView] != 1 {
			t.Fatalf("%s: stats %+v", name, st)
		}
	}
}

func TestWritesIntoAViewNeverReachTheStore(t *testing.T) {
	raw := randomBytes(4<<20, 2)
	for name, s := range viewStores(t) {
		if err := s.WriteTensor(ctx, "e", expert, raw, "none"); err != nil {
			t.Fatal(err)
		}
		v := mustView(t, s, "e")
		w := mustView(t, s, "e") // a second view at once: a mapping of its own
		for i := 0; i < len(v.Data); i += 4096 * 3 {
			v.Data[i] ^= 0xff
		}
		if !bytes.Equal(w.Data, raw) {
			t.Fatalf("%s: a write into one view shows in another", name)
		}
		if !bytes.Equal(readBack(t, s, "e", expert), raw) {
			t.Fatalf("%s: a write into a view reached the store", name)
		}
		addr := &v.Data[0]
		v.Release()
		w.Release()
		waitRecycled(t)
		for range 3 { // the mapping comes back, the written pages the store's again
			u := mustView(t, s, "e")
			if !bytes.Equal(u.Data, raw) {
				t.Fatalf("%s: a view after a written one shows the writes", name)
			}
			if &u.Data[0] != addr && &u.Data[0] != &w.Data[0] {
				t.Fatalf("%s: the released mapping was not reused", name)
			}
			u.Data[len(u.Data)-1] ^= 1
			u.Release()
			waitRecycled(t)
		}
	}
}

func TestAViewOutlivesReplaceDeleteAndClose(t *testing.T) {
	raw, other := randomBytes(4<<20, 3), randomBytes(4<<20, 4)
	for name, s := range viewStores(t) {
		for _, k := range []string{"replaced", "deleted"} {
			if err := s.WriteTensor(ctx, k, expert, raw, "none"); err != nil {
				t.Fatal(err)
			}
		}
		replaced, deleted := mustView(t, s, "replaced"), mustView(t, s, "deleted")
		if err := s.WriteTensor(ctx, "replaced", expert, other, "none"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "deleted"); err != nil {
			t.Fatal(err)
		}
		for range 3 { // the replacement's memory comes from the frames dropped: never from one viewed
			if err := s.WriteTensor(ctx, "churn", expert, other, "none"); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(replaced.Data, raw) || !bytes.Equal(deleted.Data, raw) {
			t.Fatalf("%s: a replace or delete changed a view", name)
		}
		if v := mustView(t, s, "replaced"); !bytes.Equal(v.Data, other) {
			t.Fatalf("%s: a view after the replace is not the new tensor", name)
		} else {
			v.Release()
		}
		closing := mustView(t, s, "churn")
		s.Close()
		if !bytes.Equal(replaced.Data, raw) || !bytes.Equal(deleted.Data, raw) || !bytes.Equal(closing.Data, other) {
			t.Fatalf("%s: closing the store changed a view", name)
		}
		closing.Data[0] ^= 1 // still writable, and private
		for _, v := range []*View{replaced, deleted, closing} {
			v.Release()
		}
		waitRecycled(t)
	}
}

// Row writes while a view is out: the view keeps the rows it had (mem://
// writes the edit into a new frame while one is held; file:// writes a
// new file instead of editing the one mapped in place).
func TestRowWritesNeverShowThroughAView(t *testing.T) {
	raw := randomBytes(4<<20, 5)
	rows := randomBytes(2048*2*8, 6) // 8 rows
	for name, s := range viewStores(t) {
		if err := s.WriteTensor(ctx, "kv", expert, raw, "none"); err != nil {
			t.Fatal(err)
		}
		v := mustView(t, s, "kv")
		rowMeta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8, 2048}}
		if err := s.WriteRows(ctx, "kv", 100, rowMeta, rows); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v.Data, raw) {
			t.Fatalf("%s: a row write showed through a view", name)
		}
		want := bytes.Clone(raw)
		copy(want[100*4096:], rows)
		if !bytes.Equal(readBack(t, s, "kv", expert), want) {
			t.Fatalf("%s: the row write was lost", name)
		}
		w := mustView(t, s, "kv")
		if !bytes.Equal(w.Data, want) {
			t.Fatalf("%s: a view after the row write misses it", name)
		}
		v.Release()
		w.Release()
		waitRecycled(t)
		// no view out: the row write goes in place again, and a later view sees it
		copy(rows, randomBytes(len(rows), 7))
		if err := s.WriteRows(ctx, "kv", 0, rowMeta, rows); err != nil {
			t.Fatal(err)
		}
		copy(want, rows)
		u := mustView(t, s, "kv")
		if !bytes.Equal(u.Data, want) {
			t.Fatalf("%s: a view after an in-place row write misses it", name)
		}
		u.Release()
	}
}

// Other goroutines replace, edit and delete the key while views of it are
// read: every view holds one whole tensor that was written, to the end.
func TestViewsWhileOtherGoroutinesWriteTheKey(t *testing.T) {
	versions := [][]byte{randomBytes(4<<20, 10), randomBytes(4<<20, 11), randomBytes(4<<20, 12)}
	rowMeta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{4, 2048}}
	for name, s := range viewStores(t) {
		if err := s.WriteTensor(ctx, "k", expert, versions[0], "none"); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the writer: whole replaces, row edits (of a version's own rows), deletes
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				src := versions[i%len(versions)]
				var err error
				switch i % 4 {
				case 3:
					err = s.WriteRows(ctx, "k", 8, rowMeta, src[8*4096:12*4096])
				case 2:
					err = s.Delete(ctx, "k")
				default:
					err = s.WriteTensor(ctx, "k", expert, src, "none")
				}
				if err != nil && !errs.Is(err, errs.KeyNotFound) {
					t.Error(err)
					return
				}
			}
		}()
		var held []*View
		deadline := time.Now().Add(time.Second)
		for n := 0; time.Now().Before(deadline); n++ {
			v, err := s.View(ctx, "k")
			if errs.Is(err, errs.KeyNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			snap := bytes.Clone(v.Data)
			ok := false
			for _, want := range versions { // a row edit writes a version's rows into another: check the rest
				if bytes.Equal(snap[:8*4096], want[:8*4096]) && bytes.Equal(snap[12*4096:], want[12*4096:]) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("%s: view %d is no tensor written", name, n)
			}
			v.Data[n%len(v.Data)] ^= 0x55 // and the views write too
			held = append(held, v)
			if len(held) > 4 {
				time.Sleep(time.Millisecond)
				old := held[0]
				held = held[1:]
				old.Data[0] ^= 0x55 // touched again just before it goes
				old.Release()
			}
			for _, h := range held { // nothing the writer did changed a view: check one
				_ = h.Data[len(h.Data)/2]
			}
		}
		close(stop)
		wg.Wait()
		for _, v := range held {
			v.Release()
		}
		waitRecycled(t)
	}
}

func TestViewFallsBackToACopy(t *testing.T) {
	raw := randomBytes(4<<20, 8)
	for name, s := range viewStores(t) {
		for key, codec := range map[string]string{"coded": "planes", "none": "none"} {
			meta := expert
			if codec == "planes" {
				meta = tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1024, 2048}}
				raw = make([]byte, 4<<20) // zeros: planes shrinks every chunk
			}
			if err := s.WriteTensor(ctx, key, meta, raw, codec); err != nil {
				t.Fatal(err)
			}
		}
		small := tensor.Meta{DType: tensor.Float32, Shape: []int64{16}}
		if err := s.WriteTensor(ctx, "small", small, make([]byte, 64), "none"); err != nil {
			t.Fatal(err)
		}
		if v, err := s.View(ctx, "coded"); v != nil || err != nil {
			t.Fatalf("%s: a coded frame gave a view (%v)", name, err)
		}
		if name == "mem" {
			if v, err := s.View(ctx, "small"); v != nil || err != nil {
				t.Fatalf("mem: a frame smaller than ViewMin gave a view (%v)", err)
			}
		}
		if _, err := s.View(ctx, "missing"); !errs.Is(err, errs.KeyNotFound) {
			t.Fatalf("%s: a missing key: %v", name, err)
		}
		if st := s.Stats(); st.ViewCopies < 1 || st.Views != 0 {
			t.Fatalf("%s: stats %+v", name, st)
		}
	}
}

// A file:// frame's payload follows its header, a multiple of 4 bytes
// long: the writer picks a chunk count that makes it a multiple of 8 for
// an 8-byte dtype, where the chunk size is its own to pick. A layout the
// caller fixed (chunk_rows=) may leave it at 4 mod 8: file:// reads that
// as a copy; mem:// puts every payload on a page.
func TestViewNeedsAPayloadAlignedForItsDtype(t *testing.T) {
	for name, s := range viewStores(t) {
		for _, rows := range []int64{4096, 4096 + 64} {
			meta := tensor.Meta{DType: tensor.Float64, Shape: []int64{rows, 64}}
			if err := s.WriteTensor(ctx, "f64", meta, randomBytes(int(rows)*512, 9), "none"); err != nil {
				t.Fatal(err)
			}
			v := mustView(t, s, "f64")
			if uintptr(unsafe.Pointer(&v.Data[0]))%8 != 0 {
				t.Fatalf("%s: a view of float64 at an odd address", name)
			}
			v.Release()
		}
		meta := tensor.Meta{DType: tensor.Float64, Shape: []int64{4096, 64}}
		if err := s.WriteTensor(WithChunkRows(ctx, 512), "rows", meta, randomBytes(4096*512, 9), "none"); err != nil {
			t.Fatal(err) // 8 chunks: a header of 4 mod 8 bytes
		}
		v, err := s.View(ctx, "rows")
		switch {
		case err != nil:
			t.Fatal(err)
		case name == "file" && v != nil:
			t.Fatal("file: a float64 payload at 4 mod 8 gave a view")
		case name == "mem" && v == nil:
			t.Fatal("mem: a float64 frame gave no view")
		case v != nil:
			v.Release()
		}
	}
}

func TestViewChecksChecksumsOnceAFileVersion(t *testing.T) {
	dir := t.TempDir()
	s, err := Open("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := randomBytes(4<<20, 13)
	if err := s.WriteTensor(ctx, "e", expert, raw, "none"); err != nil {
		t.Fatal(err)
	}
	// corrupt the payload on disk, behind the store (a bad disk)
	path := filepath.Join(dir, "e.gtf")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xee}, 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := s.View(ctx, "e"); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("a corrupt file gave %v", err)
	}
	if err := s.WriteTensor(ctx, "e", expert, raw, "none"); err != nil { // a new version
		t.Fatal(err)
	}
	v := mustView(t, s, "e")
	v.Release()
}
