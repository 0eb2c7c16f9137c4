package node

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

func scrape(t *testing.T, n *Node) string {
	t.Helper()
	resp, err := http.Get("http://" + n.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// metric finds one sample's value in the text format ("" when absent).
func metric(text, series string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// The metrics endpoint counts requests by op and status, bytes each way,
// refused handshakes and the store's usage, and changes as the node serves.
func TestMetricsEndpoint(t *testing.T) {
	t.Run("tcp", func(t *testing.T) { checkMetrics(t, "tcp") })
	t.Run("ucx", func(t *testing.T) {
		if !ucx.Built || os.Getenv("GOTENSOR_UCX") != "1" {
			t.Skip("needs a ucx build and GOTENSOR_UCX=1")
		}
		checkMetrics(t, "ucx")
	})
}

func checkMetrics(t *testing.T, transport string) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret"), 0o600)
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Transport: transport, UCXTLS: "tcp", Capacity: 1 << 20,
		TokenFile: tokenFile, Metrics: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	before := scrape(t, n)
	for series, want := range map[string]string{"gotensor_capacity_bytes": "1.048576e+06", "gotensor_keys": "0",
		"gotensor_stored_bytes": "0", "gotensor_handshakes_refused_total": "0", "gotensor_idle_bytes": "0"} {
		if got := metric(before, series); got != want {
			t.Fatalf("%s = %q before any request, want %q", series, got, want)
		}
	}
	c := dial(t, n.URL()+"?token=s3cret")
	if err := c.Put(ctx, "k", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "missing"); !errs.Is(err, errs.KeyNotFound) {
		t.Fatal(err)
	}
	if _, err := store.Open(n.URL() + "?token=wrong"); !errs.Is(err, errs.Unauthorized) {
		t.Fatal(err)
	}
	// The server counts a refusal after it has sent it: the client may
	// hear of it first.
	after := scrape(t, n)
	for deadline := time.Now().Add(5 * time.Second); metric(after, "gotensor_handshakes_refused_total") == "0" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		after = scrape(t, n)
	}
	for series, want := range map[string]string{
		`gotensor_requests_total{op="put",status="ok"}`:          "1",
		`gotensor_requests_total{op="get",status="ok"}`:          "1",
		`gotensor_requests_total{op="get",status="KeyNotFound"}`: "1",
		`gotensor_received_bytes_total{op="put"}`:                "1000",
		`gotensor_sent_bytes_total{op="get"}`:                    "1000",
		`gotensor_request_seconds_count{op="get"}`:               "2",
		"gotensor_handshakes_refused_total":                      "1",
		"gotensor_keys":                                          "1",
		"gotensor_stored_bytes":                                  "1000",
	} {
		if got := metric(after, series); got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	// a replaced frame's memory is kept for the next write, and counted
	for range 2 {
		if err := c.Put(ctx, "big", make([]byte, 256<<10)); err != nil {
			t.Fatal(err)
		}
	}
	idle, _ := strconv.ParseFloat(metric(scrape(t, n), "gotensor_idle_bytes"), 64)
	if idle < 256<<10 {
		t.Errorf("gotensor_idle_bytes = %v after a 256 KiB frame was replaced", idle)
	}
}

func TestMetricsAddressNeedsTokenOffLoopback(t *testing.T) {
	if _, err := Start(ServeOptions{Listen: "127.0.0.1:0", Metrics: "0.0.0.0:0"}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
}
