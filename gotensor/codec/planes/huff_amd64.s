//go:build amd64 && !noasm

#include "textflag.h"

// fast4's rounds of double-symbol Huffman decoding with BMI2's shifts
// (planes_huff.go: huffRounds4Go is the Go twin this must match). Each
// stream's huffHot{v, used, off, op}, 32 bytes apiece, lives in memory
// between its turns; the four streams' chains of lookups are independent,
// for the CPU to overlap. A table entry is bits | symbols<<8 | count<<24:
// its low 6 bits are the shift. The window's lowest bit is set on reload
// (huffHot says why no lookup reaches it): its trailing zeros after the
// lookups are the bits used.

// LOOKUP: v in BX, op in R13, 53 in R14, the table at SI, dst at R9.
#define LOOKUP \
	SHRXQ R14, BX, AX \
	MOVL  (SI)(AX*4), AX \
	SHLXQ AX, BX, BX \
	MOVL  AX, DX \
	SHRL  $8, DX \
	MOVW  DX, (R9)(R13*1) \
	SHRL  $24, AX \
	ADDQ  AX, R13

// STREAM(o, L): one stream's turn, its huffHot at o(DI): a reload, 5
// lookups with lookup macro L (LOOKUP, or LOOKUPX3 for the triple table).
#define STREAM(o, L) \
	MOVQ  o+8(DI), CX \
	MOVQ  o+16(DI), R11 \
	MOVQ  CX, AX \
	SHRQ  $3, AX \
	SUBQ  AX, R11 \
	ANDQ  $7, CX \
	MOVQ  -8(R8)(R11*1), BX \
	ORQ   $1, BX \
	SHLXQ CX, BX, BX \
	MOVQ  o+24(DI), R13 \
	L \
	L \
	L \
	L \
	L \
	TZCNTQ BX, R12 \
	MOVQ  R12, o+8(DI) \
	MOVQ  R11, o+16(DI) \
	MOVQ  R13, o+24(DI)

// ENTER1: huffRounds1's arguments into STREAM's registers.
#define ENTER1 \
	MOVQ h+0(FP), DI \
	MOVQ tb+8(FP), SI \
	MOVQ src+16(FP), R8 \
	MOVQ dst+24(FP), R9 \
	MOVQ k+32(FP), R10 \
	MOVQ $53, R14

// The four streams of huffRounds4BMI2 stay in registers, their lookups
// interleaved (four independent chains for the CPU to overlap): windows
// in R8-R11, output pointers in R12, R13, DI, BX; their read pointers
// (src + off) live on the stack, used only at reloads.

// LOOKUP4(v, op): one double-symbol lookup of window v, written at op:
// the entry's low byte (the shift) feeds the next lookup straight away,
// its symbols are loaded again from the table apart.
#define LOOKUP4(v, op) \
	SHRXQ   R14, v, AX \
	MOVL    (SI)(AX*4), DX \
	SHLXQ   DX, v, v \
	MOVWLZX 1(SI)(AX*4), CX \
	MOVW    CX, (op) \
	SHRL    $24, DX \
	ADDQ    DX, op

// RELOAD4(v, slot): drop the whole bytes used (v's trailing zeros), load
// the 8 bytes below the new read pointer, set the sentinel.
#define RELOAD4(v, slot) \
	TZCNTQ v, AX \
	MOVL   AX, CX \
	ANDL   $7, CX \
	SHRQ   $3, AX \
	MOVQ   slot(SP), DX \
	SUBQ   AX, DX \
	MOVQ   DX, slot(SP) \
	MOVQ   -8(DX), v \
	ORQ    $1, v \
	SHLXQ  CX, v, v

// ENTER4(o, v, op, slot): stream o's huffHot{v, used, off, op} at o(AX)
// into registers: a window whose trailing zeros are its bits used (its
// first reload loads it), op and src+off.
#define ENTER4(o, v, op, slot) \
	MOVQ o+8(AX), CX \
	MOVQ $1, v \
	SHLXQ CX, v, v \
	MOVQ o+24(AX), op \
	ADDQ dst+24(FP), op \
	MOVQ o+16(AX), CX \
	ADDQ src+16(FP), CX \
	MOVQ CX, slot(SP)

// LEAVE4(o, v, op, slot): the registers back into huffHot (used, off, op).
#define LEAVE4(o, v, op, slot) \
	TZCNTQ v, CX \
	MOVQ CX, o+8(AX) \
	MOVQ slot(SP), CX \
	SUBQ src+16(FP), CX \
	MOVQ CX, o+16(AX) \
	SUBQ dst+24(FP), op \
	MOVQ op, o+24(AX)

