package node

import (
	"context"
	"math"
	"runtime/debug"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
)

var ctx = context.Background()

func dial(t *testing.T, url string) store.Store {
	t.Helper()
	schemes.Register()
	c, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRefusesPublicAddressWithoutToken(t *testing.T) {
	if err := CheckListenAddr("0.0.0.0:7707", nil); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	if err := CheckListenAddr("0.0.0.0:7707", []byte("t")); err != nil {
		t.Fatal(err)
	}
	if err := CheckListenAddr("127.0.0.1:7707", nil); err != nil {
		t.Fatal(err)
	}
}

// A malformed message closes that connection; the server keeps serving others.

func TestStartServesAndPersists(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(ServeOptions{Listen: "127.0.0.1:0", Dir: dir, Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s.URL())
	if err := c.Put(ctx, "k", []byte("persisted")); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s2, err := Start(ServeOptions{Listen: "127.0.0.1:0", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	c2 := dial(t, s2.URL())
	if got, err := c2.Get(ctx, "k"); err != nil || string(got) != "persisted" {
		t.Fatalf("after restart: %q %v", got, err)
	}
	if _, err := Start(ServeOptions{Listen: "0.0.0.0:0"}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("public address without token: %v", err)
	}
}

func TestCapHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	capHeap(8 << 30)
	if got := debug.SetMemoryLimit(-1); got != 8<<30+256<<20 {
		t.Fatalf("limit %d", got)
	}
	capHeap(1 << 30) // a smaller node never lowers a limit already set
	if got := debug.SetMemoryLimit(-1); got != 8<<30+256<<20 {
		t.Fatalf("limit %d", got)
	}
}

// TLS is for the tcp transport: asking a ucx node for it is an error, not
// a node that serves in the clear.
func TestTLSWithUCXIsInvalid(t *testing.T) {
	_, err := Start(ServeOptions{Listen: "127.0.0.1:0", Transport: "ucx", TLSCert: "cert.pem", TLSKey: "key.pem"})
	if !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("got %v", err)
	}
}
