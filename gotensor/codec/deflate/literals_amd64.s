//go:build amd64 && !noasm

#include "textflag.h"

// One lookup of literalsBMI2: the entry for the next 11 bits (litTableBits); count 0
// leaves for the slow path; else store its literals, consume its bits
// (the shift count is the entry's low byte: SHRX uses its low 6 bits)
// and advance by its count.
#define LOOKUP \
	MOVQ AX, R11; \
	ANDQ $0x7ff, R11; \
	MOVQ (R8)(R11*8), R11; \
	TESTQ $0xff00, R11; \
	JZ done; \
	MOVQ R11, R12; \
	SHRQ $32, R12; \
	MOVL R12, (DI)(DX*1); \
	SHRXQ R11, AX, AX; \
	MOVBQZX R11, R12; \
	SUBQ R12, BX; \
	MOVL R11, R12; \
	SHRL $8, R12; \
	ANDL $7, R12; \
	ADDQ R12, DX

// func literalsBMI2(multi *[1 << litTableBits]uint64, dst, src []byte, st *literalState)
TEXT ·literalsBMI2(SB), NOSPLIT, $0-64
	MOVQ multi+0(FP), R8
	MOVQ dst_base+8(FP), DI
	MOVQ dst_len+16(FP), R9
	SUBQ $16, R9 // room for four lookups of four literals: p <= len(dst)-16
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), R10
	SUBQ $8, R10 // a whole word to load: pos <= len(src)-8
	MOVQ st+56(FP), R13
	MOVQ 0(R13), AX  // bits
	MOVQ 8(R13), BX  // n
	MOVQ 16(R13), CX // pos
	MOVQ 24(R13), DX // p

loop:
	CMPQ DX, R9
	JGT  done
	CMPQ CX, R10
	JGT  done
	// refill to 56-63 bits: bits |= word << n; pos += (63-n)/8; n |= 56
	MOVQ  (SI)(CX*1), R11
	SHLXQ BX, R11, R11
	ORQ   R11, AX
	MOVQ  $63, R12
	SUBQ  BX, R12
	SHRQ  $3, R12
	ADDQ  R12, CX
	ORQ   $56, BX
	LOOKUP
	LOOKUP
	LOOKUP
	LOOKUP
	JMP loop

done:
	MOVQ AX, 0(R13)
	MOVQ BX, 8(R13)
	MOVQ CX, 16(R13)
	MOVQ DX, 24(R13)
	RET

// One lookup of literalsBMI2x2 in the table TAB for the stream whose bit
// buffer, bit count and output position are BITS, N and P, leaving the
// count in SI (literalsGo2: an entry of none stalls the stream, and the
// round's last lookup tests it). The entry's count and literals are
// loaded again apart rather than shifted out of it: the load ports have
// room where the shift ports (which the bit buffer's shifts and the
// branches need) do not. n never falls under the bits an entry uses, so
// its low byte takes them.
#define LOOKUP2(TAB, BITS, N, P) \
	MOVL    BITS, R11; \
	ANDL    $0x7ff, R11; \
	MOVQ    (TAB)(R11*8), R12; \
	MOVBLZX 1(TAB)(R11*8), SI; \
	MOVL    4(TAB)(R11*8), R11; \
	MOVL    R11, (DI)(P*1); \
	SHRXQ   R12, BITS, BITS; \
	SUBB    R12, N; \
	ADDQ    SI, P

// REFILL2 tops up a stream's bit buffer to 56-63 bits from the source
// pointer POS.
#define REFILL2(BITS, N, POS) \
	MOVQ  (POS), R11; \
	SHLXQ N, R11, R11; \
	ORQ   R11, BITS; \
	MOVQ  $63, R12; \
	SUBQ  N, R12; \
	SHRQ  $3, R12; \
	ADDQ  R12, POS; \
	ORQ   $56, N

// func literalsBMI2x2(ma, mb *[1 << litTableBits]uint64, dst, src []byte, st *literalState2)
// Stream a in AX (bits), BX (n), CX (source pointer), DX (p); stream b in
// R10, R13, R14, R15; the tables in R8, R9; dst's base in DI; R11, R12
// and SI scratch. The frame
// holds the limits: a's source pointer (0) and p (16), b's (8, 24).
TEXT ·literalsBMI2x2(SB), NOSPLIT, $32-72
	MOVQ ma+0(FP), R8
	MOVQ mb+8(FP), R9
	MOVQ dst_base+16(FP), DI
	MOVQ src_base+40(FP), SI
	MOVQ st+64(FP), R11
	MOVQ 72(R11), R12
	ADDQ SI, R12
	MOVQ R12, 0(SP)
	MOVQ 88(R11), R12
	ADDQ SI, R12
	MOVQ R12, 8(SP)
	MOVQ 64(R11), R12
	MOVQ R12, 16(SP)
	MOVQ 80(R11), R12
	MOVQ R12, 24(SP)
	MOVQ 0(R11), AX
	MOVQ 8(R11), BX
	MOVQ 16(R11), CX
	ADDQ SI, CX
	MOVQ 24(R11), DX
	MOVQ 32(R11), R10
	MOVQ 40(R11), R13
	MOVQ 48(R11), R14
	ADDQ SI, R14
	MOVQ 56(R11), R15

loop2:
	CMPQ DX, 16(SP)
	JGT  stopa
	CMPQ CX, 0(SP)
	JGT  stopa
	CMPQ R15, 24(SP)
	JGT  stopb
	CMPQ R14, 8(SP)
	JGT  stopb
	REFILL2(AX, BX, CX)
	REFILL2(R10, R13, R14)
	LOOKUP2(R8, AX, BX, DX)
	LOOKUP2(R9, R10, R13, R15)
	LOOKUP2(R8, AX, BX, DX)
	LOOKUP2(R9, R10, R13, R15)
	LOOKUP2(R8, AX, BX, DX)
	LOOKUP2(R9, R10, R13, R15)
	LOOKUP2(R8, AX, BX, DX)
	LOOKUP2(R9, R10, R13, R15)
	LOOKUP2(R8, AX, BX, DX)
	TESTL SI, SI
	JZ    stopa
	LOOKUP2(R9, R10, R13, R15)
	TESTL SI, SI
	JZ    stopb
	JMP loop2

stopa:
	MOVQ $1, R12
	JMP  save2

stopb:
	MOVQ $2, R12

save2:
	MOVQ st+64(FP), R11
	MOVQ src_base+40(FP), SI
	SUBQ SI, CX
	SUBQ SI, R14
	MOVQ AX, 0(R11)
	MOVQ BX, 8(R11)
	MOVQ CX, 16(R11)
	MOVQ DX, 24(R11)
	MOVQ R10, 32(R11)
	MOVQ R13, 40(R11)
	MOVQ R14, 48(R11)
	MOVQ R15, 56(R11)
	MOVQ R12, 96(R11)
	RET
