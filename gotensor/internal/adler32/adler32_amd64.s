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

// func blocksAVX2(p []byte, v *Lanes)
// blocksGo in AVX2 over the whole 32-byte blocks of p (at least
// one): Y0 the byte sums (VPSADBW), Y1 the byte sums before each block,
// Y2 the weighted sums (VPMADDUBSW, then VPMADDWD by ones).
TEXT ·blocksAVX2(SB), NOSPLIT, $0-32
	MOVQ    p_base+0(FP), SI
	MOVQ    p_len+8(FP), CX
	SHRQ    $5, CX
	MOVQ    v+24(FP), DI
	VMOVDQU (DI), Y0
	VMOVDQU 32(DI), Y1
	VMOVDQU 64(DI), Y2
	VPXOR   Y7, Y7, Y7
	VMOVDQU adlerWeights<>(SB), Y5
	VMOVDQU adlerOnes<>(SB), Y6

blocks:
	VMOVDQU    (SI), Y3
	VPADDD     Y0, Y1, Y1
	VPSADBW    Y7, Y3, Y4
	VPADDD     Y4, Y0, Y0
	VPMADDUBSW Y5, Y3, Y4
	VPMADDWD   Y6, Y4, Y4
	VPADDD     Y4, Y2, Y2
	ADDQ       $32, SI
	DECQ       CX
	JNZ        blocks

	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VZEROUPPER
	RET