// ENTER4ALL: the four streams' huffHot into registers; the table in SI,
// the rounds in R15, the index shift in R14.
#define ENTER4ALL \
	MOVQ hot+0(FP), AX \
	ENTER4(0, R8, R12, 0) \
	ENTER4(32, R9, R13, 8) \
	ENTER4(64, R10, DI, 16) \
	ENTER4(96, R11, BX, 24) \
	MOVQ tb+8(FP), SI \
	MOVQ k+32(FP), R15 \
	MOVQ $53, R14

// RELOAD4ALL: a round's reload of each stream.
#define RELOAD4ALL \
	RELOAD4(R8, 0) \
	RELOAD4(R9, 8) \
	RELOAD4(R10, 16) \
	RELOAD4(R11, 24)

// LOOKUPS4(L): a round's 5 lookups of each stream with lookup macro L,
// the streams in turns.
#define LOOKUPS4(L) \
	L(R8, R12) \
	L(R9, R13) \
	L(R10, DI) \
	L(R11, BX) \
	L(R8, R12) \
	L(R9, R13) \
	L(R10, DI) \
	L(R11, BX) \
	L(R8, R12) \
	L(R9, R13) \
	L(R10, DI) \
	L(R11, BX) \
	L(R8, R12) \
	L(R9, R13) \
	L(R10, DI) \
	L(R11, BX) \
	L(R8, R12) \
	L(R9, R13) \
	L(R10, DI) \
	L(R11, BX)

// LEAVE4ALL: the registers back into the four huffHots.
#define LEAVE4ALL \
	MOVQ hot+0(FP), AX \
	LEAVE4(0, R8, R12, 0) \
	LEAVE4(32, R9, R13, 8) \
	LEAVE4(64, R10, DI, 16) \
	LEAVE4(96, R11, BX, 24)

// func huffRounds4BMI2(hot *[4]huffHot, tb *[2048]uint32, src, dst *byte, k int)
TEXT ·huffRounds4BMI2(SB), NOSPLIT, $32-40
	ENTER4ALL

loop:
	RELOAD4ALL
	LOOKUPS4(LOOKUP4)
	DECQ R15
	JNZ  loop

	LEAVE4ALL
	RET

// func huffRounds1BMI2(h *huffHot, tb *[2048]uint32, src, dst *byte, k int)
TEXT ·huffRounds1BMI2(SB), NOSPLIT, $0-40
	ENTER1

loop1:
	STREAM(0, LOOKUP)
	DECQ R10
	JNZ  loop1
	RET

// The triple table's rounds (huffRounds4X3Go and huffRounds1X3Go are their
// Go twins): 8-byte entries, bits used | count<<8 | up to three
// symbols<<16; a lookup stores 4 bytes (the symbols and one past them,
// which later lookups overwrite) and advances by the count.

// LOOKUP4X3(v, op): LOOKUP4 with the triple table.
#define LOOKUP4X3(v, op) \
	SHRXQ   R14, v, AX \
	MOVQ    (SI)(AX*8), DX \
	SHLXQ   DX, v, v \
	MOVL    2(SI)(AX*8), CX \
	MOVL    CX, (op) \
	MOVBQZX 1(SI)(AX*8), DX \
	ADDQ    DX, op

// LOOKUPX3: LOOKUP with the triple table.
#define LOOKUPX3 \
	SHRXQ   R14, BX, AX \
	MOVQ    (SI)(AX*8), DX \
	SHLXQ   DX, BX, BX \
	MOVL    2(SI)(AX*8), CX \
	MOVL    CX, (R9)(R13*1) \
	MOVBQZX 1(SI)(AX*8), DX \
	ADDQ    DX, R13

// func huffRounds4X3BMI2(hot *[4]huffHot, tb *[2048]uint64, src, dst *byte, k int)
TEXT ·huffRounds4X3BMI2(SB), NOSPLIT, $32-40
	ENTER4ALL

loop:
	RELOAD4ALL
	LOOKUPS4(LOOKUP4X3)
	DECQ R15
	JNZ  loop

	LEAVE4ALL
	RET

// func huffRounds1X3BMI2(h *huffHot, tb *[2048]uint64, src, dst *byte, k int)
TEXT ·huffRounds1X3BMI2(SB), NOSPLIT, $0-40
	ENTER1

loop1x3:
	STREAM(0, LOOKUPX3)
	DECQ R10
	JNZ  loop1x3
	RET
