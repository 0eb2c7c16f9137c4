//go:build amd64 && !noasm

#include "textflag.h"

// Bytes weighted 32..1 by their place in a 32-byte block, and 16 words of 1.
DATA adlerWeights<>+0(SB)/8, $0x191a1b1c1d1e1f20
DATA adlerWeights<>+8(SB)/8, $0x1112131415161718
DATA adlerWeights<>+16(SB)/8, $0x090a0b0c0d0e0f10
DATA adlerWeights<>+24(SB)/8, $0x0102030405060708
GLOBL adlerWeights<>(SB), RODATA|NOPTR, $32

DATA adlerOnes<>+0(SB)/8, $0x0001000100010001
DATA adlerOnes<>+8(SB)/8, $0x0001000100010001
DATA adlerOnes<>+16(SB)/8, $0x0001000100010001
DATA adlerOnes<>+24(SB)/8, $0x0001000100010001
GLOBL adlerOnes<>(SB), RODATA|NOPTR, $32

// One block of Adler-32 lanes for the 32 bytes in X: S the byte sums, B
// the byte sums before each block, W the weighted sums (as in
// adlerBlocksAVX2; Y7 zero, Y14 the weights, Y15 ones, Y6 scratch).
#define ADLER_BLOCK(X, S, B, W) \
	VPADDD     S, B, B; \
	VPSADBW    Y7, X, Y6; \
	VPADDD     Y6, S, S; \
	VPMADDUBSW Y14, X, Y6; \
	VPMADDWD   Y15, Y6, Y6; \
	VPADDD     Y6, W, W

// func mergeAdler2AVX2(dst, hi, lo *byte, n int, v *[2][24]uint32)
// shuffle's merge of two rotated planes (merge2SSSE3, 32 elements a round
// in AVX2) adding the Adler-32 lanes of hi to v[0]
// and of lo to v[1] on the way. n: elements, a multiple of 32.
TEXT ·mergeAdler2AVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DX
	MOVQ    hi+8(FP), DI
	MOVQ    lo+16(FP), SI
	MOVQ    n+24(FP), CX
	MOVQ    v+32(FP), AX
	VMOVDQU (AX), Y8
	VMOVDQU 32(AX), Y9
	VMOVDQU 64(AX), Y10
	VMOVDQU 96(AX), Y11
	VMOVDQU 128(AX), Y12
	VMOVDQU 160(AX), Y13
	VPXOR   Y7, Y7, Y7
	VMOVDQU adlerWeights<>(SB), Y14
	VMOVDQU adlerOnes<>(SB), Y15

mergeloop:
	CMPQ    CX, $32
	JB      mergedone
	VMOVDQU (SI), Y0
	VMOVDQU (DI), Y1
	ADLER_BLOCK(Y1, Y8, Y9, Y10)
	ADLER_BLOCK(Y0, Y11, Y12, Y13)
	VPUNPCKLBW Y1, Y0, Y2 // elements 0-7 | 16-23
	VPUNPCKHBW Y1, Y0, Y3 // elements 8-15 | 24-31
	VPSRLW     $1, Y2, Y4
	VPSLLW     $15, Y2, Y2
	VPOR       Y4, Y2, Y2
	VPSRLW     $1, Y3, Y5
	VPSLLW     $15, Y3, Y3
	VPOR       Y5, Y3, Y3
	VPERM2I128 $0x20, Y3, Y2, Y4 // elements 0-15
	VPERM2I128 $0x31, Y3, Y2, Y5 // elements 16-31
	VMOVDQU    Y4, (DX)
	VMOVDQU    Y5, 32(DX)
	ADDQ       $64, DX
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $32, CX
	JMP        mergeloop

mergedone:
	VMOVDQU Y8, (AX)
	VMOVDQU Y9, 32(AX)
	VMOVDQU Y10, 64(AX)
	VMOVDQU Y11, 96(AX)
	VMOVDQU Y12, 128(AX)
	VMOVDQU Y13, 160(AX)
	VZEROUPPER
	RET
