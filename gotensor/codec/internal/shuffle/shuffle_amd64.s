//go:build amd64 && !noasm

#include "textflag.h"

// SSSE3 byte-plane split and merge with the sign rotation (see
// shuffle.go for the plain Go twins these must match).

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

// func merge4AVX2(dst, p0, p1, p2, p3 *byte, n int)
// merge4SSSE3 32 elements a round; n: elements, a multiple of 32.
TEXT ·merge4AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DX
	MOVQ p0+8(FP), R8
	MOVQ p1+16(FP), R9
	MOVQ p2+24(FP), R10
	MOVQ p3+32(FP), R11
	MOVQ n+40(FP), CX
loop4:
	CMPQ CX, $32
	JB   done4
	VMOVDQU (R8), Y0
	VMOVDQU (R9), Y1
	VMOVDQU (R10), Y2
	VMOVDQU (R11), Y3
	VPUNPCKLBW Y2, Y3, Y4 // low words p3|p2<<8: elements 0-7 | 16-23
	VPUNPCKHBW Y2, Y3, Y5 // 8-15 | 24-31
	VPUNPCKLBW Y0, Y1, Y6 // high words p1|p0<<8
	VPUNPCKHBW Y0, Y1, Y7
	VPUNPCKLWD Y6, Y4, Y0 // elements 0-3 | 16-19
	VPUNPCKHWD Y6, Y4, Y1 // 4-7 | 20-23
	VPUNPCKLWD Y7, Y5, Y2 // 8-11 | 24-27
	VPUNPCKHWD Y7, Y5, Y3 // 12-15 | 28-31
	VPSRLD $1, Y0, Y4
	VPSLLD $31, Y0, Y0
	VPOR   Y4, Y0, Y0
	VPSRLD $1, Y1, Y5
	VPSLLD $31, Y1, Y1
	VPOR   Y5, Y1, Y1
	VPSRLD $1, Y2, Y6
	VPSLLD $31, Y2, Y2
	VPOR   Y6, Y2, Y2
	VPSRLD $1, Y3, Y7
	VPSLLD $31, Y3, Y3
	VPOR   Y7, Y3, Y3
	VPERM2I128 $0x20, Y1, Y0, Y4 // elements 0-7
	VPERM2I128 $0x20, Y3, Y2, Y5 // 8-15
	VPERM2I128 $0x31, Y1, Y0, Y6 // 16-23
	VPERM2I128 $0x31, Y3, Y2, Y7 // 24-31
	VMOVDQU Y4, (DX)
	VMOVDQU Y5, 32(DX)
	VMOVDQU Y6, 64(DX)
	VMOVDQU Y7, 96(DX)
	ADDQ $128, DX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	SUBQ $32, CX
	JMP  loop4
done4:
	VZEROUPPER
	RET

