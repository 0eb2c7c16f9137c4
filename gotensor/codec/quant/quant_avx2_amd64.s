//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 and F16C kernels of the quantizers and half conversions, the fast
// twins of the SSE kernels in quant_amd64.s and of the Go code in quant.go
// and half.go, which they match bit for bit. n counts float32 elements.

// Y0 = the codes of the eight floats at off(SI), in the low byte of each
// dword: min(max((x-mn)*scale, 0), levels) (NaN to 0) plus 1.5*2^23,
// which rounds half to even.
#define QUANT8(off, r) \
	VMOVUPS off(SI), r \
	VSUBPS Y4, r, r \
	VMULPS Y5, r, r \
	VMAXPS Y8, r, r \
	VMINPS Y6, r, r \
	VADDPS Y7, r, r

// r (eight codes in dword low bytes) to eight bytes in the low qword of xr.
#define PACK8(r, xr) \
	VPSHUFB Y9, r, r \
	VEXTRACTI128 $1, r, X3 \
	VPUNPCKLDQ X3, xr, xr

#define QUANT_SETUP \
	MOVQ out+0(FP), DI \
	MOVQ x+8(FP), SI \
	MOVQ n+16(FP), CX \
	VBROADCASTSS mn+24(FP), Y4 \
	VBROADCASTSS scale+28(FP), Y5 \
	VBROADCASTSS levels+32(FP), Y6 \
	VBROADCASTSS avxConst<>+16(SB), Y7 \
	VPXOR Y8, Y8, Y8 \
	VMOVDQU avxLowBytes<>(SB), Y9

// QUANT8 at a register: the codes of the eight floats at off(p).
#define QUANTP(p, off, r) \
	VMOVUPS off(p), r \
	VSUBPS Y4, r, r \
	VMULPS Y5, r, r \
	VMAXPS Y8, r, r \
	VMINPS Y6, r, r \
	VADDPS Y7, r, r

// r = min, max or sum (op) of the 8 lanes of yr (xr its low half) in
// every lane of xr; X1 is scratch.
#define REDUCE(op, yr, xr) \
	VEXTRACTF128 $1, yr, X1 \
	op X1, xr, xr \
	VPERMILPS $0x4e, xr, X1 \
	op X1, xr, xr \
	VPERMILPS $0xb1, xr, X1 \
	op X1, xr, xr

DATA avxConst<>+0(SB)/4, $0x7c007c00  // half exponents
DATA avxConst<>+4(SB)/4, $0x00007fff  // bfloat16 rounding
DATA avxConst<>+8(SB)/4, $0x00000001
DATA avxConst<>+12(SB)/4, $0x00000040 // bfloat16 quiet NaN bit
DATA avxConst<>+16(SB)/4, $0x4b400000 // 1.5 * 2^23
DATA avxConst<>+20(SB)/4, $0x00ff00ff
GLOBL avxConst<>(SB), (RODATA|NOPTR), $24

// byte 0 of each dword to the low dword of each 128-bit lane
DATA avxLowBytes<>+0(SB)/8, $0x808080800c080400
DATA avxLowBytes<>+8(SB)/8, $0x8080808080808080
DATA avxLowBytes<>+16(SB)/8, $0x808080800c080400
DATA avxLowBytes<>+24(SB)/8, $0x8080808080808080
GLOBL avxLowBytes<>(SB), (RODATA|NOPTR), $32

// the codes 0..15 as float32
DATA avxIota<>+0(SB)/4, $0x00000000
DATA avxIota<>+4(SB)/4, $0x3f800000
DATA avxIota<>+8(SB)/4, $0x40000000
DATA avxIota<>+12(SB)/4, $0x40400000
DATA avxIota<>+16(SB)/4, $0x40800000
DATA avxIota<>+20(SB)/4, $0x40a00000
DATA avxIota<>+24(SB)/4, $0x40c00000
DATA avxIota<>+28(SB)/4, $0x40e00000
DATA avxIota<>+32(SB)/4, $0x41000000
DATA avxIota<>+36(SB)/4, $0x41100000
DATA avxIota<>+40(SB)/4, $0x41200000
DATA avxIota<>+44(SB)/4, $0x41300000
DATA avxIota<>+48(SB)/4, $0x41400000
DATA avxIota<>+52(SB)/4, $0x41500000
DATA avxIota<>+56(SB)/4, $0x41600000
DATA avxIota<>+60(SB)/4, $0x41700000
GLOBL avxIota<>(SB), (RODATA|NOPTR), $64

