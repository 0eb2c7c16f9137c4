package node

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// --pprof serves Go's heap profile, whose text form ends in MemStats, and
// stops with the node; a non-loopback address needs a token.
func TestPprofEndpoint(t *testing.T) {
	if _, err := Start(ServeOptions{Listen: "127.0.0.1:0", Pprof: "0.0.0.0:0"}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("pprof on a public address without a token: %v", err)
	}
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Pprof: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + n.PprofAddr() + "/debug/pprof/heap?debug=1"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "# HeapInuse = ") {
		t.Fatalf("heap profile: %d %v %.200q", resp.StatusCode, err, b)
	}
	n.Shutdown()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Fatal("pprof still served after Shutdown")
	}
}
