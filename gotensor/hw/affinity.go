package hw

import (
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Pin locks the calling goroutine to its OS thread and restricts that
// thread to cpus. The returned function restores the thread's previous
// affinity and unlocks it.
func Pin(cpus []int) (restore func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_setaffinity %v: %w", cpus, err)
	}
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// Allowed lists the CPUs this process may run on.
func Allowed() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// Affinity maps GPU indexes to the CPUs their codec workers should use.
type Affinity struct {
	mu      sync.RWMutex
	enabled bool
	byGPU   map[int][]int
}

// NewAffinity builds the map from discovered GPUs, keeping only CPUs this
// process may use. It is enabled when some GPU has local CPUs.
func NewAffinity(gpus []GPU, allowed []int) *Affinity {
	ok := map[int]bool{}
	for _, c := range allowed {
		ok[c] = true
	}
	a := &Affinity{byGPU: map[int][]int{}}
	for _, g := range gpus {
		var cpus []int
		for _, c := range g.CPUAffinity {
			if ok[c] {
				cpus = append(cpus, c)
			}
		}
		if len(cpus) > 0 {
			a.byGPU[g.Index] = cpus
		}
	}
	a.enabled = len(a.byGPU) > 0
	return a
}

// SetEnabled turns GPU-local pinning on or off.
func (a *Affinity) SetEnabled(on bool) {
	a.mu.Lock()
	a.enabled = on
	a.mu.Unlock()
}

// Enabled reports whether pinning is on.
func (a *Affinity) Enabled() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.enabled
}

// CPUs returns the CPUs local to GPU gpu, or nil when pinning is off, the
// tensor is not on a GPU (gpu < 0) or the GPU's affinity is unknown.
func (a *Affinity) CPUs(gpu int) []int {
	if a == nil || gpu < 0 {
		return nil
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if !a.enabled {
		return nil
	}
	return a.byGPU[gpu]
}
