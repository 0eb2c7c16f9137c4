//go:build amd64 && !noasm

#include "textflag.h"

// fast4's rounds of double-symbol Huffman decoding with BMI2's shifts
// (planes_huff.go: huffRounds4Go is the Go twin this must match). Each
// stream's huffHot{v, used, off, op}, 32 bytes apiece, lives in memory
// between its turns; the four streams' chains of lookups are independent,
// for the CPU to overlap. A table entry is bits | symbols<<8 | count<<24:
// its low 6 bits are the shift. The window's lowest bit is set on reload
// (huffHot says why no lookup reaches it): its trailing zeros after the
// lookups are the bits used.

// LOOKUP: v in BX, op in R13, 53 in R14, the table at SI, dst at R9.
#define LOOKUP \
	SHRXQ R14, BX, AX \
	MOVL  (SI)(AX*4), AX \
	SHLXQ AX, BX, BX \
	MOVL  AX, DX \
	SHRL  $8, DX \
	MOVW  DX, (R9)(R13*1) \
	SHRL  $24, AX \
	ADDQ  AX, R13

// STREAM(o): one stream's turn, its huffHot at o(DI): a reload, 5 lookups.
#define STREAM(o) \
	MOVQ  o+8(DI), CX \
	MOVQ  o+16(DI), R11 \
	MOVQ  CX, AX \
	SHRQ  $3, AX \
	SUBQ  AX, R11 \
	ANDQ  $7, CX \
	MOVQ  -8(R8)(R11*1), BX \
	ORQ   $1, BX \
	SHLXQ CX, BX, BX \
	MOVQ  o+24(DI), R13 \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	LOOKUP \
	TZCNTQ BX, R12 \
	MOVQ  R12, o+8(DI) \
	MOVQ  R11, o+16(DI) \
	MOVQ  R13, o+24(DI)

// func huffRounds4BMI2(hot *[4]huffHot, tb *[2048]uint32, src, dst *byte, k int)
TEXT ·huffRounds4BMI2(SB), NOSPLIT, $0-40
	MOVQ hot+0(FP), DI
	MOVQ tb+8(FP), SI
	MOVQ src+16(FP), R8
	MOVQ dst+24(FP), R9
	MOVQ k+32(FP), R10
	MOVQ $53, R14

loop:
	STREAM(0)
	STREAM(32)
	STREAM(64)
	STREAM(96)
	DECQ R10
	JNZ  loop
	RET

// func huffRounds1BMI2(h *huffHot, tb *[2048]uint32, src, dst *byte, k int)
TEXT ·huffRounds1BMI2(SB), NOSPLIT, $0-40
	MOVQ h+0(FP), DI
	MOVQ tb+8(FP), SI
	MOVQ src+16(FP), R8
	MOVQ dst+24(FP), R9
	MOVQ k+32(FP), R10
	MOVQ $53, R14

loop1:
	STREAM(0)
	DECQ R10
	JNZ  loop1
	RET