// even bytes of eight words to the low 8 bytes, odd bytes to the high 8
DATA avxSplitWords<>+0(SB)/8, $0x0e0c0a0806040200
DATA avxSplitWords<>+8(SB)/8, $0x0f0d0b0907050301
GLOBL avxSplitWords<>(SB), (RODATA|NOPTR), $16

// func f16ToF32AVX(dst *float32, src *byte, n int) int
// Converts 8 halves at a time while none of the 8 is an infinity or NaN
// (F16C quiets signalling NaNs, the Go code keeps them); returns how many
// it did. n: a multiple of 8.
TEXT ·f16ToF32AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX
	VPBROADCASTD avxConst<>+0(SB), X13
loop:
	CMPQ CX, $8
	JB   done
	VMOVDQU (SI), X0
	VPAND X13, X0, X1
	VPCMPEQW X13, X1, X1
	VPMOVMSKB X1, AX
	TESTL AX, AX
	JNZ  done
	VCVTPH2PS X0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	ADDQ $8, BX
	SUBQ $8, CX
	JMP  loop
done:
	MOVQ BX, ret+24(FP)
	VZEROUPPER
	RET

// func f32ToF16AVX(dst *byte, src *float32, n int) int
// Converts 8 floats at a time, rounding to nearest even, while none of the
// 8 is a NaN (F16C keeps payload bits, the Go code does not); returns how
// many it did. n: a multiple of 8.
TEXT ·f32ToF16AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX
loopf:
	CMPQ CX, $8
	JB   donef
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y1 // unordered: NaN
	VMOVMSKPS Y1, AX
	TESTL AX, AX
	JNZ  donef
	VCVTPS2PH $0, Y0, X0
	VMOVDQU X0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	ADDQ $8, BX
	SUBQ $8, CX
	JMP  loopf
donef:
	MOVQ BX, ret+24(FP)
	VZEROUPPER
	RET

// func bf16ToF32AVX(dst *float32, src *byte, n int)
// n: a multiple of 8.
TEXT ·bf16ToF32AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loopb:
	CMPQ CX, $8
	JB   doneb
	VPMOVZXWD (SI), Y0
	VPSLLD $16, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loopb
doneb:
	VZEROUPPER
	RET

// func f32ToBF16AVX(dst *byte, src *float32, n int)
// (b + 0x7fff + (b>>16)&1) >> 16, a NaN to (b>>16) | 0x40; n: a multiple of 8.
TEXT ·f32ToBF16AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VPBROADCASTD avxConst<>+4(SB), Y10
	VPBROADCASTD avxConst<>+8(SB), Y11
	VPBROADCASTD avxConst<>+12(SB), Y12
loopr:
	CMPQ CX, $8
	JB   doner
	VMOVDQU (SI), Y0
	VPSRLD $16, Y0, Y1
	VPAND Y11, Y1, Y2
	VPADDD Y10, Y0, Y3
	VPADDD Y2, Y3, Y3
	VPSRLD $16, Y3, Y3
	VPOR Y12, Y1, Y4
	VCMPPS $3, Y0, Y0, Y5
	VPBLENDVB Y5, Y4, Y3, Y3
	VEXTRACTI128 $1, Y3, X6
	VPACKUSDW X6, X3, X3
	VMOVDQU X3, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP  loopr
doner:
	VZEROUPPER
	RET

