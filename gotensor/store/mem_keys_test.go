package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// fillKeys puts small frames under 1 KiB keys until s is full (at most
// max of them) and returns how many it took.
func fillKeys(t *testing.T, s Store, max int) int {
	t.Helper()
	pad := strings.Repeat("k", 1016)
	for i := range max {
		if err := s.Put(ctx, fmt.Sprintf("%s%08d", pad, i), make([]byte, 44)); err != nil {
			if !errs.Is(err, errs.StoreFull) {
				t.Fatal(err)
			}
			return i
		}
	}
	return max
}

// A store with a capacity counts each key's bytes and overhead against it,
// not its frames' bytes alone: 1 MiB holds about 880 small frames under
// 1 KiB keys, not 23,000 (and 30 MiB of memory). Usage().Bytes stays the
// frames' bytes; Used is what counts.
func TestMemCountsKeysAgainstCapacity(t *testing.T) {
	const capacity = 1 << 20
	perKey := int64(1024 + KeyOverhead + 44)
	for name, open := range map[string]func() (Store, error){
		"NewMem": func() (Store, error) { return NewMem("mem://keys", capacity), nil },
		"URL":    func() (Store, error) { return Open("mem://?capacity=1MiB") },
		"named":  func() (Store, error) { return Open("mem://keys-named?capacity=1MiB") },
		"Dir":    func() (Store, error) { return Open("file://" + t.TempDir() + "?capacity=1MiB&fsync=false") },
	} {
		t.Run(name, func(t *testing.T) {
			s, err := open()
			must(t, err)
			defer s.Close()
			n := fillKeys(t, s, 4096)
			if want := capacity / perKey; int64(n) != want {
				t.Fatalf("%d keys of 1 KiB with 44-byte frames fit in %d bytes, want %d", n, capacity, want)
			}
			u := s.Usage()
			if u.Keys != int64(n) || u.Bytes != int64(n)*44 {
				t.Fatalf("usage %+v after %d keys", u, n)
			}
			used := s.(interface{ Used() int64 }).Used()
			if used != int64(n)*perKey {
				t.Fatalf("used %d, want %d", used, int64(n)*perKey)
			}
			// Replacing a frame charges its key once; deleting gives all back.
			k := fmt.Sprintf("%s%08d", strings.Repeat("k", 1016), 0)
			must(t, s.Put(ctx, k, make([]byte, 40)))
			must(t, s.Delete(ctx, k))
			if got := s.(interface{ Used() int64 }).Used(); got != used-perKey {
				t.Fatalf("used %d after replacing and deleting one key, want %d", got, used-perKey)
			}
		})
	}
}
