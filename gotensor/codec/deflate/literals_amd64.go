//go:build amd64 && !noasm

package deflate

import (
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

var haveBMI2 = cpu.X86.HasBMI2

// literalsBMI2 is literalsGo in assembly (BMI2's SHRX shifts by an
// entry's low byte without moving it to CX).
//
//go:noescape
func literalsBMI2(multi *[1 << litTableBits]uint64, dst, src []byte, st *literalState)

func literalsFast(multi *[1 << litTableBits]uint64, dst, src []byte, st *literalState) {
	if haveBMI2 {
		literalsBMI2(multi, dst, src, st)
		return
	}
	literalsGo(multi, dst, src, st)
}

// packBMI2 is packGo in assembly.
//
//go:noescape
func packBMI2(t *packTable, p, buf []byte, st *packState)

func packFast(t *packTable, p, buf []byte, st *packState) {
	if haveBMI2 {
		packBMI2(t, p, buf, st)
		return
	}
	packGo(t, p, buf, st)
}

// literalsBMI2x2 is literalsGo2 in assembly.
//
//go:noescape
func literalsBMI2x2(ma, mb *[1 << litTableBits]uint64, dst, src []byte, st *literalState2)

func literalsFast2(ma, mb *[1 << litTableBits]uint64, dst, src []byte, st *literalState2) {
	if haveBMI2 {
		literalsBMI2x2(ma, mb, dst, src, st)
		return
	}
	literalsGo2(ma, mb, dst, src, st)
}

// pack2BMI2 is pack2Go in assembly.
//
//go:noescape
func pack2BMI2(t *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState)

func pack2Fast(t *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState) {
	if haveBMI2 {
		pack2BMI2(t, pa, pb, bufA, bufB, sa, sb)
		return
	}
	pack2Go(t, pa, pb, bufA, bufB, sa, sb)
}

func init() {
	kernels.Register("deflate.bmi2", &haveBMI2)
}
