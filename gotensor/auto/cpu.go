package auto

import (
	"net"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// CPUTimes are the CPU time this process has used (Busy) and the CPU time
// the machine has had (Total: wall time times cores), in nanoseconds.
type CPUTimes struct{ Busy, Total uint64 }

// ReadCPU reads the process's CPU time (getrusage) and the wall time
// times cores.
func ReadCPU() (CPUTimes, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return CPUTimes{}, false
	}
	wall := uint64(time.Now().UnixNano()) * uint64(runtime.NumCPU())
	return CPUTimes{Busy: uint64(ru.Utime.Nano() + ru.Stime.Nano()), Total: wall}, true
}

// cpuShare is the share of the machine's CPU the process used from a to
// b; false when too little time passed to tell.
func cpuShare(a, b CPUTimes) (float64, bool) {
	if b.Total < a.Total+uint64(time.Millisecond) || b.Busy < a.Busy {
		return 0, false
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total), true
}

// peerShares is how many times the CPU this process takes to move bytes
// to the store at rawURL the machine spends: twice for a node on the
// loopback, whose receiving takes about what the sending does.
func peerShares(rawURL string) float64 {
	u, err := url.Parse(strings.Split(rawURL, ",")[0])
	if err != nil {
		return 1
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
		return 2
	}
	return 1
}
