package auto

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

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

// A busy loop has all the CPU this process could get, beside processes
// that keep the other cores busy: other work on the machine takes CPU
// from coding and moving alike, so it counts as neither.
func TestCPUShareLeavesOutOtherWork(t *testing.T) {
	if _, ok := machineIdle(); !ok {
		t.Skip("no /proc/stat here")
	}
	spin := func(d time.Duration) float64 {
		a, _ := ReadCPU(true)
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
		b, _ := ReadCPU(true)
		v, ok := cpuShare(a, b)
		if !ok {
			t.Fatal("no share after a busy loop")
		}
		return v
	}
	if v := spin(20 * time.Millisecond); v <= 0 || v > 1.05 {
		t.Errorf("a busy loop alone: share %v", v)
	}
	for range runtime.NumCPU() - 1 {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	time.Sleep(20 * time.Millisecond)
	if v := spin(200 * time.Millisecond); v < 0.75 {
		t.Errorf("a busy loop beside %d busy processes: share %v", runtime.NumCPU()-1, v)
	}
}
