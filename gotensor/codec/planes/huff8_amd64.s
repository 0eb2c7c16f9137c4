//go:build amd64 && !noasm

#include "textflag.h"

// Eight 4X streams, two full blocks', decoded in turns one symbol a lookup
// with BMI2's shifts (planes_huff8.go: huffRounds8Go is the Go twin this
// must match). The windows stay in R8-R15; the pointers to the 8 bytes each
// one reloads from live on the stack. A table entry is the code's bits |
// the symbol<<8: its low 6 bits are the shift. Stream j writes at DI plus
// its place in the two blocks (huff8Out).

// LOOKUP(v, tab, disp): one symbol of window v (index = its top 11 bits in CX's shift).
#define LOOKUP(v, tab, disp) \
	SHRXQ   CX, v, AX \
	MOVWQZX (tab)(AX*2), AX \
	SHLXQ   AX, v, v \
	MOVB    AH, disp(DI)

// RELOAD(v, slot): drop the whole bytes used, load the next 8, set the sentinel.
#define RELOAD(v, slot) \
	TZCNTQ v, AX \
	MOVQ   AX, BX \
	ANDQ   $7, BX \
	SHRQ   $3, AX \
	MOVQ   slot(SP), v \
	SUBQ   AX, v \
	MOVQ   v, slot(SP) \
	MOVQ   (v), v \
	ORQ    $1, v \
	SHLXQ  BX, v, v

// func huffRounds8BMI2(h *huff8, ta, tb *[2048]uint16, src, dst *byte, k int)
TEXT ·huffRounds8BMI2(SB), NOSPLIT, $72-48
	MOVQ h+0(FP), AX
	MOVQ src+24(FP), BX
	MOVQ 0(AX), R8
	MOVQ 64(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 0(SP)
	MOVQ 8(AX), R9
	MOVQ 72(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 8(SP)
	MOVQ 16(AX), R10
	MOVQ 80(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 16(SP)
	MOVQ 24(AX), R11
	MOVQ 88(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 24(SP)
	MOVQ 32(AX), R12
	MOVQ 96(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 32(SP)
	MOVQ 40(AX), R13
	MOVQ 104(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 40(SP)
	MOVQ 48(AX), R14
	MOVQ 112(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 48(SP)
	MOVQ 56(AX), R15
	MOVQ 120(AX), DX
	LEAQ -8(BX)(DX*1), DX
	MOVQ DX, 56(SP)
	MOVQ dst+32(FP), DI
	ADDQ 128(AX), DI
	MOVQ k+40(FP), DX
	LEAQ (DX)(DX*4), DX
	ADDQ DI, DX
	MOVQ DX, 64(SP)
	MOVQ ta+8(FP), SI
	MOVQ tb+16(FP), DX
	MOVQ $53, CX

loop:
	LOOKUP(R8, SI, 0)
	LOOKUP(R9, SI, 16384)
	LOOKUP(R10, SI, 32768)
	LOOKUP(R11, SI, 49152)
	LOOKUP(R12, DX, 65536)
	LOOKUP(R13, DX, 81920)
	LOOKUP(R14, DX, 98304)
	LOOKUP(R15, DX, 114688)
	LOOKUP(R8, SI, 1)
	LOOKUP(R9, SI, 16385)
	LOOKUP(R10, SI, 32769)
	LOOKUP(R11, SI, 49153)
	LOOKUP(R12, DX, 65537)
	LOOKUP(R13, DX, 81921)
	LOOKUP(R14, DX, 98305)
	LOOKUP(R15, DX, 114689)
	LOOKUP(R8, SI, 2)
	LOOKUP(R9, SI, 16386)
	LOOKUP(R10, SI, 32770)
	LOOKUP(R11, SI, 49154)
	LOOKUP(R12, DX, 65538)
	LOOKUP(R13, DX, 81922)
	LOOKUP(R14, DX, 98306)
	LOOKUP(R15, DX, 114690)
	LOOKUP(R8, SI, 3)
	LOOKUP(R9, SI, 16387)
	LOOKUP(R10, SI, 32771)
	LOOKUP(R11, SI, 49155)
	LOOKUP(R12, DX, 65539)
	LOOKUP(R13, DX, 81923)
	LOOKUP(R14, DX, 98307)
	LOOKUP(R15, DX, 114691)
	LOOKUP(R8, SI, 4)
	LOOKUP(R9, SI, 16388)
	LOOKUP(R10, SI, 32772)
	LOOKUP(R11, SI, 49156)
	LOOKUP(R12, DX, 65540)
	LOOKUP(R13, DX, 81924)
	LOOKUP(R14, DX, 98308)
	LOOKUP(R15, DX, 114692)
	RELOAD(R8, 0)
	RELOAD(R9, 8)
	RELOAD(R10, 16)
	RELOAD(R11, 24)
	RELOAD(R12, 32)
	RELOAD(R13, 40)
	RELOAD(R14, 48)
	RELOAD(R15, 56)
	ADDQ $5, DI
	CMPQ DI, 64(SP)
	JB   loop

	MOVQ h+0(FP), AX
	MOVQ src+24(FP), BX
	MOVQ R8, 0(AX)
	MOVQ 0(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 64(AX)
	MOVQ R9, 8(AX)
	MOVQ 8(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 72(AX)
	MOVQ R10, 16(AX)
	MOVQ 16(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 80(AX)
	MOVQ R11, 24(AX)
	MOVQ 24(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 88(AX)
	MOVQ R12, 32(AX)
	MOVQ 32(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 96(AX)
	MOVQ R13, 40(AX)
	MOVQ 40(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 104(AX)
	MOVQ R14, 48(AX)
	MOVQ 48(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 112(AX)
	MOVQ R15, 56(AX)
	MOVQ 56(SP), DX
	SUBQ BX, DX
	ADDQ $8, DX
	MOVQ DX, 120(AX)
	SUBQ dst+32(FP), DI
	MOVQ DI, 128(AX)
	RET
