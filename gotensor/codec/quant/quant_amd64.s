//go:build amd64 && !noasm

#include "textflag.h"

// SSE kernels of the quantizers (see quant_kernels.go for the Go twins
// these must match bit for bit). n counts float32 elements.

// byte 0 of each dword to the low dword
DATA lowBytes<>+0(SB)/8, $0x808080800c080400
DATA lowBytes<>+8(SB)/8, $0x8080808080808080
GLOBL lowBytes<>(SB), (RODATA|NOPTR), $16

DATA byteMask<>+0(SB)/8, $0x00ff00ff00ff00ff
DATA byteMask<>+8(SB)/8, $0x00ff00ff00ff00ff
GLOBL byteMask<>(SB), (RODATA|NOPTR), $16

// func minMaxSumSSE(x *float32, n int) (mn, mx, sum float32)
// n: a multiple of 4, at least 4.
TEXT ·minMaxSumSSE(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVUPS (SI), X0
	MOVAPS X0, X1
	MOVAPS X0, X2
	ADDQ $16, SI
	SUBQ $4, CX
loop:
	CMPQ CX, $4
	JB   reduce
	MOVUPS (SI), X3
	MINPS X3, X0
	MAXPS X3, X1
	ADDPS X3, X2
	ADDQ $16, SI
	SUBQ $4, CX
	JMP  loop
reduce:
	MOVHLPS X0, X3
	MINPS X3, X0
	PSHUFD $0x55, X0, X3
	MINSS X3, X0
	MOVHLPS X1, X3
	MAXPS X3, X1
	PSHUFD $0x55, X1, X3
	MAXSS X3, X1
	MOVHLPS X2, X3
	ADDPS X3, X2
	PSHUFD $0x55, X2, X3
	ADDSS X3, X2
	MOVSS X0, mn+16(FP)
	MOVSS X1, mx+20(FP)
	MOVSS X2, sum+24(FP)
	RET

// X0 = the codes of the four floats at (SI), as the low bytes of its dwords:
// min(max((x-mn)*scale, 0), levels) (NaN to 0), rounded half to even by
// adding 1.5*2^23.
#define QUANT4(r) \
	MOVUPS (SI), r \
	SUBPS X4, r \
	MULPS X5, r \
	MAXPS X8, r \
	MINPS X6, r \
	ADDPS X7, r

// func quantize8SSE(out *byte, x *float32, n int, mn, scale, levels float32)
// n: a multiple of 4.
TEXT ·quantize8SSE(SB), NOSPLIT, $0-36
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	// broadcast mn, scale, levels; the rounding constant; zero
	MOVSS mn+24(FP), X4
	SHUFPS $0, X4, X4
	MOVSS scale+28(FP), X5
	SHUFPS $0, X5, X5
	MOVSS levels+32(FP), X6
	SHUFPS $0, X6, X6
	MOVL $0x4b400000, AX
	MOVL AX, X7
	SHUFPS $0, X7, X7
	PXOR X8, X8
	MOVOU lowBytes<>(SB), X9
loop8:
	CMPQ CX, $4
	JB   done8
	QUANT4(X0)
	PSHUFB X9, X0
	MOVSS X0, (DI)
	ADDQ $16, SI
	ADDQ $4, DI
	SUBQ $4, CX
	JMP  loop8
done8:
	RET

// func quantize4SSE(out *byte, x *float32, n int, mn, scale, levels float32)
// n: a multiple of 8; element 2j in the high nibble, 2j+1 in the low one.
TEXT ·quantize4SSE(SB), NOSPLIT, $0-36
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	// broadcast mn, scale, levels; the rounding constant; zero
	MOVSS mn+24(FP), X4
	SHUFPS $0, X4, X4
	MOVSS scale+28(FP), X5
	SHUFPS $0, X5, X5
	MOVSS levels+32(FP), X6
	SHUFPS $0, X6, X6
	MOVL $0x4b400000, AX
	MOVL AX, X7
	SHUFPS $0, X7, X7
	PXOR X8, X8
	MOVOU lowBytes<>(SB), X9
	MOVOU byteMask<>(SB), X10
loop4:
	CMPQ CX, $8
	JB   done4
	QUANT4(X0)
	ADDQ $16, SI
	QUANT4(X1)
	ADDQ $16, SI
	PSHUFB X9, X0
	PSHUFB X9, X1
	PUNPCKLLQ X1, X0 // q0..q7 in the low 8 bytes
	MOVO X0, X2
	PSRLW $8, X2     // q(2j+1)
	PSLLW $4, X0
	PAND X10, X0     // q(2j) << 4
	POR X2, X0
	PACKUSWB X0, X0
	MOVSS X0, (DI)
	ADDQ $4, DI
	SUBQ $8, CX
	JMP  loop4
done4:
	RET

// func bf16ToF32SSE(dst *float32, src *byte, n int)
// n: a multiple of 8.
TEXT ·bf16ToF32SSE(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loopb:
	CMPQ CX, $8
	JB   doneb
	MOVOU (SI), X0
	PXOR X1, X1
	PXOR X2, X2
	PUNPCKLWL X0, X1
	PUNPCKHWL X0, X2
	MOVUPS X1, (DI)
	MOVUPS X2, 16(DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loopb
doneb:
	RET

// func dequantize8SSE(dst *float32, q *byte, n int, scale, mn float32)
// dst[i] = float32(q[i])/scale + mn; n: a multiple of 4.
TEXT ·dequantize8SSE(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ n+16(FP), CX
	MOVSS scale+24(FP), X5
	SHUFPS $0, X5, X5
	MOVSS mn+28(FP), X4
	SHUFPS $0, X4, X4
	PXOR X8, X8
loopd:
	CMPQ CX, $4
	JB   doned
	MOVSS (SI), X0
	PUNPCKLBW X8, X0
	PUNPCKLWL X8, X0
	CVTPL2PS X0, X0
	DIVPS X5, X0
	ADDPS X4, X0
	MOVUPS X0, (DI)
	ADDQ $4, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JMP  loopd
doned:
	RET

// func minMaxColsSSE(mn, mx, sum, x *float32, n int)
// Per column c < n: mn[c] = min(mn[c], x[c]), mx[c] = max(mx[c], x[c]),
// sum[c] += x[c]; n: a multiple of 4.
TEXT ·minMaxColsSSE(SB), NOSPLIT, $0-40
	MOVQ mn+0(FP), R8
	MOVQ mx+8(FP), R9
	MOVQ sum+16(FP), R10
	MOVQ x+24(FP), SI
	MOVQ n+32(FP), CX
	XORQ AX, AX
loopm:
	CMPQ CX, $4
	JB   donem
	MOVUPS (SI)(AX*1), X3
	MOVUPS (R8)(AX*1), X0
	MOVUPS (R9)(AX*1), X1
	MOVUPS (R10)(AX*1), X2
	MINPS X3, X0
	MAXPS X3, X1
	ADDPS X3, X2
	MOVUPS X0, (R8)(AX*1)
	MOVUPS X1, (R9)(AX*1)
	MOVUPS X2, (R10)(AX*1)
	ADDQ $16, AX
	SUBQ $4, CX
	JMP  loopm
donem:
	RET

// func quantizeColsSSE(out *byte, even, odd, mn, sc *float32, n int, levels float32)
// Per column c < n, the code of even[c] (q8: odd is nil), or of even[c]
// in the high nibble and odd[c] in the low one (q4); n: a multiple of 4.
TEXT ·quantizeColsSSE(SB), NOSPLIT, $0-52
	MOVQ out+0(FP), DI
	MOVQ even+8(FP), SI
	MOVQ odd+16(FP), DX
	MOVQ mn+24(FP), R8
	MOVQ sc+32(FP), R9
	MOVQ n+40(FP), CX
	MOVSS levels+48(FP), X6
	SHUFPS $0, X6, X6
	MOVL $0x4b400000, AX
	MOVL AX, X7
	SHUFPS $0, X7, X7
	PXOR X8, X8
	MOVOU lowBytes<>(SB), X9
	XORQ AX, AX
loopq:
	CMPQ CX, $4
	JB   doneq
	MOVUPS (R8)(AX*4), X4
	MOVUPS (R9)(AX*4), X5
	MOVUPS (SI)(AX*4), X0
	SUBPS X4, X0
	MULPS X5, X0
	MAXPS X8, X0
	MINPS X6, X0
	ADDPS X7, X0
	PSHUFB X9, X0
	TESTQ DX, DX
	JZ   store
	MOVUPS (DX)(AX*4), X1
	SUBPS X4, X1
	MULPS X5, X1
	MAXPS X8, X1
	MINPS X6, X1
	ADDPS X7, X1
	PSHUFB X9, X1
	PSLLW $4, X0 // codes < 16: no bits cross into the next byte
	POR X1, X0
store:
	MOVSS X0, (DI)(AX*1)
	ADDQ $4, AX
	SUBQ $4, CX
	JMP  loopq
doneq:
	RET

// func dequantizeColsSSE(dst *float32, q *byte, sc, mn *float32, n int)
// dst[c] = float32(q[c])/sc[c] + mn[c]; n: a multiple of 4.
TEXT ·dequantizeColsSSE(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ sc+16(FP), R8
	MOVQ mn+24(FP), R9
	MOVQ n+32(FP), CX
	PXOR X8, X8
	XORQ AX, AX
loopc:
	CMPQ CX, $4
	JB   donec
	MOVSS (SI)(AX*1), X0
	PUNPCKLBW X8, X0
	PUNPCKLWL X8, X0
	CVTPL2PS X0, X0
	MOVUPS (R8)(AX*4), X5
	MOVUPS (R9)(AX*4), X4
	DIVPS X5, X0
	ADDPS X4, X0
	MOVUPS X0, (DI)(AX*4)
	ADDQ $4, AX
	SUBQ $4, CX
	JMP  loopc
donec:
	RET

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), (RODATA|NOPTR), $16

// X1 = the 16 nibbles of the 8 bytes at (SI), high nibble first, as bytes.
#define NIBBLES \
	MOVQ (SI), X0 \
	MOVO X0, X1 \
	PSRLW $4, X1 \
	PAND X7, X1 \
	PAND X7, X0 \
	PUNPCKLBW X0, X1

// func nibbles16SSE(out, in *byte, n int, tab *[32]byte)
// The 2n 16-bit words tab[nibble] (tab: 16 low bytes, then 16 high bytes)
// of the n bytes at in, high nibble first; n: a multiple of 8.
TEXT ·nibbles16SSE(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), AX
	MOVOU (AX), X5
	MOVOU 16(AX), X6
	MOVOU nibbleMask<>(SB), X7
loopn:
	CMPQ CX, $8
	JB   donen
	NIBBLES
	MOVO X5, X2
	PSHUFB X1, X2 // low bytes
	MOVO X6, X3
	PSHUFB X1, X3 // high bytes
	MOVO X2, X4
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X4
	MOVOU X2, (DI)
	MOVOU X4, 16(DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loopn
donen:
	RET

// func nibbles32SSE(out, in *byte, n int, tab *[64]byte)
// As nibbles16SSE with 32-bit words (tab: bytes 0, 1, 2, 3 of the 16 words).
TEXT ·nibbles32SSE(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), AX
	MOVOU nibbleMask<>(SB), X7
	MOVOU (AX), X8
	MOVOU 16(AX), X9
	MOVOU 32(AX), X10
	MOVOU 48(AX), X11
loopw:
	CMPQ CX, $8
	JB   donew
	NIBBLES
	MOVO X8, X2
	PSHUFB X1, X2
	MOVO X9, X3
	PSHUFB X1, X3
	MOVO X10, X4
	PSHUFB X1, X4
	MOVO X11, X5
	PSHUFB X1, X5
	MOVO X2, X12
	PUNPCKLBW X3, X2  // bytes 0,1 of words 0-7
	PUNPCKHBW X3, X12 // of words 8-15
	MOVO X4, X13
	PUNPCKLBW X5, X4  // bytes 2,3 of words 0-7
	PUNPCKHBW X5, X13
	MOVO X2, X3
	PUNPCKLWL X4, X2
	PUNPCKHWL X4, X3
	MOVO X12, X5
	PUNPCKLWL X13, X12
	PUNPCKHWL X13, X5
	MOVOU X2, (DI)
	MOVOU X3, 16(DI)
	MOVOU X12, 32(DI)
	MOVOU X5, 48(DI)
	ADDQ $8, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  loopw
donew:
	RET

DATA halfConst<>+0(SB)/4, $0x00007fff  // magnitude of a half
DATA halfConst<>+4(SB)/4, $0x38000000  // (127-15) << 23
DATA halfConst<>+8(SB)/4, $0x00008000  // sign of a half
DATA halfConst<>+12(SB)/4, $0x00007c00 // exponent of a half
DATA halfConst<>+16(SB)/4, $0x7fffffff // magnitude of a float
DATA halfConst<>+20(SB)/4, $0x00000fff // rounding
DATA halfConst<>+24(SB)/4, $0x00000001
DATA halfConst<>+28(SB)/4, $0x00000070 // 112
DATA halfConst<>+32(SB)/4, $0x0000008e // 142
DATA halfConst<>+36(SB)/4, $0x000000ff
GLOBL halfConst<>(SB), (RODATA|NOPTR), $40

// low words of four dwords to the low 8 bytes
DATA lowWords<>+0(SB)/8, $0x0d0c090805040100
DATA lowWords<>+8(SB)/8, $0x8080808080808080
GLOBL lowWords<>(SB), (RODATA|NOPTR), $16

#define BCAST(off, r) \
	MOVSS halfConst<>+off(SB), r \
	SHUFPS $0, r, r

// X1 (four dwords, a half in the low word of each) to float32 bits, with
// normal halves only: (h&0x7fff)<<13 + (112<<23) | (h&0x8000)<<16.
#define HALF4(r) \
	MOVO r, X2 \
	PAND X10, X2 \
	PSLLL $13, X2 \
	PADDL X11, X2 \
	PAND X12, r \
	PSLLL $16, r \
	POR X2, r

// func f16ToF32SSE(dst *float32, src *byte, n int) int
// Converts 8 halves at a time while all 8 are normal numbers; returns how
// many it did. n: a multiple of 8.
TEXT ·f16ToF32SSE(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX
	BCAST(0, X10)
	BCAST(4, X11)
	BCAST(8, X12)
	MOVL $0x7c007c00, AX
	MOVL AX, X13
	PSHUFD $0, X13, X13
	PXOR X14, X14
loophf:
	CMPQ CX, $8
	JB   donehf
	MOVOU (SI), X0
	MOVO X0, X3
	PAND X13, X3
	MOVO X3, X4
	PCMPEQW X14, X3 // exponent 0: zero or subnormal
	PCMPEQW X13, X4 // exponent 31: inf or NaN
	POR X4, X3
	PMOVMSKB X3, AX
	TESTL AX, AX
	JNZ  donehf
	MOVO X0, X1
	PUNPCKLWL X14, X1
	HALF4(X1)
	MOVUPS X1, (DI)
	MOVO X0, X1
	PUNPCKHWL X14, X1
	HALF4(X1)
	MOVUPS X1, 16(DI)
	ADDQ $16, SI
	ADDQ $32, DI
	ADDQ $8, BX
	SUBQ $8, CX
	JMP  loophf
donehf:
	MOVQ BX, ret+24(FP)
	RET

// r (four float32) to half bits in the low word of each dword, for floats
// whose exponent is 113..141 (normal halves even after rounding up):
// m = (b&0x7fffffff) - 112<<23; (m + 0xfff + (m>>13)&1) >> 13 | (b>>16)&0x8000.
// X5 |= lanes outside that range.
#define TOHALF4(r) \
	MOVO r, X2 \
	PSRLL $23, X2 \
	PAND X9, X2 \
	MOVO X2, X3 \
	PCMPGTL X8, X3 \
	MOVO X7, X4 \
	PCMPGTL X2, X4 \
	PAND X4, X3 \
	PCMPEQL X14, X3 \
	POR X3, X5 \
	MOVO r, X2 \
	PAND X10, X2 \
	PSUBL X11, X2 \
	MOVO X2, X3 \
	PSRLL $13, X3 \
	PAND X13, X3 \
	PADDL X12, X2 \
	PADDL X3, X2 \
	PSRLL $13, X2 \
	PSRLL $16, r \
	PAND X6, r \
	POR X2, r \
	PSHUFB X15, r

// func f32ToF16SSE(dst *byte, src *float32, n int) int
// Converts 8 floats at a time while all 8 round to normal halves; returns
// how many it did. n: a multiple of 8.
TEXT ·f32ToF16SSE(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX
	BCAST(8, X6)
	BCAST(32, X7)
	BCAST(28, X8)
	BCAST(36, X9)
	BCAST(16, X10)
	BCAST(4, X11)
	BCAST(20, X12)
	BCAST(24, X13)
	PXOR X14, X14
	MOVOU lowWords<>(SB), X15
loopfh:
	CMPQ CX, $8
	JB   donefh
	PXOR X5, X5
	MOVUPS (SI), X0
	TOHALF4(X0)
	MOVUPS 16(SI), X1
	TOHALF4(X1)
	PMOVMSKB X5, AX
	TESTL AX, AX
	JNZ  donefh
	PUNPCKLQDQ X1, X0
	MOVOU X0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	ADDQ $8, BX
	SUBQ $8, CX
	JMP  loopfh
donefh:
	MOVQ BX, ret+24(FP)
	RET
