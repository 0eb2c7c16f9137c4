// Package kernels names the hand-written kernels a binary runs, each
// group by the flag that turns it on, so that tests and benchmarks can
// turn one off and hold the codecs' end-to-end speed with it against
// without it (BenchmarkKernels in gotensor/codec/all): the assembly
// kernels (under the build tag noasm none is built and none registers),
// and the hand-written decoders that stand in for a library
// ("deflate.literals").
package kernels

import (
	"sort"
	"sync"
)

type kernel struct {
	on    *bool
	avail bool // the CPU has what it needs
}

var (
	mu  sync.Mutex
	all = map[string]kernel{}
)

// Register names the flag *on that turns a group of kernels on; its value
// now is whether the CPU has what they need. Packages call it at init.
func Register(name string, on *bool) {
	mu.Lock()
	defer mu.Unlock()
	all[name] = kernel{on: on, avail: *on}
}

// Names lists the registered kernels that this CPU runs, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for n, k := range all {
		if k.avail {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Set turns the kernels name names on (where the CPU has them) or off,
// and returns what restores them; not safe while codecs run.
func Set(name string, on bool) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	k, ok := all[name]
	if !ok {
		return func() {}
	}
	*k.on = on && k.avail
	return func() { *k.on = k.avail }
}
