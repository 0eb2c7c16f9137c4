package auto

import (
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUTimes are the CPU time this process has used (Busy) and the CPU time
// it could have had (Total: its own plus the machine's idle time), in
// nanoseconds. Other work on the machine takes CPU from coding and moving
// alike, so it counts as neither.
type CPUTimes struct{ Busy, Total uint64 }

// ReadCPU reads the process's CPU time (getrusage) and, withIdle, the
// machine's idle time (/proc/stat; where it cannot be read, Total is wall
// time times cores). false where the process's time cannot be read.
func ReadCPU(withIdle bool) (CPUTimes, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUTimes{}, false
	}
	busy := uint64(ru.Utime.Nano() + ru.Stime.Nano())
	if !withIdle {
		return CPUTimes{Busy: busy}, true
	}
	if idle, ok := machineIdle(); ok {
		return CPUTimes{Busy: busy, Total: busy + idle}, true
	}
	return CPUTimes{Busy: busy, Total: uint64(time.Now().UnixNano() * int64(runtime.NumCPU()))}, true
}

// machineIdle is the time all cores have been idle (iowait included)
// since boot; /proc/stat counts it in ticks of 10 ms (USER_HZ).
func machineIdle() (uint64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, false
	}
	var idle uint64
	for _, v := range f[4:6] { // idle, iowait
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, false
		}
		idle += n
	}
	return idle * uint64(10*time.Millisecond), true
}

// cpuShare is the share of the CPU it could have had that the process
// used from a to b; false when too little time passed to tell.
func cpuShare(a, b CPUTimes) (float64, bool) {
	if b.Total < a.Total+uint64(time.Millisecond) || b.Busy < a.Busy {
		return 0, false
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total), true
}

// peerShares is how many times this process's CPU moving bytes to the
// store at rawURL takes from this machine: twice for a node on the
// loopback, whose receiving takes about what our sending does, else once.
func peerShares(rawURL string) float64 {
	u, err := url.Parse(strings.Split(rawURL, ",")[0])
	if err != nil {
		return 1
	}
	if h := u.Hostname(); h == "localhost" || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback() {
		return 2
	}
	return 1
}
