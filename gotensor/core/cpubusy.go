package core

import (
	"bytes"
	"os"
	"strconv"
)

// cpuTimes is a snapshot of the machine's CPU time in clock ticks: busy
// (user, system, interrupts, stolen) and all; time given to niced work
// counts as free, since it yields to ours.
type cpuTimes struct{ busy, total uint64 }

// readCPU reads /proc/stat; false where there is none.
func readCPU() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 8 || string(f[0]) != "cpu" {
		return cpuTimes{}, false
	}
	var t cpuTimes
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		t.total += n
		switch i { // user nice system idle iowait irq softirq steal ...
		case 0, 2, 5, 6, 7:
			t.busy += n
		}
	}
	return t, true
}

// cpuShare is the share of the CPU busy from a to b; false when it cannot
// be told (no /proc/stat, or too few ticks between them).
func cpuShare(a, b cpuTimes) (float64, bool) {
	const minTicks = 4
	if b.total < a.total+minTicks {
		return 0, false
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total), true
}
