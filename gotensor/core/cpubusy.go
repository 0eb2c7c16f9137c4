package core

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

// cpuTimes is a snapshot of the CPU this process has used (busy) and of
// the CPU time it could have had (total): its own plus the machine's idle
// time, in nanoseconds. Other work on the machine takes CPU from coding
// and moving alike, so it counts as neither busy nor available: on a
// loaded machine moving takes a larger share of what is left. Where the
// idle time cannot be read, total is wall time times cores.
type cpuTimes struct{ busy, total uint64 }

// readCPU reads the process's CPU time and, withIdle, the machine's idle
// time (total); false where it cannot. Without it total is 0: getrusage
// alone is a system call, the idle time a read and parse of /proc/stat
// (tens of microseconds on a loaded machine), which a streamed write needs
// only at its ends, not around each encoded piece.
func readCPU(withIdle bool) (cpuTimes, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}, false
	}
	busy := uint64(ru.Utime.Nano() + ru.Stime.Nano())
	if !withIdle {
		return cpuTimes{busy: busy}, true
	}
	if idle, ok := machineIdle(); ok {
		return cpuTimes{busy: busy, total: busy + idle}, true
	}
	total := time.Now().UnixNano() * int64(runtime.NumCPU())
	return cpuTimes{busy: busy, total: uint64(total)}, true
}

// clockTick is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const clockTick = uint64(10 * time.Millisecond)

// machineIdle is the time all cores have been idle (iowait included)
// since boot, from /proc/stat; false where it cannot be read.
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
	return idle * clockTick, true
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
