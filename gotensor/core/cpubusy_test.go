package core

import (
	"testing"
	"time"
)

// Coding's CPU is what the process used while it coded, not its wall time
// times the workers: workers that waited for cores moving held (a node
// receiving on the same two cores) did not take them, and counting them
// busy would take moving's CPU away from the CPU share.
func TestCodingCPUIsWhatTheProcessUsed(t *testing.T) {
	a := cpuTimes{busy: 1e9}
	wall := 10 * time.Millisecond
	starved := cpuTimes{busy: a.busy + uint64(8*time.Millisecond)} // two workers, 8 ms of CPU in 10 ms
	if got := codingCPUOf(a, starved, true, wall, 2); got != uint64(8*time.Millisecond) {
		t.Errorf("starved workers: %v, want 8ms", time.Duration(got))
	}
	busy := cpuTimes{busy: a.busy + uint64(30*time.Millisecond)} // sending beside them too
	if got := codingCPUOf(a, busy, true, wall, 2); got != uint64(20*time.Millisecond) {
		t.Errorf("at most wall x workers: %v", time.Duration(got))
	}
	if got := codingCPUOf(a, starved, false, wall, 2); got != uint64(20*time.Millisecond) {
		t.Errorf("unread: wall x workers, got %v", time.Duration(got))
	}
}
