package hw

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// NUMANode is one memory node and its CPUs.
type NUMANode struct {
	ID   int   `json:"id"`
	CPUs []int `json:"cpus"`
}

// NUMANodes reads <sysRoot>/devices/system/node/node*/cpulist.
func NUMANodes(sysRoot string) []NUMANode {
	dirs, _ := filepath.Glob(filepath.Join(sysRoot, "devices", "system", "node", "node[0-9]*"))
	var out []NUMANode
	for _, d := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "node"))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "cpulist"))
		if err != nil {
			continue
		}
		out = append(out, NUMANode{ID: id, CPUs: ParseCPUList(string(b))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ParseCPUList reads the kernel's list format, "0-3,8,10-11".
func ParseCPUList(s string) []int {
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// RDMAPort is one port of an RDMA device.
type RDMAPort struct {
	Port      int    `json:"port"`
	State     string `json:"state"`      // e.g. "ACTIVE"
	Rate      string `json:"rate"`       // e.g. "200 Gb/sec (4X HDR)"
	LinkLayer string `json:"link_layer"` // "InfiniBand" or "Ethernet" (RoCE)
}

// RDMADevice is an entry of /sys/class/infiniband.
type RDMADevice struct {
	Name  string     `json:"name"`
	Ports []RDMAPort `json:"ports"`
}

// RDMADevices reads <sysRoot>/class/infiniband.
func RDMADevices(sysRoot string) []RDMADevice {
	devs, _ := filepath.Glob(filepath.Join(sysRoot, "class", "infiniband", "*"))
	out := []RDMADevice{}
	for _, d := range devs {
		dev := RDMADevice{Name: filepath.Base(d)}
		ports, _ := filepath.Glob(filepath.Join(d, "ports", "*"))
		for _, p := range ports {
			n, err := strconv.Atoi(filepath.Base(p))
			if err != nil {
				continue
			}
			dev.Ports = append(dev.Ports, RDMAPort{
				Port:      n,
				State:     stateName(readTrim(filepath.Join(p, "state"))),
				Rate:      readTrim(filepath.Join(p, "rate")),
				LinkLayer: readTrim(filepath.Join(p, "link_layer")),
			})
		}
		sort.Slice(dev.Ports, func(i, j int) bool { return dev.Ports[i].Port < dev.Ports[j].Port })
		out = append(out, dev)
	}
	return out
}

// stateName turns "4: ACTIVE" into "ACTIVE".
func stateName(s string) string {
	if _, name, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(name)
	}
	return s
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
