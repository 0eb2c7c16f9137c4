package redis

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

var bg = context.Background()

func init() { Register() }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(url)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// pieceKeys counts the piece keys on srv (every kind: pending too).
func pieceKeys(t testing.TB, srvs ...*redistest.Server) int {
	t.Helper()
	n := 0
	for _, srv := range srvs {
		out, err := srv.CLI("--scan", "--pattern", "gt:p:*")
		must(t, err)
		n += len(strings.Fields(out))
	}
	return n
}

// basics runs what every deployment must do, on the store at url whose
// masters are srvs.
func basics(t *testing.T, url string, srvs func() []*redistest.Server) {
	s := open(t, url+"?piece=64KiB")
	if _, err := s.Get(bg, "a"); !errs.Is(err, errs.KeyNotFound) || errs.KeyOf(err) != "a" {
		t.Fatalf("missing key: %v", err)
	}
	must(t, s.Put(bg, "a", []byte("one")))
	must(t, s.Put(bg, "a", []byte("three")))
	got, err := s.Get(bg, "a")
	must(t, err)
	if string(got) != "three" {
		t.Fatalf("got %q", got)
	}
	head, size, err := s.Head(bg, "a", 2)
	must(t, err)
	if string(head) != "th" || size != 5 {
		t.Fatalf("head %q size %d", head, size)
	}
	// larger than a piece: pieces and a manifest
	big := randBytes(1<<20+12345, 1)
	must(t, s.Put(bg, "big", big))
	got, err = s.Get(bg, "big")
	must(t, err)
	if !bytes.Equal(got, big) {
		t.Fatal("big frame read back differs")
	}
	s.reclaiming.Wait() // replaced pieces are unlinked in the background
	if n := pieceKeys(t, srvs()...); n != 17 {
		t.Fatalf("%d pieces for a 1 MiB frame in 64 KiB pieces, want 17", n)
	}
	for _, r := range [][2]int64{{0, 10}, {65530, 20}, {100000, 300000}, {int64(len(big)) - 5, 100}, {int64(len(big)), 10}} {
		b, size, err := s.GetRange(bg, "big", r[0], r[1])
		must(t, err)
		want := big[r[0]:min(int64(len(big)), r[0]+r[1])]
		if size != int64(len(big)) || !bytes.Equal(b, want) {
			t.Fatalf("range %v: %d bytes (size %d), want %d", r, len(b), size, len(want))
		}
	}
	// the same ranges into the caller's memory: nothing written past them
	for _, r := range [][2]int64{{0, 10}, {0, 200000}, {65530, 20}, {int64(len(big)) - 5, 100}, {int64(len(big)), 10}} {
		dst := bytes.Repeat([]byte{0xEE}, int(r[1]))
		n, size, err := s.GetRangeInto(bg, "big", r[0], dst)
		must(t, err)
		want := big[r[0]:min(int64(len(big)), r[0]+r[1])]
		if size != int64(len(big)) || !bytes.Equal(dst[:n], want) || bytes.Count(dst[n:], []byte{0xEE}) != len(dst)-n {
			t.Fatalf("range %v into dst: %d bytes (size %d), want %d", r, n, size, len(want))
		}
	}
	// pieces read whole land in dst itself: far less allocated than read
	dst := make([]byte, 600000)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	n, _, err := s.GetRangeInto(bg, "big", 0, dst)
	runtime.ReadMemStats(&m1)
	must(t, err)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; n != len(dst) || alloc > uint64(len(dst))/4 {
		t.Fatalf("a range of %d bytes into dst allocated %d bytes", n, alloc)
	}
	if n, size, err := s.GetRangeInto(bg, "a", 1, make([]byte, 10)); err != nil || n != 4 || size != 5 {
		t.Fatalf("inline range into dst: %d bytes of %d, %v", n, size, err)
	}
	if _, _, err := s.GetRangeInto(bg, "nope", 0, make([]byte, 10)); !errs.Is(err, errs.KeyNotFound) {
		t.Fatalf("missing key into dst: %v", err)
	}
	// replaced by a small frame, then by a large one again: the old pieces go
	must(t, s.Put(bg, "big", []byte("small now")))
	s.reclaiming.Wait() // replaced pieces are unlinked in the background
	if n := pieceKeys(t, srvs()...); n != 0 {
		t.Fatalf("%d pieces left after a replace by an inline frame", n)
	}
	must(t, s.Put(bg, "big", big))
	must(t, s.Put(bg, "big", big[:300000]))
	s.reclaiming.Wait() // replaced pieces are unlinked in the background
	if n := pieceKeys(t, srvs()...); n != 5 {
		t.Fatalf("%d pieces after a replace by a 300000-byte frame, want 5", n)
	}
	must(t, s.Delete(bg, "big"))
	s.reclaiming.Wait() // replaced pieces are unlinked in the background
	if n := pieceKeys(t, srvs()...); n != 0 {
		t.Fatalf("%d pieces left after a delete", n)
	}
	if err := s.Delete(bg, "big"); !errs.Is(err, errs.KeyNotFound) {
		t.Fatalf("double delete: %v", err)
	}
	if ok, err := s.Has(bg, "big"); ok || err != nil {
		t.Fatalf("deleted key: %v %v", ok, err)
	}
	odd := []string{"layer.0/w", "layer.0/b", "layer.1/w", "weird key ☃ %41 .x*?[", ".hidden", "{tag}x", strings.Repeat("long/", 180)}
	for _, k := range odd {
		must(t, s.Put(bg, k, []byte(k)))
	}
	for _, k := range odd {
		got, err := s.Get(bg, k)
		must(t, err)
		if string(got) != k {
			t.Fatalf("%q read %q", k, got)
		}
	}
	ls, err := s.List(bg, "layer.0/")
	must(t, err)
	if fmt.Sprint(ls) != "[layer.0/b layer.0/w]" {
		t.Fatalf("list %v", ls)
	}
	ls, err = s.List(bg, "weird key ☃ %41 .x*")
	must(t, err)
	if len(ls) != 1 {
		t.Fatalf("list of a prefix with glob characters: %v", ls)
	}
	ls, err = s.List(bg, "")
	must(t, err)
	if len(ls) != len(odd)+1 {
		t.Fatalf("list all: %v", ls)
	}
	if u := s.Usage(); u.Keys != int64(len(odd)+1) || u.Bytes <= 0 || len(u.Unanswered) != 0 {
		t.Fatalf("usage %+v", u)
	}
	for _, k := range []string{"", "a\nb", strings.Repeat("x", 2000)} {
		if err := s.Put(bg, k, []byte("x")); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("key %q: %v", k, err)
		}
	}
	must(t, s.Close())
	if _, err := s.Get(bg, "a"); !errs.Is(err, errs.Closed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestStandalone(t *testing.T) {
	srv := redistest.Start(t)
	basics(t, "redis://"+srv.Addr(), func() []*redistest.Server { return []*redistest.Server{srv} })
}

func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	basics(t, "redis://"+c.Nodes[1].Addr(), c.Masters)
	// pieces spread over every master
	s := open(t, "redis://"+c.Nodes[0].Addr()+"?piece=64KiB")
	must(t, s.Put(bg, "spread", randBytes(12<<16, 3)))
	for _, m := range c.Masters() {
		if n := pieceKeys(t, m); n != 4 {
			t.Errorf("master %s holds %d of 12 pieces, want 4", m.Addr(), n)
		}
	}
}

