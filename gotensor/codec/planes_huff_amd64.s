#include "textflag.h"

// fast4's rounds of double-symbol Huffman decoding (planes_huff.go:
// huffRounds4Go is the Go twin this must match). Each stream's state,
// huffHot{v, used, off, op} at 32 bytes apiece, lives in memory between
// its turns; the four streams' chains of lookups are independent, for the
// CPU to overlap.

// STREAM(o): one stream's turn, its huffHot at o(DI): a reload, 5 lookups.
#define LOOKUP \
	MOVQ BX, AX \
	SHRQ $53, AX \
	MOVL (SI)(AX*4), AX \
	MOVL AX, DX \
	SHRL $16, DX \
	MOVW DX, (R9)(R13*1) \
	MOVL AX, DX \
	SHRL $8, DX \
	ANDL $3, DX \
	ADDQ DX, R13 \
	MOVBQZX AL, CX \
	SHLQ CX, BX \
	ADDQ CX, R12

#define STREAM(o) \
	MOVQ o+8(DI), CX \
	MOVQ o+16(DI), R11 \
	MOVQ CX, AX \
	SHRQ $3, AX \
	SUBQ AX, R11 \
	ANDQ $7, CX \
	MOVQ -8(R8)(R11*1), BX \
	SHLQ CX, BX \
	MOVQ CX, R12 \
	MOVQ o+24(DI), R13 \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	MOVQ R12, o+8(DI) \
	MOVQ R11, o+16(DI) \
	MOVQ R13, o+24(DI)

// func huffRounds4Asm(hot *[4]huffHot, tb *[2048]uint32, src, dst *byte, k int)
TEXT ·huffRounds4Asm(SB), NOSPLIT, $0-40
	MOVQ hot+0(FP), DI
	MOVQ tb+8(FP), SI
	MOVQ src+16(FP), R8
	MOVQ dst+24(FP), R9
	MOVQ k+32(FP), R10

loop:
	STREAM(0)
	STREAM(32)
	STREAM(64)
	STREAM(96)
	DECQ R10
	JNZ  loop
	RET
