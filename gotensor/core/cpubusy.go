package core

import (
	"net"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// cpuTimes is a snapshot of the CPU this process has used and of the
// CPU time the machine has had, in nanoseconds: wall time times cores.
// Only this process counts as busy: other work on the machine shares the
// cores with coding and moving alike.
type cpuTimes struct{ busy, total uint64 }

// readCPU reads the process's CPU time; false where it cannot.
func readCPU() (cpuTimes, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}, false
	}
	busy := ru.Utime.Nano() + ru.Stime.Nano()
	total := time.Now().UnixNano() * int64(runtime.NumCPU())
	return cpuTimes{busy: uint64(busy), total: uint64(total)}, true
}

// cpuShare is the share of the machine's CPU this process used from a to
// b; false when too little time passed to tell.
func cpuShare(a, b cpuTimes) (float64, bool) {
	const minTotal = uint64(time.Millisecond)
	if b.total < a.total+minTotal || b.busy < a.busy {
		return 0, false
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total), true
}

// peerShares is how many times this process's CPU share moving bytes to
// the store at url takes from this machine: twice for a node on the
// loopback, whose receiving takes about what our sending does from the
// same cores; once otherwise.
func peerShares(rawURL string) float64 {
	u, err := url.Parse(strings.Split(rawURL, ",")[0])
	if err != nil {
		return 1
	}
	h := u.Hostname()
	if h == "localhost" {
		return 2
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return 2
	}
	return 1
}
