package gpu

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/hw"
)

func TestHooksInstalled(t *testing.T) {
	if _, ok := binding.Hardware().(hw.Report); !ok {
		t.Fatal("hardware report hook not installed")
	}
	if len(hw.Discover().GPUs) == 0 && binding.SetGPUAffinity(true) {
		t.Fatal("affinity on without a GPU")
	}
	if len(hw.Discover().GPUs) == 0 && binding.PinFor(0) != nil {
		t.Fatal("pinning without a GPU")
	}
}
