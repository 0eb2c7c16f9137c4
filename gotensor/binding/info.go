package binding

import (
	"encoding/json"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"runtime"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Info describes this build and machine.
func Info() map[string]any {
	dts := []string{}
	codes := map[string]int{} // dtype name -> the code binding calls take
	for _, d := range tensor.All() {
		dts = append(dts, d.String())
		codes[d.String()] = int(d)
	}
	kinds := []string{}
	for _, k := range errs.Kinds() {
		kinds = append(kinds, k.String())
	}
	return map[string]any{
		"version":     core.Version,
		"go_version":  runtime.Version(),
		"os":          runtime.GOOS,
		"arch":        runtime.GOARCH,
		"cpus":        runtime.NumCPU(),
		"workers":     parallel.Workers(),
		"codecs":      append(codec.Names(), "auto"), // "auto" chooses one of the others per write
		"stores":      store.Schemes(),
		"dtypes":      dts,
		"dtype_codes": codes,
		"error_kinds": kinds,
		"engine":      engine.Current().Name(),
		"transports":  transports(),
		"libraries":   codec.Libraries(),
	}
}

// InfoJSON is Info as JSON; with hardware, it adds the machine report
// (GPUs, NUMA, RDMA, UCX, DOCA: see package hw).
func InfoJSON(hardware bool) (string, error) {
	info := Info()
	if hardware {
		info["hardware"] = Hardware()
	}
	b, err := json.Marshal(info)
	return string(b), err
}

// SetWorkers bounds the goroutines that code one tensor's chunks (0: all
// cores) and returns the bound now in force; n past parallel.MaxWorkers,
// or negative, is refused.
func SetWorkers(n int) (int, error) {
	if n < 0 || n > parallel.MaxWorkers {
		return parallel.Workers(), errs.New(errs.InvalidArgument, "workers %d: want 0 (every core) to %d", n, parallel.MaxWorkers)
	}
	parallel.SetWorkers(n)
	return parallel.Workers(), nil
}

// transports lists the memory-node transports built in.
func transports() []string {
	if ucx.Built {
		return []string{"tcp", "ucx"}
	}
	return []string{"tcp"}
}