func TestURLs(t *testing.T) {
	cases := []struct{ url, want string }{
		{"redis://127.0.0.1:1?capcity=1", "unknown option"},
		{"redis://u:s3cret@127.0.0.1:1?pasword_file=/x", "unknown option"},
		{"redis://127.0.0.1:1?replicas=x", "bad replicas"},
		{"redis://127.0.0.1:1?piece=1", "bad piece"},
		{"redis://127.0.0.1", "host:port"},
		{"redis://127.0.0.1:1/db", "path"},
		{"redis://127.0.0.1:1?ca=/x", "need TLS"},
		{"redis://u:s3cret@127.0.0.1:1?password_file=/x", "twice"},
		{"redis://127.0.0.1:1?timeout=s3cret", "bad timeout"},
		{"redis://127.0.0.1:1?token=s3cret", "not token="},
		{"redis://u:s3cret@127.0.0.1:1?password_file=/nonexistent/pw", "twice"},
		{"redis://127.0.0.1:1?password_file=/nonexistent/file", "cannot read"},
		{"redis://u:s3cret@127.0.0.1:1,127.0.0.1:2?timeout=1s", "127.0.0.1:1,127.0.0.1:2"},
	}
	for _, c := range cases {
		_, err := store.Open(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") && !strings.Contains(c.url, "timeout=s3cret") {
			t.Errorf("%s: the error shows the secret: %v", c.url, err)
		}
	}
}

