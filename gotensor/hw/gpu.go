// Package hw discovers the hardware gotensor can use: GPUs through NVML
// (go-nvml), RDMA devices and NUMA topology through sysfs, UCX and DOCA
// installations; and pins codec workers to the CPUs local to a GPU.
// Everything is read through interfaces or a sysfs root, so the logic is
// tested without the hardware (go-nvml's mock package, a fake sysfs).
package hw

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPU is one NVIDIA GPU as NVML reports it.
type GPU struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	MemoryTotal uint64 `json:"memory_total"`
	MemoryFree  uint64 `json:"memory_free"`
	PCIBusID    string `json:"pci_bus_id"`
	NUMANode    int    `json:"numa_node"` // -1: unknown
	CPUAffinity []int  `json:"cpu_affinity"`
}

// GPUs lists the GPUs lib sees. sysRoot ("/sys") is consulted for a
// GPU's NUMA node when NVML cannot tell it.
func GPUs(lib nvml.Interface, sysRoot string) ([]GPU, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: %s", nvmlError(lib, ret))
	}
	defer lib.Shutdown()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %s", nvmlError(lib, ret))
	}
	out := make([]GPU, 0, n)
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d: %s", i, nvmlError(lib, ret))
		}
		g := GPU{Index: i, NUMANode: -1}
		g.Name, _ = d.GetName()
		g.UUID, _ = d.GetUUID()
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryTotal, g.MemoryFree = m.Total, m.Free
		}
		if p, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.PCIBusID = cString(p.BusId[:])
		}
		if node, ret := d.GetNumaNodeId(); ret == nvml.SUCCESS {
			g.NUMANode = node
		} else if g.PCIBusID != "" {
			g.NUMANode = pciNUMANode(sysRoot, g.PCIBusID)
		}
		if set, ret := d.GetCpuAffinity(runtime.NumCPU()); ret == nvml.SUCCESS {
			g.CPUAffinity = maskToCPUs(set)
		}
		out = append(out, g)
	}
	return out, nil
}

func nvmlError(lib nvml.Interface, ret nvml.Return) string {
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return "no NVIDIA driver (libnvidia-ml.so.1 not found)"
	}
	return lib.ErrorString(ret)
}

func cString(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// maskToCPUs expands NVML's affinity bitmask (64 CPUs per word on 64-bit
// hosts) into CPU numbers.
func maskToCPUs(words []uint) []int {
	var cpus []int
	const bits = 32 << (^uint(0) >> 63)
	for w, word := range words {
		for b := 0; b < bits; b++ {
			if word&(1<<b) != 0 {
				cpus = append(cpus, w*bits+b)
			}
		}
	}
	return cpus
}

// pciNUMANode reads /sys/bus/pci/devices/<bus id>/numa_node (NVML's bus id
// has an 8-digit domain; sysfs uses 4, lower case).
func pciNUMANode(sysRoot, busID string) int {
	id := strings.ToLower(busID)
	if parts := strings.SplitN(id, ":", 2); len(parts) == 2 && len(parts[0]) == 8 {
		id = parts[0][4:] + ":" + parts[1]
	}
	b, err := os.ReadFile(filepath.Join(sysRoot, "bus", "pci", "devices", id, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}
