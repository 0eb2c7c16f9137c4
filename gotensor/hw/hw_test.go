package hw

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"golang.org/x/sys/unix"
)

// dgxA100 is go-nvml's mock DGX A100 (8 x A100-SXM4-40GB) with the
// topology of the real machine: two 64-core EPYC sockets in NPS4 mode, GPU
// pairs on NUMA nodes 3, 1, 7 and 5, each node 16 cores plus their SMT
// siblings (+128).
func dgxA100(numaFromNVML bool) *dgxa100.Server {
	s := dgxa100.New()
	nodes := []int{3, 3, 1, 1, 7, 7, 5, 5}
	busIDs := []string{"00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
		"00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"}
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		node, bus := nodes[i], busIDs[i]
		dev.GetCpuAffinityFunc = func(numCPUs int) ([]uint, nvml.Return) {
			words := make([]uint, (256+63)/64)
			for c := node * 16; c < node*16+16; c++ {
				words[c/64] |= 1 << (c % 64)
				words[(c+128)/64] |= 1 << ((c + 128) % 64)
			}
			return words, nvml.SUCCESS
		}
		dev.GetNumaNodeIdFunc = func() (int, nvml.Return) {
			if !numaFromNVML {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return node, nvml.SUCCESS
		}
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for j := 0; j < len(bus); j++ {
				p.BusId[j] = int8(bus[j])
			}
			return p, nvml.SUCCESS
		}
	}
	return s
}

func TestGPUsOnMockDGXA100(t *testing.T) {
	gpus, err := GPUs(dgxA100(true), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 8 {
		t.Fatalf("%d GPUs", len(gpus))
	}
	g := gpus[2]
	if !strings.Contains(g.Name, "A100") || g.UUID == "" || g.MemoryTotal < 40e9 || g.PCIBusID != "00000000:47:00.0" {
		t.Fatalf("gpu 2: %+v", g)
	}
	if g.NUMANode != 1 {
		t.Fatalf("gpu 2 on NUMA node %d, want 1", g.NUMANode)
	}
	want := append(seq(16, 32), seq(144, 160)...)
	if !reflect.DeepEqual(g.CPUAffinity, want) {
		t.Fatalf("gpu 2 CPUs %v, want %v", g.CPUAffinity, want)
	}
}

func TestNUMAFromSysfsWhenNVMLCannotTell(t *testing.T) {
	sys := t.TempDir()
	dev := filepath.Join(sys, "bus", "pci", "devices", "0000:b7:00.0")
	os.MkdirAll(dev, 0o755)
	os.WriteFile(filepath.Join(dev, "numa_node"), []byte("5\n"), 0o644)
	gpus, err := GPUs(dgxA100(false), sys)
	if err != nil {
		t.Fatal(err)
	}
	if gpus[6].NUMANode != 5 || gpus[0].NUMANode != -1 {
		t.Fatalf("numa nodes: gpu6 %d, gpu0 %d", gpus[6].NUMANode, gpus[0].NUMANode)
	}
}

func TestNoDriverIsAPlainMessage(t *testing.T) {
	lib := &mock.Interface{
		InitFunc:        func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND },
		ErrorStringFunc: func(r nvml.Return) string { return "library not found" },
	}
	_, err := GPUs(lib, "/sys")
	if err == nil || !strings.Contains(err.Error(), "no NVIDIA driver") {
		t.Fatalf("got %v", err)
	}
}

func TestAffinityKeepsAllowedCPUsAndCanBeDisabled(t *testing.T) {
	gpus, _ := GPUs(dgxA100(true), "/nonexistent")
	allowed := append(seq(0, 64), seq(128, 192)...) // a cgroup with the first socket only
	a := NewAffinity(gpus, allowed)
	if !a.Enabled() {
		t.Fatal("affinity off with GPUs present")
	}
	if got := a.CPUs(0); !reflect.DeepEqual(got, append(seq(48, 64), seq(176, 192)...)) {
		t.Fatalf("gpu 0: %v", got)
	}
	if got := a.CPUs(4); got != nil { // its node is on the other socket: no local CPU allowed
		t.Fatalf("gpu 4: %v", got)
	}
	if a.CPUs(-1) != nil {
		t.Fatal("a CPU tensor got pinned")
	}
	a.SetEnabled(false)
	if a.CPUs(0) != nil {
		t.Fatal("disabled affinity still pins")
	}
	if NewAffinity(nil, allowed).Enabled() {
		t.Fatal("affinity on without GPUs")
	}
}

func TestPinRestores(t *testing.T) {
	before := Allowed()
	restore, err := Pin(before[:1])
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	unix.SchedGetaffinity(0, &set)
	if set.Count() != 1 || !set.IsSet(before[0]) {
		t.Fatalf("pinned set has %d CPUs", set.Count())
	}
	restore()
	if after := Allowed(); !reflect.DeepEqual(after, before) {
		t.Fatalf("affinity not restored: %v -> %v", before, after)
	}
	_ = runtime.NumCPU()
}

func TestSysfsReaders(t *testing.T) {
	sys := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(sys, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write("devices/system/node/node0/cpulist", "0-3,8-11\n")
	write("devices/system/node/node1/cpulist", "4-7,12\n")
	write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
	write("class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n")
	write("class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n")
	write("class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n")
	nodes := NUMANodes(sys)
	if len(nodes) != 2 || !reflect.DeepEqual(nodes[0].CPUs, []int{0, 1, 2, 3, 8, 9, 10, 11}) || !reflect.DeepEqual(nodes[1].CPUs, []int{4, 5, 6, 7, 12}) {
		t.Fatalf("numa: %+v", nodes)
	}
	rd := RDMADevices(sys)
	if len(rd) != 2 || rd[0].Ports[0].State != "ACTIVE" || rd[0].Ports[0].Rate != "200 Gb/sec (4X HDR)" || rd[1].Ports[0].State != "DOWN" {
		t.Fatalf("rdma: %+v", rd)
	}
	if len(RDMADevices(t.TempDir())) != 0 {
		t.Fatal("devices from nowhere")
	}
}

func TestParseUCXTransports(t *testing.T) {
	out := "#      Transport: posix\n#      Transport: sysv\n# Transport: tcp\n#      Transport: tcp\n#   Device: lo\n"
	if got := ParseUCXTransports(out); !reflect.DeepEqual(got, []string{"posix", "sysv", "tcp"}) {
		t.Fatalf("%v", got)
	}
}

func seq(a, b int) []int {
	var s []int
	for i := a; i < b; i++ {
		s = append(s, i)
	}
	return s
}

// The report says whether the DOCA engine runs, and why not.
func TestDOCAStatusReported(t *testing.T) {
	d := docaReport()
	if d.Status == "" {
		t.Fatal("no DOCA status")
	}
	if !d.Built && !strings.Contains(d.Status, "not built") {
		t.Fatalf("status %q", d.Status)
	}
}
