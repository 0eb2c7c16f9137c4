#include "textflag.h"

// PCODE loads the code of byte off of P, from the table at TAB bytes
// into R8's, into a code register C and its length into L.
#define PCODE(off, P, TAB, C, L) \
	MOVBLZX off(P), C; \
	MOVL    TAB(R8)(C*4), C; \
	MOVL    C, L; \
	SHRL    $16, L; \
	MOVWLZX C, C

// STEP packs the codes of the four bytes at P into the stream whose bit
// buffer is ACC and whose bit position is BP (the address of its next
// byte times 8, plus the bits held): packGo's step, with one register
// for pos and n.
#define STEP(P, ACC, BP, TAB) \
	PCODE(0, P, TAB, R12, R13); \
	PCODE(1, P, TAB, R14, R9); \
	SHLXQ R13, R14, R14; \
	ORQ   R14, R12; \
	ADDQ  R9, R13; \
	PCODE(2, P, TAB, R14, R9); \
	PCODE(3, P, TAB, R11, R15); \
	SHLXQ R9, R11, R11; \
	ORQ   R11, R14; \
	ADDQ  R15, R9; \
	SHLXQ R13, R14, R14; \
	ORQ   R14, R12; \
	ADDQ  R9, R13; \
	MOVQ  BP, R14; \
	ANDQ  $7, R14; \
	SHLXQ R14, R12, R12; \
	ORQ   R12, ACC; \
	MOVQ  BP, R15; \
	SHRQ  $3, R15; \
	MOVQ  ACC, (R15); \
	ADDQ  R13, R14; \
	ANDQ  $56, R14; \
	SHRXQ R14, ACC, ACC; \
	ADDQ  R13, BP; \
	ADDQ  $4, P

// func pack2BMI2(codes *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState)
TEXT ·pack2BMI2(SB), NOSPLIT, $32-120
	MOVQ codes+0(FP), R8
	// the last addresses a step may start at, and the last bit positions
	MOVQ pa_base+8(FP), R9
	MOVQ pa_len+16(FP), R10
	LEAQ -4(R9)(R10*1), R10
	MOVQ R10, limpa-8(SP)
	MOVQ pb_base+32(FP), R9
	MOVQ pb_len+40(FP), R10
	LEAQ -4(R9)(R10*1), R10
	MOVQ R10, limpb-16(SP)
	MOVQ bufA_base+56(FP), R9
	MOVQ bufA_len+64(FP), R10
	LEAQ -8(R9)(R10*1), R10
	SHLQ $3, R10
	ORQ  $7, R10
	MOVQ R10, limba-24(SP)
	MOVQ bufB_base+80(FP), R9
	MOVQ bufB_len+88(FP), R10
	LEAQ -8(R9)(R10*1), R10
	SHLQ $3, R10
	ORQ  $7, R10
	MOVQ R10, limbb-32(SP)
	// stream A: SI, AX, BX; stream B: DI, CX, DX
	MOVQ sa+104(FP), R15
	MOVQ 0(R15), AX
	MOVQ 16(R15), BX
	ADDQ bufA_base+56(FP), BX
	SHLQ $3, BX
	ORQ  8(R15), BX
	MOVQ 24(R15), SI
	ADDQ pa_base+8(FP), SI
	MOVQ sb+112(FP), R15
	MOVQ 0(R15), CX
	MOVQ 16(R15), DX
	ADDQ bufB_base+80(FP), DX
	SHLQ $3, DX
	ORQ  8(R15), DX
	MOVQ 24(R15), DI
	ADDQ pb_base+32(FP), DI

loop:
	CMPQ SI, limpa-8(SP)
	JGT  done
	CMPQ DI, limpb-16(SP)
	JGT  done
	CMPQ BX, limba-24(SP)
	JGT  done
	CMPQ DX, limbb-32(SP)
	JGT  done
	STEP(SI, AX, BX, 0)
	STEP(DI, CX, DX, 1152)
	JMP  loop

done:
	MOVQ sa+104(FP), R15
	MOVQ AX, 0(R15)
	MOVQ BX, R9
	ANDQ $7, R9
	MOVQ R9, 8(R15)
	SHRQ $3, BX
	SUBQ bufA_base+56(FP), BX
	MOVQ BX, 16(R15)
	SUBQ pa_base+8(FP), SI
	MOVQ SI, 24(R15)
	MOVQ sb+112(FP), R15
	MOVQ CX, 0(R15)
	MOVQ DX, R9
	ANDQ $7, R9
	MOVQ R9, 8(R15)
	SHRQ $3, DX
	SUBQ bufB_base+80(FP), DX
	MOVQ DX, 16(R15)
	SUBQ pb_base+32(FP), DI
	MOVQ DI, 24(R15)
	RET
