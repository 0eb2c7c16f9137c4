//go:build amd64 && !noasm

#include "textflag.h"

// Two of planes' Huffman streams coded in turns (huffenc.go:
// huffRounds2Go is the Go twin this must match). Each stream's first
// huffBits fields {Acc, N, Pos} and p are loaded into registers: the bit
// container, its bits, and as pointers where its next 8-byte store goes
// (into its buffer, outA or outB) and the end of its symbols not yet
// coded (in src). A round codes the five symbols before p, the last first,
// and stores c's whole bytes: at most 7 + 5*11 bits are ever held.

// SYM(at, c, nb): code the symbol at at (a byte of src) into c.
#define SYM(at, c, nb) \
	MOVBLZX at, BX \
	MOVWLZX (SI)(BX*2), DX \
	SHLXQ   nb, DX, DX \
	ORQ     DX, c \
	MOVBLZX (DI)(BX*1), DX \
	ADDQ    DX, nb

// ROUND(c, nb, out, p): five symbols and a flush.
#define ROUND(c, nb, out, p) \
	SUBQ    $5, p \
	SYM(4(p), c, nb) \
	SYM(3(p), c, nb) \
	SYM(2(p), c, nb) \
	SYM(1(p), c, nb) \
	SYM(0(p), c, nb) \
	MOVQ    c, (out) \
	MOVQ    nb, BX \
	SHRQ    $3, BX \
	ADDQ    BX, out \
	MOVQ    nb, BX \
	ANDQ    $-8, BX \
	SHRXQ   BX, c, c \
	ANDQ    $7, nb

// func huffRounds2BMI2(a, b *huffBits, vals *[256]uint16, lens *[256]uint8, src, outA, outB *byte, k int)
TEXT ·huffRounds2BMI2(SB), NOSPLIT, $0-64
	MOVQ src+32(FP), BX
	MOVQ a+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	ADDQ outA+40(FP), R10
	MOVQ 48(AX), R11
	ADDQ BX, R11
	MOVQ b+8(FP), AX
	MOVQ 0(AX), R12
	MOVQ 8(AX), R13
	MOVQ 16(AX), R14
	ADDQ outB+48(FP), R14
	MOVQ 48(AX), R15
	ADDQ BX, R15
	MOVQ vals+16(FP), SI
	MOVQ lens+24(FP), DI
	MOVQ k+56(FP), CX

loop:
	ROUND(R8, R9, R10, R11)
	ROUND(R12, R13, R14, R15)
	DECQ CX
	JNZ  loop

	MOVQ src+32(FP), BX
	MOVQ a+0(FP), AX
	MOVQ R8, 0(AX)
	MOVQ R9, 8(AX)
	SUBQ outA+40(FP), R10
	MOVQ R10, 16(AX)
	SUBQ BX, R11
	MOVQ R11, 48(AX)
	MOVQ b+8(FP), AX
	MOVQ R12, 0(AX)
	MOVQ R13, 8(AX)
	SUBQ outB+48(FP), R14
	MOVQ R14, 16(AX)
	SUBQ BX, R15
	MOVQ R15, 48(AX)
	RET
