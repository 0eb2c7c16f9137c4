//go:build amd64 && !noasm

package planes

import (
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

// huffFast reports whether this machine has the double-symbol decoder's
// assembly (BMI2's shifts, BMI1's TZCNT): planes decodes 4-stream huff0
// blocks with it there where the table suits it (huffMinPairs), and with
// huff0's own decoder elsewhere.
var huffFast = cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// huffRounds4 runs k of fast4's rounds (the caller has checked that src
// and dst hold all they read and write): in assembly where the machine
// has BMI2, else in Go.
var huffRounds4 = func(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	if !huffFast {
		huffRounds4Go(hot, tb, src, dst, k)
		return
	}
	huffRounds4BMI2(hot, tb, &src[0], &dst[0], k)
}

//go:noescape
func huffRounds4BMI2(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst *byte, k int)

// huffRounds1 is huffRounds4 for one stream.
var huffRounds1 = func(h *huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	if !huffFast {
		huffRounds1Go(h, tb, src, dst, k)
		return
	}
	huffRounds1BMI2(h, tb, &src[0], &dst[0], k)
}

//go:noescape
func huffRounds1BMI2(h *huffHot, tb *[1 << huffLogMax]uint32, src, dst *byte, k int)

// huffRounds4X3 is huffRounds4 with the triple table.
var huffRounds4X3 = func(hot *[4]huffHot, tb *[1 << huffLogMax]uint64, src, dst []byte, k int) {
	if !huffFast {
		huffRounds4X3Go(hot, tb, src, dst, k)
		return
	}
	huffRounds4X3BMI2(hot, tb, &src[0], &dst[0], k)
}

//go:noescape
func huffRounds4X3BMI2(hot *[4]huffHot, tb *[1 << huffLogMax]uint64, src, dst *byte, k int)

// huffRounds1X3 is huffRounds1 with the triple table.
var huffRounds1X3 = func(h *huffHot, tb *[1 << huffLogMax]uint64, src, dst []byte, k int) {
	if !huffFast {
		huffRounds1X3Go(h, tb, src, dst, k)
		return
	}
	huffRounds1X3BMI2(h, tb, &src[0], &dst[0], k)
}

//go:noescape
func huffRounds1X3BMI2(h *huffHot, tb *[1 << huffLogMax]uint64, src, dst *byte, k int)

func init() {
	kernels.Register("planes.bmi2", &huffFast)
}
