//go:build ucx

package ucx_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

// A peer with a wrong token cannot flood the node's log: refused
// handshakes are logged at most once a second (each one was a line).
func TestUCXRefusedHandshakesLogRateLimited(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: store.NewMem("mem://node", 0), Token: []byte("tok"), Logf: logf},
		ucx.ConfigFor("tcp", "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const tries = 8
	start := time.Now()
	for range tries {
		if c, err := openUCX(s.Addr(), "tcp", "?token=wrong"); !errs.Is(err, errs.Unauthorized) {
			if err == nil {
				c.Close()
			}
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "bad token") {
			n++
		}
	}
	if most := 1 + int(took/time.Second); n == 0 || n > most { // one a second (serve.RefusedLogEvery)
		t.Fatalf("%d refused handshakes in %v logged %d lines, want 1 to %d: %q", tries, took, n, most, lines)
	}
}