func TestAuth(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "pw-s3cret")
	// the least a user needs (docs/REDIS.md)
	_, err := srv.CLI(strings.Fields("acl setuser gt on >gt-s3cret ~gt:* +@read +@write +@scripting +@connection +scan +info +cluster|slots +wait")...)
	must(t, err)
	dir := t.TempDir()
	pf := filepath.Join(dir, "pw")
	must(t, os.WriteFile(pf, []byte("gt-s3cret\n"), 0o600))
	s := open(t, "redis://gt@"+srv.Addr()+"?password_file="+pf+"&piece=64KiB")
	must(t, s.Put(bg, "k", []byte("v")))
	big := randBytes(200000, 4) // pieces, a manifest, a row edit, a listing, usage
	must(t, s.Put(bg, "big", big))
	ver, err := s.FrameVersion(bg, "big")
	must(t, err)
	if _, ok, err := s.EditChecked(bg, "big", ver, store.Edit{Off: 70000, N: 3, Data: []byte("abc")}); !ok || err != nil {
		t.Fatalf("edit as an ACL user: %v %v", ok, err)
	}
	copy(big[70000:], "abc")
	if got, err := s.Get(bg, "big"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read as an ACL user: %v", err)
	}
	if ks, err := s.List(bg, ""); err != nil || len(ks) != 2 || s.Usage().Keys != 2 {
		t.Fatalf("list as an ACL user: %v %v %+v", ks, err, s.Usage())
	}
	s2 := open(t, "redis://:pw-s3cret@"+srv.Addr())
	if got, err := s2.Get(bg, "k"); err != nil || string(got) != "v" {
		t.Fatalf("%q %v", got, err)
	}
	if strings.Contains(s2.URL(), "s3cret") {
		t.Fatalf("URL shows the password: %s", s2.URL())
	}
	for _, u := range []string{"redis://:wrong-s3cret@" + srv.Addr(), "redis://gt:wrong-s3cret@" + srv.Addr(), "redis://" + srv.Addr(),
		"redis://gt:wrong-s3cret@" + srv.Addr() + "?timout=1s"} {
		_, err := store.Open(u)
		want := errs.Unauthorized
		if strings.Contains(u, "timout") {
			want = errs.InvalidArgument
		}
		if !errs.Is(err, want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want %v without the password", strings.ReplaceAll(u, "s3cret", "..."), err, want)
		}
	}
}

func TestFullServerKeepsWhatIsStored(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "12mb", "--maxmemory-policy", "noeviction")
	s := open(t, "redis://"+srv.Addr()+"?piece=1MiB")
	kept := map[string][]byte{}
	var full error
	for i := 0; i < 40 && full == nil; i++ {
		k := fmt.Sprintf("t%d", i)
		b := randBytes(3<<20+i, uint64(i))
		if full = s.Put(bg, k, b); full == nil {
			kept[k] = b
		}
	}
	if !errs.Is(full, errs.StoreFull) {
		t.Fatalf("filling the server: %v", full)
	}
	if len(kept) == 0 {
		t.Fatal("nothing fit")
	}
	// a replace that does not fit leaves the old tensor
	for k, b := range kept {
		if err := s.Put(bg, k, randBytes(8<<20, 99)); !errs.Is(err, errs.StoreFull) {
			t.Fatalf("replace on a full server: %v", err)
		}
		got, err := s.Get(bg, k)
		must(t, err)
		if !bytes.Equal(got, b) {
			t.Fatalf("%s changed by a refused write", k)
		}
		break
	}
	for k, b := range kept {
		got, err := s.Get(bg, k)
		must(t, err)
		if !bytes.Equal(got, b) {
			t.Fatalf("%s lost on a full server", k)
		}
	}
	s.reclaiming.Wait()
	want := 0
	for _, b := range kept {
		want += (len(b) + 1<<20 - 1) >> 20
	}
	if n := pieceKeys(t, srv); n != want {
		dumpPieces(t, srv)
		t.Fatalf("%d pieces for %d tensors of %d pieces: a refused write left some", n, len(kept), want)
	}
}

func TestEvictingServerNeverTorn(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "16mb", "--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "3")
	s := open(t, "redis://"+srv.Addr()+"?piece=256KiB")
	want := map[string][]byte{}
	for i := range 60 {
		k := fmt.Sprintf("t%d", i)
		b := randBytes(1<<20+i*1000, uint64(i))
		if err := s.Put(bg, k, b); err != nil && !errs.Is(err, errs.StoreFull) {
			t.Fatalf("put %s: %v", k, err)
		}
		want[k] = b
	}
	found, gone := 0, 0
	for k, b := range want {
		got, err := s.Get(bg, k)
		switch {
		case errs.Is(err, errs.KeyNotFound):
			gone++
			if ok, _ := s.Has(bg, k); ok {
				t.Errorf("%s: reads as not found but Has says it is there", k)
			}
		case err != nil:
			t.Fatalf("%s: %v", k, err)
		case !bytes.Equal(got, b):
			t.Fatalf("%s: read back differs", k)
		default:
			found++
		}
	}
	if gone == 0 || found == 0 {
		t.Fatalf("%d found, %d evicted: the test evicted nothing, or everything", found, gone)
	}
}

