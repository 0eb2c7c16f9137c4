//go:build !amd64 || noasm

package deflate

var haveBMI2 = false

func literalsFast(multi *[1 << litTableBits]uint64, dst, src []byte, st *literalState) {
	literalsGo(multi, dst, src, st)
}

func packFast(t *packTable, p, buf []byte, st *packState) {
	packGo(t, p, buf, st)
}

func literalsFast2(ma, mb *[1 << litTableBits]uint64, dst, src []byte, st *literalState2) {
	literalsGo2(ma, mb, dst, src, st)
}

func pack2Fast(t *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState) {
	pack2Go(t, pa, pb, bufA, bufB, sa, sb)
}
