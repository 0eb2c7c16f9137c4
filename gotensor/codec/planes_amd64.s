#include "textflag.h"

// SSSE3 byte-plane split and merge with the sign rotation (see
// planes_split.go for the plain Go twins these must match).

DATA evenOdd<>+0(SB)/8, $0x0e0c0a0806040200
DATA evenOdd<>+8(SB)/8, $0x0f0d0b0907050301
GLOBL evenOdd<>(SB), (RODATA|NOPTR), $16

// byte 3 of four dwords, then byte 2, byte 1, byte 0
DATA planes4<>+0(SB)/8, $0x0e0a06020f0b0703
DATA planes4<>+8(SB)/8, $0x0c0804000d090501
GLOBL planes4<>(SB), (RODATA|NOPTR), $16

// the inverse of planes4
DATA unplanes4<>+0(SB)/8, $0x0105090d0004080c
DATA unplanes4<>+8(SB)/8, $0x03070b0f02060a0e
GLOBL unplanes4<>(SB), (RODATA|NOPTR), $16

// func split2SSSE3(hi, lo, src *byte, n int)
// n: elements, a multiple of 8.
TEXT ·split2SSSE3(SB), NOSPLIT, $0-32
	MOVQ hi+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ src+16(FP), DX
	MOVQ n+24(FP), CX
	MOVOU evenOdd<>(SB), X7
loop:
	CMPQ CX, $8
	JB   done
	MOVOU (DX), X0
	MOVO  X0, X1
	PSLLW $1, X0
	PSRLW $15, X1
	POR   X1, X0
	PSHUFB X7, X0
	MOVQ   X0, (SI)
	MOVHPS X0, (DI)
	ADDQ $16, DX
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  loop
done:
	RET

// func merge2SSSE3(dst, hi, lo *byte, n int)
TEXT ·merge2SSSE3(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DX
	MOVQ hi+8(FP), DI
	MOVQ lo+16(FP), SI
	MOVQ n+24(FP), CX
loop:
	CMPQ CX, $8
	JB   done
	MOVQ (SI), X0
	MOVQ (DI), X1
	PUNPCKLBW X1, X0
	MOVO  X0, X1
	PSRLW $1, X0
	PSLLW $15, X1
	POR   X1, X0
	MOVOU X0, (DX)
	ADDQ $16, DX
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  loop
done:
	RET

// func split4SSSE3(p0, p1, p2, p3, src *byte, n int)
// n: elements, a multiple of 4.
TEXT ·split4SSSE3(SB), NOSPLIT, $0-48
	MOVQ p0+0(FP), R8
	MOVQ p1+8(FP), R9
	MOVQ p2+16(FP), R10
	MOVQ p3+24(FP), R11
	MOVQ src+32(FP), DX
	MOVQ n+40(FP), CX
	MOVOU planes4<>(SB), X7
loop:
	CMPQ CX, $4
	JB   done
	MOVOU (DX), X0
	MOVO  X0, X1
	PSLLL $1, X0
	PSRLL $31, X1
	POR   X1, X0
	PSHUFB X7, X0
	MOVL   X0, (R8)
	PSRLO  $4, X0
	MOVL   X0, (R9)
	PSRLO  $4, X0
	MOVL   X0, (R10)
	PSRLO  $4, X0
	MOVL   X0, (R11)
	ADDQ $16, DX
	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	SUBQ $4, CX
	JMP  loop
done:
	RET

// func merge4SSSE3(dst, p0, p1, p2, p3 *byte, n int)
TEXT ·merge4SSSE3(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DX
	MOVQ p0+8(FP), R8
	MOVQ p1+16(FP), R9
	MOVQ p2+24(FP), R10
	MOVQ p3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVOU unplanes4<>(SB), X7
loop:
	CMPQ CX, $4
	JB   done
	MOVL (R8), X0
	MOVL (R9), X1
	MOVL (R10), X2
	MOVL (R11), X3
	PUNPCKLLQ X1, X0
	PUNPCKLLQ X3, X2
	PUNPCKLQDQ X2, X0
	PSHUFB X7, X0
	MOVO  X0, X1
	PSRLL $1, X0
	PSLLL $31, X1
	POR   X1, X0
	MOVOU X0, (DX)
	ADDQ $16, DX
	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	SUBQ $4, CX
	JMP  loop
done:
	RET
