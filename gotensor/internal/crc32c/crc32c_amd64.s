#include "textflag.h"

// Folding constants for CRC-32C, reflected: per 128-bit lane the low
// quadword is (x^(D+32) mod P)'<<1 and the high one (x^(D-32) mod P)'<<1,
// D the fold distance in bits; then x^64 mod P, P' and Barrett's u'.
DATA k2048<>+0(SB)/8, $0xdcb17aa4
DATA k2048<>+8(SB)/8, $0xb9e02b86
DATA k2048<>+16(SB)/8, $0xdcb17aa4
DATA k2048<>+24(SB)/8, $0xb9e02b86
DATA k2048<>+32(SB)/8, $0xdcb17aa4
DATA k2048<>+40(SB)/8, $0xb9e02b86
DATA k2048<>+48(SB)/8, $0xdcb17aa4
DATA k2048<>+56(SB)/8, $0xb9e02b86
GLOBL k2048<>(SB), RODATA, $64

DATA k512<>+0(SB)/8, $0x740eef02
DATA k512<>+8(SB)/8, $0x9e4addf8
DATA k512<>+16(SB)/8, $0x740eef02
DATA k512<>+24(SB)/8, $0x9e4addf8
DATA k512<>+32(SB)/8, $0x740eef02
DATA k512<>+40(SB)/8, $0x9e4addf8
DATA k512<>+48(SB)/8, $0x740eef02
DATA k512<>+56(SB)/8, $0x9e4addf8
GLOBL k512<>(SB), RODATA, $64

DATA k128<>+0(SB)/8, $0xf20c0dfe
DATA k128<>+8(SB)/8, $0x14cd00bd6
GLOBL k128<>(SB), RODATA, $16

DATA k64<>+0(SB)/8, $0xdd45aab8
GLOBL k64<>(SB), RODATA, $8

DATA poly<>+0(SB)/8, $0x105ec76f1
DATA poly<>+8(SB)/8, $0xdea713f1
GLOBL poly<>(SB), RODATA, $16

// func clmul(crc uint32, b []byte) uint32
TEXT ·clmul(SB), NOSPLIT, $0
	MOVL crc+0(FP), X0
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX

	// four 64-byte accumulators, the CRC merged into the first
	VPXORQ    Z10, Z10, Z10
	VMOVAPS   X0, X10
	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z3
	VMOVDQU64 192(SI), Z4
	VPXORQ    Z10, Z1, Z1
	ADDQ      $256, SI
	SUBQ      $256, CX
	VMOVDQU64 k2048<>+0(SB), Z0
	CMPQ      CX, $256
	JB        fold4

loop256:
	VMOVDQU64  (SI), Z11
	VMOVDQU64  64(SI), Z12
	VMOVDQU64  128(SI), Z13
	VMOVDQU64  192(SI), Z14
	VPCLMULQDQ $0x11, Z0, Z1, Z5
	VPCLMULQDQ $0, Z0, Z1, Z1
	VPCLMULQDQ $0x11, Z0, Z2, Z6
	VPCLMULQDQ $0, Z0, Z2, Z2
	VPCLMULQDQ $0x11, Z0, Z3, Z7
	VPCLMULQDQ $0, Z0, Z3, Z3
	VPCLMULQDQ $0x11, Z0, Z4, Z8
	VPCLMULQDQ $0, Z0, Z4, Z4
	VPTERNLOGD $0x96, Z11, Z5, Z1
	VPTERNLOGD $0x96, Z12, Z6, Z2
	VPTERNLOGD $0x96, Z13, Z7, Z3
	VPTERNLOGD $0x96, Z14, Z8, Z4
	ADDQ       $256, SI
	SUBQ       $256, CX
	CMPQ       CX, $256
	JGE        loop256

fold4:
	// fold the four accumulators into one, 64 bytes apart
	VMOVDQU64  k512<>+0(SB), Z0
	VPCLMULQDQ $0x11, Z0, Z1, Z5
	VPCLMULQDQ $0, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z2, Z5, Z1
	VPCLMULQDQ $0x11, Z0, Z1, Z5
	VPCLMULQDQ $0, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z3, Z5, Z1
	VPCLMULQDQ $0x11, Z0, Z1, Z5
	VPCLMULQDQ $0, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z4, Z5, Z1

loop64:
	CMPQ       CX, $64
	JB         lanes
	VMOVDQU64  (SI), Z11
	VPCLMULQDQ $0x11, Z0, Z1, Z5
	VPCLMULQDQ $0, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z11, Z5, Z1
	ADDQ       $64, SI
	SUBQ       $64, CX
	JMP        loop64

lanes:
	VEXTRACTF32X4 $1, Z1, X2
	VEXTRACTF32X4 $2, Z1, X3
	VEXTRACTF32X4 $3, Z1, X4
	VZEROUPPER

	// fold the four lanes into X1
	MOVOU     k128<>+0(SB), X0
	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X2, X1
	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X3, X1
	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X4, X1

remain16:
	CMPQ      CX, $16
	JB        finish
	MOVOU     (SI), X10
	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X10, X1
	SUBQ      $16, CX
	ADDQ      $16, SI
	JMP       remain16

finish:
	// 128 bits to 64, then Barrett's reduction to 32
	PCMPEQB   X3, X3
	PCLMULQDQ $1, X1, X0
	PSRLDQ    $8, X1
	PXOR      X0, X1
	MOVOA     X1, X2
	MOVQ      k64<>+0(SB), X0
	PSRLQ     $32, X3
	PSRLDQ    $4, X2
	PAND      X3, X1
	PCLMULQDQ $0, X0, X1
	PXOR      X2, X1
	MOVOU     poly<>+0(SB), X0
	MOVOA     X1, X2
	PAND      X3, X1
	PCLMULQDQ $0x10, X0, X1
	PAND      X3, X1
	PCLMULQDQ $0, X0, X1
	PXOR      X2, X1
	PEXTRD    $1, X1, AX
	MOVL      AX, ret+32(FP)
	RET
