//go:build amd64 && !noasm

#include "textflag.h"

// The packing loops of deflate_pack2.go (packGo and pack2Go are the Go
// twins these must match). A stream is in four registers: its bit buffer
// C, the bits it holds NB, where its next 8-byte store goes OUT and its
// next literal P (pointers into its buffer and its bytes). The tables
// (packTable: vals, then lens 512 bytes on) are at R8 plus VALS and LENS.

// SYM codes the literal at OFF(P) into C.
#define SYM(OFF, P, C, NB, VALS, LENS) \
	MOVBLZX OFF(P), R14; \
	MOVWLZX VALS(R8)(R14*2), R15; \
	SHLXQ   NB, R15, R15; \
	ORQ     R15, C; \
	MOVBLZX LENS(R8)(R14*1), R15; \
	ADDQ    R15, NB

// ROUND codes five literals and stores C's whole bytes: at most 7 + 5*11
// bits are ever held.
#define ROUND(P, C, NB, OUT, VALS, LENS) \
	SYM(0, P, C, NB, VALS, LENS); \
	SYM(1, P, C, NB, VALS, LENS); \
	SYM(2, P, C, NB, VALS, LENS); \
	SYM(3, P, C, NB, VALS, LENS); \
	SYM(4, P, C, NB, VALS, LENS); \
	ADDQ    $5, P; \
	MOVQ    C, (OUT); \
	MOVQ    NB, R14; \
	SHRQ    $3, R14; \
	ADDQ    R14, OUT; \
	MOVQ    NB, R14; \
	ANDQ    $56, R14; \
	SHRXQ   R14, C, C; \
	ANDQ    $7, NB

// func packBMI2(t *packTable, p, buf []byte, st *packState)
TEXT ·packBMI2(SB), NOSPLIT, $0-64
	// R13: the rounds p has left; SI: the last store address buf allows
	MOVQ st+56(FP), R9
	MOVQ p_len+16(FP), AX
	SUBQ 24(R9), AX
	CMPQ AX, $5
	JLT  none1
	XORL DX, DX
	MOVQ $5, CX
	DIVQ CX
	MOVQ AX, R13
	MOVQ buf_len+40(FP), SI
	SUBQ $8, SI
	JLT  none1
	ADDQ buf_base+32(FP), SI
	MOVQ t+0(FP), R8
	MOVQ 0(R9), AX
	MOVQ 8(R9), BX
	MOVQ 16(R9), CX
	ADDQ buf_base+32(FP), CX
	MOVQ 24(R9), DX
	ADDQ p_base+8(FP), DX

loop1:
	CMPQ CX, SI
	JHI  done1
	ROUND(DX, AX, BX, CX, 0, 512)
	DECQ R13
	JNZ  loop1

done1:
	MOVQ st+56(FP), R9
	MOVQ AX, 0(R9)
	MOVQ BX, 8(R9)
	SUBQ buf_base+32(FP), CX
	MOVQ CX, 16(R9)
	SUBQ p_base+8(FP), DX
	MOVQ DX, 24(R9)

none1:
	RET

// func pack2BMI2(t *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState)
// Stream A in AX, BX, CX, DX (table t[0]), stream B in R9, R10, R11, R12
// (t[1], 768 bytes on).
TEXT ·pack2BMI2(SB), NOSPLIT, $0-120
	// R13: the rounds both have left; SI, DI: the last store addresses
	// bufA and bufB allow
	MOVQ sa+104(FP), R14
	MOVQ sb+112(FP), R15
	MOVQ pa_len+16(FP), AX
	SUBQ 24(R14), AX
	MOVQ pb_len+40(FP), CX
	SUBQ 24(R15), CX
	CMPQ CX, AX
	CMOVQLT CX, AX
	CMPQ AX, $5
	JLT  none2
	XORL DX, DX
	MOVQ $5, CX
	DIVQ CX
	MOVQ AX, R13
	MOVQ bufA_len+64(FP), SI
	SUBQ $8, SI
	JLT  none2
	ADDQ bufA_base+56(FP), SI
	MOVQ bufB_len+88(FP), DI
	SUBQ $8, DI
	JLT  none2
	ADDQ bufB_base+80(FP), DI
	MOVQ t+0(FP), R8
	MOVQ 0(R14), AX
	MOVQ 8(R14), BX
	MOVQ 16(R14), CX
	ADDQ bufA_base+56(FP), CX
	MOVQ 24(R14), DX
	ADDQ pa_base+8(FP), DX
	MOVQ 0(R15), R9
	MOVQ 8(R15), R10
	MOVQ 16(R15), R11
	ADDQ bufB_base+80(FP), R11
	MOVQ 24(R15), R12
	ADDQ pb_base+32(FP), R12

loop2:
	CMPQ CX, SI
	JHI  done2
	CMPQ R11, DI
	JHI  done2
	ROUND(DX, AX, BX, CX, 0, 512)
	ROUND(R12, R9, R10, R11, 768, 1280)
	DECQ R13
	JNZ  loop2

done2:
	MOVQ sa+104(FP), R14
	MOVQ AX, 0(R14)
	MOVQ BX, 8(R14)
	SUBQ bufA_base+56(FP), CX
	MOVQ CX, 16(R14)
	SUBQ pa_base+8(FP), DX
	MOVQ DX, 24(R14)
	MOVQ sb+112(FP), R15
	MOVQ R9, 0(R15)
	MOVQ R10, 8(R15)
	SUBQ bufB_base+80(FP), R11
	MOVQ R11, 16(R15)
	SUBQ pb_base+32(FP), R12
	MOVQ R12, 24(R15)

none2:
	RET
