package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

var ctx = context.Background()

// conformance runs the behaviour every Store must have.
func conformance(t *testing.T, open func(capacity int64) Store) {
	t.Run("PutGetReplaceDelete", func(t *testing.T) {
		s := open(0)
		defer s.Close()
		if _, err := s.Get(ctx, "a"); !errs.Is(err, errs.KeyNotFound) {
			t.Fatalf("missing key: %v", err)
		}
		must(t, s.Put(ctx, "a", []byte("one")))
		must(t, s.Put(ctx, "a", []byte("three")))
		got, err := s.Get(ctx, "a")
		must(t, err)
		if string(got) != "three" {
			t.Fatalf("got %q", got)
		}
		head, size, err := s.Head(ctx, "a", 2)
		must(t, err)
		if string(head) != "th" || size != 5 {
			t.Fatalf("head %q size %d", head, size)
		}
		if u := s.Usage(); u.Keys != 1 || u.Bytes != 5 {
			t.Fatalf("usage %+v", u)
		}
		must(t, s.Delete(ctx, "a"))
		if ok, _ := s.Has(ctx, "a"); ok {
			t.Fatal("deleted key still present")
		}
		if err := s.Delete(ctx, "a"); !errs.Is(err, errs.KeyNotFound) {
			t.Fatalf("double delete: %v", err)
		}
		if u := s.Usage(); u.Keys != 0 || u.Bytes != 0 {
			t.Fatalf("usage after delete %+v", u)
		}
	})
	t.Run("Keys", func(t *testing.T) {
		s := open(0)
		defer s.Close()
		odd := []string{"layer.0/w", "layer.0/b", "layer.1/w", "weird key ☃ %41 .x", ".hidden", strings.Repeat("long/", 180)}
		for _, k := range odd {
			must(t, s.Put(ctx, k, []byte(k)))
		}
		for _, k := range odd {
			got, err := s.Get(ctx, k)
			must(t, err)
			if string(got) != k {
				t.Fatalf("key %q returned %q", k, got)
			}
		}
		ks, err := s.List(ctx, "layer.0/")
		must(t, err)
		if fmt.Sprint(ks) != "[layer.0/b layer.0/w]" {
			t.Fatalf("list: %v", ks)
		}
		all, _ := s.List(ctx, "")
		if len(all) != len(odd) {
			t.Fatalf("list all: %v", all)
		}
	})
	t.Run("BadKeys", func(t *testing.T) {
		s := open(0)
		defer s.Close()
		for _, k := range []string{"", "a\nb", "nul\x00", "\xff\xfe", strings.Repeat("k", MaxKeyLen+1)} {
			if err := s.Put(ctx, k, []byte("x")); !errs.Is(err, errs.InvalidArgument) {
				t.Fatalf("key %q: %v", k, err)
			}
		}
	})
	t.Run("CapacityKeepsOldData", func(t *testing.T) {
		capacity := 10 + keyCharge("a") // a key costs its name and an overhead beside its frame
		s := open(capacity)
		defer s.Close()
		must(t, s.Put(ctx, "a", []byte("123456")))
		if err := s.Put(ctx, "b", []byte("12345")); !errs.Is(err, errs.StoreFull) {
			t.Fatalf("over capacity: %v", err)
		}
		got, _ := s.Get(ctx, "a")
		if string(got) != "123456" {
			t.Fatal("existing value lost")
		}
		must(t, s.Put(ctx, "a", []byte("1234567890"))) // replacing frees the old value's space
		if u := s.Usage(); u.Bytes != 10 || u.Capacity != capacity {
			t.Fatalf("usage %+v", u)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		s := open(0)
		must(t, s.Put(ctx, "a", []byte("x")))
		must(t, s.Close())
		if _, err := s.Get(ctx, "a"); !errs.Is(err, errs.Closed) {
			t.Fatalf("get after close: %v", err)
		}
		if err := s.Put(ctx, "a", []byte("x")); !errs.Is(err, errs.Closed) {
			t.Fatalf("put after close: %v", err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := open(0)
		defer s.Close()
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					k := fmt.Sprintf("k%d", (g*7+i)%16)
					v := bytes.Repeat([]byte{byte(i)}, 1+i%50)
					switch i % 4 {
					case 0, 1:
						if err := s.Put(ctx, k, v); err != nil {
							t.Error(err)
						}
					case 2:
						if _, err := s.Get(ctx, k); err != nil && !errs.Is(err, errs.KeyNotFound) {
							t.Error(err)
						}
					case 3:
						if err := s.Delete(ctx, k); err != nil && !errs.Is(err, errs.KeyNotFound) {
							t.Error(err)
						}
					}
				}
			}()
		}
		wg.Wait()
		ks, _ := s.List(ctx, "")
		var sum int64
		for _, k := range ks {
			v, err := s.Get(ctx, k)
			must(t, err)
			sum += int64(len(v))
		}
		if u := s.Usage(); u.Keys != int64(len(ks)) || u.Bytes != sum {
			t.Fatalf("usage %+v, actual %d keys %d bytes", u, len(ks), sum)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMem(t *testing.T) {
	conformance(t, func(c int64) Store { return NewMem("mem://test", c) })
}

func TestDir(t *testing.T) {
	conformance(t, func(c int64) Store {
		s, err := OpenDir(t.TempDir(), c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestDirReopenListsFramesAndDropsTempFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDir(dir, 0)
	must(t, err)
	long := strings.Repeat("é/", 300)
	must(t, s.Put(ctx, "a/b", []byte("ab")))
	must(t, s.Put(ctx, long, []byte("long")))
	must(t, s.Close())
	// A crash mid-write leaves only a temp file: never a visible key.
	must(t, os.WriteFile(filepath.Join(dir, tmpPrefix+"123"), []byte("torn"), 0o644))

	s2, err := OpenDir(dir, 0)
	must(t, err)
	defer s2.Close()
	ks, _ := s2.List(ctx, "")
	if len(ks) != 2 || ks[0] != long && ks[1] != long {
		t.Fatalf("reopened keys: %q", ks)
	}
	if _, err := os.Stat(filepath.Join(dir, tmpPrefix+"123")); !os.IsNotExist(err) {
		t.Fatal("temp file left behind")
	}
	if u := s2.Usage(); u.Bytes != 6 {
		t.Fatalf("usage %+v", u)
	}
}

func TestDirIsLockedByOneOwner(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenDir(dir, 0)
	must(t, err)
	if _, err := OpenDir(dir, 0); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("second open: %v", err)
	}
	must(t, s.Close())
	s2, err := OpenDir(dir, 0)
	must(t, err)
	s2.Close()
}

func TestOpenURLs(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"mem://", "mem://x?capacity=1GiB", "file://" + dir + "?capacity=10MB", "file://" + dir + "2?fsync=false"} {
		s, err := Open(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		s.Close()
	}
	for _, u := range []string{"", "nope", "s3://bucket", "mem://?capacity=lots", "file://host/dir", "file://", "file://" + dir + "3?fsync=maybe"} {
		if _, err := Open(u); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%q: %v", u, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MB": 512e6, "4096": 4096, "1.5K": 1536, "3 MiB": 3 << 20} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Fatalf("%q: %d %v", in, got, err)
		}
	}
}