// func minMaxSumAVX(x *float32, n int) (mn, mx, sum float32)
// n: a multiple of 8, at least 8.
TEXT ·minMaxSumAVX(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	ADDQ $32, SI
	SUBQ $8, CX
loopm:
	CMPQ CX, $8
	JB   reducem
	VMOVUPS (SI), Y3
	VMINPS Y3, Y0, Y0
	VMAXPS Y3, Y1, Y1
	VADDPS Y3, Y2, Y2
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loopm
reducem:
	VEXTRACTF128 $1, Y0, X3
	VMINPS X3, X0, X0
	VEXTRACTF128 $1, Y1, X3
	VMAXPS X3, X1, X1
	VEXTRACTF128 $1, Y2, X3
	VADDPS X3, X2, X2
	VZEROUPPER
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

// func quantize8AVX(out *byte, x *float32, n int, mn, scale, levels float32)
// n: a multiple of 8.
TEXT ·quantize8AVX(SB), NOSPLIT, $0-36
	QUANT_SETUP
loopq8:
	CMPQ CX, $8
	JB   doneq8
	QUANT8(0, Y0)
	PACK8(Y0, X0)
	VMOVQ X0, (DI)
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  loopq8
doneq8:
	VZEROUPPER
	RET

// func quantize4AVX(out *byte, x *float32, n int, mn, scale, levels float32)
// n: a multiple of 16; element 2j in the high nibble, 2j+1 in the low one.
TEXT ·quantize4AVX(SB), NOSPLIT, $0-36
	QUANT_SETUP
	VPBROADCASTD avxConst<>+20(SB), X10
loopq4:
	CMPQ CX, $16
	JB   doneq4
	QUANT8(0, Y0)
	QUANT8(32, Y1)
	PACK8(Y0, X0)
	PACK8(Y1, X1)
	VPUNPCKLQDQ X1, X0, X0 // the 16 codes
	VPSRLW $8, X0, X2      // q(2j+1)
	VPSLLW $4, X0, X0
	VPAND X10, X0, X0      // q(2j) << 4
	VPOR X2, X0, X0
	VPACKUSWB X0, X0, X0
	VMOVQ X0, (DI)
	ADDQ $64, SI
	ADDQ $8, DI
	SUBQ $16, CX
	JMP  loopq4
doneq4:
	VZEROUPPER
	RET

// func dequantize8AVX(dst *float32, q *byte, n int, scale, mn float32)
// dst[i] = float32(q[i])/scale + mn; n: a multiple of 8.
TEXT ·dequantize8AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y5
	VBROADCASTSS mn+28(FP), Y4
loopd:
	CMPQ CX, $8
	JB   doned
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VDIVPS Y5, Y0, Y0
	VADDPS Y4, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loopd
doned:
	VZEROUPPER
	RET

// func levels4AVX(dst, sc, mn *float32, groups int)
// dst[16g+c] = float32(c)/sc[g] + mn[g] for c < 16: the 16 values a group's
// codes decode to.
TEXT ·levels4AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ sc+8(FP), R8
	MOVQ mn+16(FP), R9
	MOVQ groups+24(FP), CX
	VMOVUPS avxIota<>+0(SB), Y10
	VMOVUPS avxIota<>+32(SB), Y11
loopl:
	TESTQ CX, CX
	JZ   donel
	VBROADCASTSS (R8), Y5
	VBROADCASTSS (R9), Y4
	VDIVPS Y5, Y10, Y0
	VDIVPS Y5, Y11, Y1
	VADDPS Y4, Y0, Y0
	VADDPS Y4, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $64, DI
	DECQ CX
	JMP  loopl
donel:
	VZEROUPPER
	RET

// func nibbles16GroupsAVX(out, in, words *byte, groups, half int)
// For each of the groups: the 16-bit words words[nibble] (16 per group,
// 32 bytes) of the half bytes at in (two nibbles each, high first), 4*half
// bytes of out. half: a multiple of 8.
TEXT ·nibbles16GroupsAVX(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ words+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ half+32(FP), R10
	VMOVDQU avxSplitWords<>(SB), X14
	VPBROADCASTD avxConst<>+20(SB), X15 // 0x00ff: low bytes of words
	MOVL $0x0f0f0f0f, AX
	MOVL AX, X7
	VPBROADCASTD X7, X7
loopg:
	TESTQ R9, R9
	JZ   doneg
	VMOVDQU (R8), X5
	VMOVDQU 16(R8), X6
	VPSHUFB X14, X5, X5
	VPSHUFB X14, X6, X6
	VPUNPCKHQDQ X6, X5, X4 // high bytes of the 16 words
	VPUNPCKLQDQ X6, X5, X5 // low bytes
	MOVQ R10, CX
loopn:
	CMPQ CX, $8
	JB   nextg
	VMOVQ (SI), X0
	VPSRLW $4, X0, X1
	VPAND X7, X1, X1
	VPAND X7, X0, X0
	VPUNPCKLBW X0, X1, X1 // 16 nibbles, high first
	VPSHUFB X1, X5, X2
	VPSHUFB X1, X4, X3
	VPUNPCKLBW X3, X2, X0
	VPUNPCKHBW X3, X2, X1
	VMOVDQU X0, (DI)
	VMOVDQU X1, 16(DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loopn
nextg:
	ADDQ $32, R8
	DECQ R9
	JMP  loopg
doneg:
	VZEROUPPER
	RET

// func quantGroupsAVX(out *byte, pairs, x *float32, groups, group int, levels float32, bits int) int
// Quantizes whole groups of x (group floats each, a multiple of 16) to
// bits-bit codes (4: two a byte, high nibble first; 8), their scale and
// min to pairs, while a group's min and max come out the same with plain
// comparisons as with the builtins' rules (the sum shows no NaN, neither
// end is a zero); returns how many groups it did.
TEXT ·quantGroupsAVX(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ pairs+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ groups+24(FP), R9
	MOVQ group+32(FP), R10
	VBROADCASTSS levels+40(FP), Y6
	MOVQ bits+48(FP), R11
	VBROADCASTSS avxConst<>+16(SB), Y7
	VPXOR Y8, Y8, Y8
	VMOVDQU avxLowBytes<>(SB), Y9
	VPBROADCASTD avxConst<>+20(SB), X10
	MOVL $0x3f800000, AX
	VMOVD AX, X15
	XORQ BX, BX
groupq:
	CMPQ BX, R9
	JAE  doneqg
	// min, max and sum, two vectors of each
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y12
	VMOVAPS Y1, Y13
	MOVQ $16, CX
minmaxq:
	CMPQ CX, R10
	JAE  reduceq
	VMOVUPS (SI)(CX*4), Y14
	VMOVUPS 32(SI)(CX*4), Y11
	VMINPS Y14, Y0, Y0
	VMINPS Y11, Y1, Y1
	VMAXPS Y14, Y2, Y2
	VMAXPS Y11, Y3, Y3
	VADDPS Y14, Y12, Y12
	VADDPS Y11, Y13, Y13
	ADDQ $16, CX
	JMP  minmaxq
reduceq:
	VMINPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VADDPS Y13, Y12, Y12
	REDUCE(VMINPS, Y0, X0)
	REDUCE(VMAXPS, Y2, X2)
	REDUCE(VADDPS, Y12, X12)
	VUCOMISS X12, X12
	JP   doneqg // a NaN
	VUCOMISS X8, X0
	JEQ  doneqg // a zero end
	VUCOMISS X8, X2
	JEQ  doneqg
	// scale = levels * (1 / (max - min))
	VSUBSS X0, X2, X3
	VDIVSS X3, X15, X3
	VMULSS X3, X6, X3
	VMOVSS X3, (R8)
	VMOVSS X0, 4(R8)
	VBROADCASTSS X3, Y5
	VBROADCASTSS X0, Y4
	MOVQ SI, R12
	LEAQ (SI)(R10*4), R13 // the group's end
	CMPQ R11, $4
	JEQ  codes4
codes8:
	CMPQ R12, R13
	JAE  nextq
	QUANTP(R12, 0, Y0)
	PACK8(Y0, X0)
	VMOVQ X0, (DI)
	ADDQ $32, R12
	ADDQ $8, DI
	JMP  codes8
codes4:
	CMPQ R12, R13
	JAE  nextq
	QUANTP(R12, 0, Y0)
	QUANTP(R12, 32, Y1)
	PACK8(Y0, X0)
	PACK8(Y1, X1)
	VPUNPCKLQDQ X1, X0, X0
	VPSRLW $8, X0, X2
	VPSLLW $4, X0, X0
	VPAND X10, X0, X0
	VPOR X2, X0, X0
	VPACKUSWB X0, X0, X0
	VMOVQ X0, (DI)
	ADDQ $64, R12
	ADDQ $8, DI
	JMP  codes4
nextq:
	MOVQ R13, SI
	ADDQ $8, R8
	INCQ BX
	JMP  groupq
doneqg:
	MOVQ BX, ret+56(FP)
	VZEROUPPER
	RET

// func nibbles32GroupsAVX(out, in, words *byte, groups, half int)
// As nibbles16GroupsAVX with 32-bit words (16 per group, 64 bytes): the
// words of nibbles 0-7 and 8-15 are looked up with VPERMPS and picked by
// the nibble's bit 3.
TEXT ·nibbles32GroupsAVX(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ words+16(FP), R8
	MOVQ groups+24(FP), R9
	MOVQ half+32(FP), R10
	MOVL $0x0f0f0f0f, AX
	MOVL AX, X7
	VPBROADCASTD X7, X7
loopg32:
	TESTQ R9, R9
	JZ   doneg32
	VMOVUPS (R8), Y5  // words of nibbles 0-7
	VMOVUPS 32(R8), Y6 // of 8-15
	MOVQ R10, CX
loopn32:
	CMPQ CX, $8
	JB   nextg32
	VMOVQ (SI), X0
	VPSRLW $4, X0, X1
	VPAND X7, X1, X1
	VPAND X7, X0, X0
	VPUNPCKLBW X0, X1, X1 // 16 nibbles, high first
	VPMOVZXBD X1, Y2
	VPSRLDQ $8, X1, X1
	VPMOVZXBD X1, Y3
	VPERMPS Y5, Y2, Y8
	VPERMPS Y6, Y2, Y9
	VPSLLD $28, Y2, Y2
	VBLENDVPS Y2, Y9, Y8, Y8
	VPERMPS Y5, Y3, Y10
	VPERMPS Y6, Y3, Y11
	VPSLLD $28, Y3, Y3
	VBLENDVPS Y3, Y11, Y10, Y10
	VMOVUPS Y8, (DI)
	VMOVUPS Y10, 32(DI)
	ADDQ $8, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  loopn32
nextg32:
	ADDQ $64, R8
	DECQ R9
	JMP  loopg32
doneg32:
	VZEROUPPER
	RET

// func dequantizeColsAVX(dst *float32, q *byte, sc, mn *float32, n int)
// dst[c] = float32(q[c])/sc[c] + mn[c]; n: a multiple of 8.
TEXT ·dequantizeColsAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ sc+16(FP), R8
	MOVQ mn+24(FP), R9
	MOVQ n+32(FP), CX
	XORQ AX, AX
loopdc:
	CMPQ AX, CX
	JAE  donedc
	VPMOVZXBD (SI)(AX*1), Y0
	VCVTDQ2PS Y0, Y0
	VDIVPS (R8)(AX*4), Y0, Y0
	VADDPS (R9)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  loopdc
donedc:
	VZEROUPPER
	RET

// func nibbleCodesAVX(out, in *byte, n int, shift uint)
// out[i] = in[i]>>shift & 15; n: a multiple of 32.
TEXT ·nibbleCodesAVX(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ shift+24(FP), X1
	MOVL $0x0f0f0f0f, AX
	MOVL AX, X7
	VPBROADCASTD X7, Y7
	XORQ AX, AX
loopnc:
	CMPQ AX, CX
	JAE  donenc
	VMOVDQU (SI)(AX*1), Y0
	VPSRLW X1, Y0, Y0
	VPAND Y7, Y0, Y0
	VMOVDQU Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP  loopnc
donenc:
	VZEROUPPER
	RET

// func minMaxColsAVX(mn, mx, sum, x *float32, n int)
// Per column c < n: mn[c] = min(mn[c], x[c]), mx[c] = max(mx[c], x[c]),
// sum[c] += x[c]; n: a multiple of 8.
TEXT ·minMaxColsAVX(SB), NOSPLIT, $0-40
	MOVQ mn+0(FP), R8
	MOVQ mx+8(FP), R9
	MOVQ sum+16(FP), R10
	MOVQ x+24(FP), SI
	MOVQ n+32(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
loopmc:
	CMPQ AX, CX
	JAE  donemc
	VMOVUPS (SI)(AX*1), Y3
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	VMINPS Y3, Y0, Y0
	VMAXPS Y3, Y1, Y1
	VADDPS Y3, Y2, Y2
	VMOVUPS Y0, (R8)(AX*1)
	VMOVUPS Y1, (R9)(AX*1)
	VMOVUPS Y2, (R10)(AX*1)
	ADDQ $32, AX
	JMP  loopmc
donemc:
	VZEROUPPER
	RET

// func quantizeColsAVX(out *byte, even, odd, mn, sc *float32, n int, levels float32)
// As quantizeColsSSE, 8 columns at a time; n: a multiple of 8.
TEXT ·quantizeColsAVX(SB), NOSPLIT, $0-52
	MOVQ out+0(FP), DI
	MOVQ even+8(FP), SI
	MOVQ odd+16(FP), DX
	MOVQ mn+24(FP), R8
	MOVQ sc+32(FP), R9
	MOVQ n+40(FP), CX
	VBROADCASTSS levels+48(FP), Y6
	VBROADCASTSS avxConst<>+16(SB), Y7
	VPXOR Y8, Y8, Y8
	VMOVDQU avxLowBytes<>(SB), Y9
	XORQ AX, AX
loopqc:
	CMPQ AX, CX
	JAE  doneqc
	VMOVUPS (R8)(AX*4), Y4
	VMOVUPS (R9)(AX*4), Y5
	QUANTP(SI, 0, Y0)
	PACK8(Y0, X0)
	TESTQ DX, DX
	JZ   storeqc
	QUANTP(DX, 0, Y1)
	PACK8(Y1, X1)
	VPSLLW $4, X0, X0 // codes < 16: no bits cross into the next byte
	VPOR X1, X0, X0
storeqc:
	VMOVQ X0, (DI)(AX*1)
	ADDQ $32, SI
	TESTQ DX, DX
	JZ   nextqc
	ADDQ $32, DX
nextqc:
	ADDQ $8, AX
	JMP  loopqc
doneqc:
	VZEROUPPER
	RET
