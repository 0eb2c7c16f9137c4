package auto

import "testing"

// A node on the loopback moves bytes with this machine's cores too.
func TestPeerShares(t *testing.T) {
	for url, want := range map[string]float64{
		"tcp://127.0.0.1:7000": 2, "ucx://localhost:1?transports=tcp": 2, "tcp://[::1]:7": 2,
		"tcp://10.0.0.5:7000": 1, "tcp://127.0.0.1:1,10.0.0.2:1": 2, "mem://x": 1,
	} {
		if got := peerShares(url); got != want {
			t.Errorf("%s: %v, want %v", url, got, want)
		}
	}
}
