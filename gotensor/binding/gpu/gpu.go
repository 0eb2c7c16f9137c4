// Package gpu links GPU discovery and GPU-local worker pinning (package hw,
// NVML through go-nvml) into package binding. The Python extension imports
// it; the C library leaves it out and so does not depend on NVML symbols.
package gpu

import (
	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/hw"
	"github.com/gotensor/gotensor/gotensor/parallel"
)

func init() {
	binding.PinFor = pinFor
	binding.SetGPUAffinity = func(on bool) bool {
		a := hw.LocalAffinity()
		a.SetEnabled(on && len(hw.Discover().GPUs) > 0)
		return a.Enabled()
	}
	binding.Hardware = func() any { return hw.Discover() }
}

// pinFor pins workers to the CPUs local to GPU gpu, when those are known
// and pinning is enabled.
func pinFor(gpu int) parallel.Pin {
	cpus := hw.LocalAffinity().CPUs(gpu)
	if len(cpus) == 0 {
		return nil
	}
	return func() func() {
		undo, err := hw.Pin(cpus)
		if err != nil {
			return func() {}
		}
		return undo
	}
}