// func merge4AVX2NT(dst, p0, p1, p2, p3 *byte, n int)
// merge4AVX2 with non-temporal stores (dst 32-byte aligned): a large
// chunk's output goes to memory without being read in first.
TEXT ·merge4AVX2NT(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DX
	MOVQ p0+8(FP), R8
	MOVQ p1+16(FP), R9
	MOVQ p2+24(FP), R10
	MOVQ p3+32(FP), R11
	MOVQ n+40(FP), CX
loop4nt:
	CMPQ CX, $32
	JB   done4nt
	VMOVDQU (R8), Y0
	VMOVDQU (R9), Y1
	VMOVDQU (R10), Y2
	VMOVDQU (R11), Y3
	VPUNPCKLBW Y2, Y3, Y4 // low words p3|p2<<8: elements 0-7 | 16-23
	VPUNPCKHBW Y2, Y3, Y5 // 8-15 | 24-31
	VPUNPCKLBW Y0, Y1, Y6 // high words p1|p0<<8
	VPUNPCKHBW Y0, Y1, Y7
	VPUNPCKLWD Y6, Y4, Y0 // elements 0-3 | 16-19
	VPUNPCKHWD Y6, Y4, Y1 // 4-7 | 20-23
	VPUNPCKLWD Y7, Y5, Y2 // 8-11 | 24-27
	VPUNPCKHWD Y7, Y5, Y3 // 12-15 | 28-31
	VPSRLD $1, Y0, Y4
	VPSLLD $31, Y0, Y0
	VPOR   Y4, Y0, Y0
	VPSRLD $1, Y1, Y5
	VPSLLD $31, Y1, Y1
	VPOR   Y5, Y1, Y1
	VPSRLD $1, Y2, Y6
	VPSLLD $31, Y2, Y2
	VPOR   Y6, Y2, Y2
	VPSRLD $1, Y3, Y7
	VPSLLD $31, Y3, Y3
	VPOR   Y7, Y3, Y3
	VPERM2I128 $0x20, Y1, Y0, Y4 // elements 0-7
	VPERM2I128 $0x20, Y3, Y2, Y5 // 8-15
	VPERM2I128 $0x31, Y1, Y0, Y6 // 16-23
	VPERM2I128 $0x31, Y3, Y2, Y7 // 24-31
	VMOVNTDQ Y4, (DX)
	VMOVNTDQ Y5, 32(DX)
	VMOVNTDQ Y6, 64(DX)
	VMOVNTDQ Y7, 96(DX)
	ADDQ $128, DX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	SUBQ $32, CX
	JMP  loop4nt
done4nt:
	SFENCE
	VZEROUPPER
	RET

// per 64-bit lane of a group of 32 elements: where its low 2 bits sit in
// the packed word (see low2.go)
DATA low2Shifts<>+0(SB)/8, $0
DATA low2Shifts<>+8(SB)/8, $2
DATA low2Shifts<>+16(SB)/8, $4
DATA low2Shifts<>+24(SB)/8, $6
GLOBL low2Shifts<>(SB), (RODATA|NOPTR), $32

DATA low2Mask<>+0(SB)/8, $0x0303030303030303
GLOBL low2Mask<>(SB), (RODATA|NOPTR), $8

DATA high6Mask<>+0(SB)/8, $0xFCFCFCFCFCFCFCFC
GLOBL high6Mask<>(SB), (RODATA|NOPTR), $8

// func joinLow2AVX2(p, b *byte, groups int)
// Each group: 32 bytes of p shifted left by 2, joined with their low 2
// bits from 8 bytes of b (JoinLow2's twin).
TEXT ·joinLow2AVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ groups+16(FP), CX
	VMOVDQU      low2Shifts<>(SB), Y5
	VPBROADCASTQ low2Mask<>(SB), Y6
	VPBROADCASTQ high6Mask<>(SB), Y7
loopj:
	TESTQ CX, CX
	JZ    donej
	VPBROADCASTQ (SI), Y1
	VPSRLVQ      Y5, Y1, Y1
	VPAND        Y6, Y1, Y1
	VMOVDQU      (DI), Y0
	VPSLLQ       $2, Y0, Y0
	VPAND        Y7, Y0, Y0
	VPOR         Y1, Y0, Y0
	VMOVDQU      Y0, (DI)
	ADDQ $32, DI
	ADDQ $8, SI
	DECQ CX
	JMP  loopj
donej:
	VZEROUPPER
	RET

// func cutLow2AVX2(p, b *byte, groups int)
// Each group: the low 2 bits of 32 bytes of p packed into 8 bytes of b,
// and the 32 bytes shifted right by 2 (CutLow2's twin).
TEXT ·cutLow2AVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ groups+16(FP), CX
	VMOVDQU      low2Shifts<>(SB), Y5
	VPBROADCASTQ low2Mask<>(SB), Y6
	VPBROADCASTQ high6Mask<>(SB), Y7
loopc:
	TESTQ CX, CX
	JZ    donec
	VMOVDQU      (DI), Y0
	VPAND        Y6, Y0, Y1
	VPSLLVQ      Y5, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPOR         X2, X1, X1
	VPSHUFD      $0x4E, X1, X2
	VPOR         X2, X1, X1
	VMOVQ        X1, (SI)
	VPAND        Y7, Y0, Y0
	VPSRLQ       $2, Y0, Y0
	VMOVDQU      Y0, (DI)
	ADDQ $32, DI
	ADDQ $8, SI
	DECQ CX
	JMP  loopc
donec:
	VZEROUPPER
	RET
