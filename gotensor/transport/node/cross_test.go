package node

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

// A client of one transport against a node of the other says so within a
// second (it waited 10 s for an i/o timeout).
func TestOtherTransportSaidQuickly(t *testing.T) {
	if !ucx.Built || os.Getenv("GOTENSOR_UCX") != "1" {
		t.Skip("needs a ucx build and GOTENSOR_UCX=1")
	}
	schemes.Register()
	for _, c := range []struct{ node, client string }{{"ucx", "tcp"}, {"tcp", "ucx"}} {
		n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Transport: c.node, UCXTLS: "tcp"})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s, err := store.Open(c.client + "://" + n.Addr() + "?timeout=30s")
		took := time.Since(start)
		n.Shutdown()
		if err == nil {
			s.Close()
			t.Fatalf("%s client opened a %s node", c.client, c.node)
		}
		if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), c.node) || took > 1500*time.Millisecond {
			t.Errorf("%s client, %s node: %v after %v", c.client, c.node, err, took)
		}
	}
}

func TestUCXURLChecked(t *testing.T) {
	if !ucx.Built || os.Getenv("GOTENSOR_UCX") != "1" {
		t.Skip("needs a ucx build and GOTENSOR_UCX=1")
	}
	schemes.Register()
	for _, u := range []string{"ucx://127.0.0.1:7707?rmaa=1&token=SEKRIT", "ucx://127.0.0.1?token=SEKRIT", "ucx://127.0.0.1:0?token=SEKRIT"} {
		if _, err := store.Open(u); !errs.Is(err, errs.InvalidArgument) || strings.Contains(err.Error(), "SEKRIT") {
			t.Errorf("Open(%q) = %v; want InvalidArgument without the token", u, err)
		}
	}
}