// Writers racing on one key all succeed, and the key reads as one of
// their tensors: a write whose pieces a later write reclaimed before it
// made them permanent was superseded, not evicted (it used to fail as
// StoreFull and delete the later write's manifest, which then read as
// KeyNotFound).
func TestRacingWritersOfOneKeyAllSucceed(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "redis://"+srv.Addr()+"?piece=256KiB")
	versions := make([][]byte, 4)
	for i := range versions {
		versions[i] = bytes.Repeat([]byte{byte(i + 1)}, 3<<20)
	}
	var wg sync.WaitGroup
	for w := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if err := s.Put(bg, "k", versions[w]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := s.Get(bg, "k")
	must(t, err)
	if len(got) != 3<<20 || got[0] == 0 || !bytes.Equal(got, versions[got[0]-1]) {
		t.Fatal("the key reads as none of the writes")
	}
}

func TestScanWhileKeysChange(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	s := open(t, "redis://"+c.Nodes[0].Addr())
	stable := map[string]bool{}
	for i := range 3000 {
		k := fmt.Sprintf("stable/%05d", i)
		must(t, s.Put(bg, k, []byte(k)))
		stable[k] = true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprintf("churn/%05d", i%500)
			if i%2 == 0 {
				s.Put(bg, k, []byte(k))
			} else {
				s.Delete(bg, fmt.Sprintf("churn/%05d", (i/2)%500))
			}
		}
	}()
	for range 5 {
		ls, err := s.List(bg, "")
		must(t, err)
		seen := map[string]bool{}
		n := 0
		for _, k := range ls {
			if seen[k] {
				t.Fatalf("%s listed twice", k)
			}
			seen[k] = true
			if stable[k] {
				n++
			} else if !strings.HasPrefix(k, "churn/") {
				t.Fatalf("listed %q, never written", k)
			}
		}
		if n != len(stable) {
			t.Fatalf("a scan while keys change found %d of the %d keys there all along", n, len(stable))
		}
	}
	close(stop)
	wg.Wait()
}

func TestRestartedServer(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	s := open(t, "redis://"+srv.Addr()+"?piece=64KiB&timeout=3s")
	big := randBytes(300000, 5)
	must(t, s.Put(bg, "big", big))
	srv.Kill()
	if _, err := s.Get(bg, "big"); !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
		t.Fatalf("server down: %v", err)
	}
	if err := s.Put(bg, "x", big); !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
		t.Fatalf("server down: %v", err)
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Get(bg, "big")
		if err == nil {
			if !bytes.Equal(got, big) {
				t.Fatal("read back differs after a restart")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	must(t, s.Put(bg, "x", big))
}

func dumpPieces(t testing.TB, srv *redistest.Server) {
	out, _ := srv.CLI("--scan", "--pattern", "gt:p:*")
	for _, k := range strings.Fields(out) {
		ttl, _ := srv.CLI("pttl", k)
		n, _ := srv.CLI("strlen", k)
		t.Logf("%s ttl %s len %s", k, strings.TrimSpace(ttl), strings.TrimSpace(n))
	}
}

// A whole piece is read straight into the frame (a stream of its own); a
// piece of another length than its manifest says, longer or shorter, reads
// as CorruptData, never as a frame of the wrong bytes, and the next reads
// of the same connections are whole.
func TestPieceOfAnotherLength(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "redis://"+srv.Addr()+"?piece=64KiB")
	big := randBytes(4<<16, 7)
	for i, change := range []string{"shorter", "longer"} {
		key := fmt.Sprintf("big%d", i)
		must(t, s.Put(bg, key, big))
		got, err := s.Get(bg, key)
		must(t, err)
		if !bytes.Equal(got, big) {
			t.Fatal("read back differs")
		}
		out, err := srv.CLI("--scan", "--pattern", "gt:p:*")
		must(t, err)
		var piece string
		for _, p := range strings.Fields(out) {
			if n, _ := srv.CLI("strlen", p); strings.TrimSpace(n) == "65536" {
				piece = p
				if _, err := srv.CLI("persist", p); err != nil { // a piece of the frame read, not one being reclaimed
					t.Fatal(err)
				}
			}
		}
		val := strings.Repeat("x", 1000)
		if change == "longer" {
			val = strings.Repeat("x", 70000)
		}
		if _, err := srv.CLI("set", piece, val, "keepttl"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(bg, key); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("a %s piece: %v, want CorruptData", change, err)
		}
		must(t, s.Delete(bg, key))
	}
	must(t, s.Put(bg, "after", big))
	got, err := s.Get(bg, "after")
	must(t, err)
	if !bytes.Equal(got, big) {
		t.Fatal("a read after the corrupt ones differs")
	}
}
