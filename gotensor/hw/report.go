package hw

import (
	"os"
	"runtime"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/errs"
)

// Report is what `gotensor info` prints about the machine.
type Report struct {
	CPUs      int          `json:"cpus"`
	NUMA      []NUMANode   `json:"numa_nodes"`
	GPUs      []GPU        `json:"gpus"`
	GPUStatus string       `json:"gpu_status"` // why there are no GPUs, or "ok"
	Affinity  bool         `json:"gpu_affinity"`
	RDMA      []RDMADevice `json:"rdma_devices"`
	UCX       UCX          `json:"ucx"`
	DOCA      DOCA         `json:"doca"`
}

var (
	discoverOnce sync.Once
	gpus         []GPU
	gpuStatus    string
	affinity     *Affinity
)

// SysRoot is where sysfs is read from.
var SysRoot = "/sys"

func discover() {
	discoverOnce.Do(func() {
		gs, err := GPUs(nvml.New(), SysRoot)
		switch {
		case err != nil:
			gpuStatus = err.Error()
		case len(gs) == 0:
			gpuStatus = "NVML found no GPU"
		default:
			gpuStatus = "ok"
		}
		gpus = gs
		affinity = NewAffinity(gs, Allowed())
		if os.Getenv("GOTENSOR_GPU_AFFINITY") == "0" {
			affinity.SetEnabled(false)
		}
	})
}

// LocalAffinity is the process's GPU-to-CPU map (discovered once).
func LocalAffinity() *Affinity {
	discover()
	return affinity
}

// Discover reports on this machine.
func Discover() Report {
	discover()
	return Report{
		CPUs:      runtime.NumCPU(),
		NUMA:      NUMANodes(SysRoot),
		GPUs:      append([]GPU{}, gpus...),
		GPUStatus: gpuStatus,
		Affinity:  affinity.Enabled(),
		RDMA:      RDMADevices(SysRoot),
		UCX:       DetectUCX(),
		DOCA:      docaReport(),
	}
}

func docaReport() DOCA {
	d := DetectDOCA(engine.DOCABuilt())
	var err error
	d.Status, err = engine.DOCAStatus()
	if err != nil {
		d.Error = errs.KindOf(err).String()
	}
	return d
}
