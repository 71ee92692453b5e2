//go:build amd64 && !purego

#include "textflag.h"

// nextKey's constants, sixteen copies of a byte each: the case fold bit, then
// the folded bytes it compares with, in the order of X6-X15 below.
DATA keys<>+0x00(SB)/8, $0x2020202020202020 // X6: the ASCII lower-case bit
DATA keys<>+0x08(SB)/8, $0x2020202020202020
DATA keys<>+0x10(SB)/8, $0x7979797979797979 // X7: 'y'
DATA keys<>+0x18(SB)/8, $0x7979797979797979
DATA keys<>+0x20(SB)/8, $0x6c6c6c6c6c6c6c6c // X8: 'l'
DATA keys<>+0x28(SB)/8, $0x6c6c6c6c6c6c6c6c
DATA keys<>+0x30(SB)/8, $0x6666666666666666 // X9: 'f'
DATA keys<>+0x38(SB)/8, $0x6666666666666666
DATA keys<>+0x40(SB)/8, $0x6464646464646464 // X10: 'd'
DATA keys<>+0x48(SB)/8, $0x6464646464646464
DATA keys<>+0x50(SB)/8, $0x7575757575757575 // X11: 'u'
DATA keys<>+0x58(SB)/8, $0x7575757575757575
DATA keys<>+0x60(SB)/8, $0x6969696969696969 // X12: 'i'
DATA keys<>+0x68(SB)/8, $0x6969696969696969
DATA keys<>+0x70(SB)/8, $0x7373737373737373 // X13: 's' (also as written)
DATA keys<>+0x78(SB)/8, $0x7373737373737373
DATA keys<>+0x80(SB)/8, $0x7272727272727272 // X14: 'r'
DATA keys<>+0x88(SB)/8, $0x7272727272727272
DATA keys<>+0x90(SB)/8, $0x7474747474747474 // X15: 't'
DATA keys<>+0x98(SB)/8, $0x7474747474747474
GLOBL keys<>(SB), RODATA|NOPTR, $160

// The bytes compared as written but for 's', thirty-two copies each: no
// register is left for them, so the compares read them from memory (SSE2
// loads the first sixteen into a scratch register, which costs no more than
// the copy a register constant needs there).
DATA written<>+0x00(SB)/8, $0x4444444444444444 // 'D'
DATA written<>+0x08(SB)/8, $0x4444444444444444
DATA written<>+0x10(SB)/8, $0x4444444444444444
DATA written<>+0x18(SB)/8, $0x4444444444444444
DATA written<>+0x20(SB)/8, $0x6565656565656565 // 'e'
DATA written<>+0x28(SB)/8, $0x6565656565656565
DATA written<>+0x30(SB)/8, $0x6565656565656565
DATA written<>+0x38(SB)/8, $0x6565656565656565
DATA written<>+0x40(SB)/8, $0x5656565656565656 // 'V'
DATA written<>+0x48(SB)/8, $0x5656565656565656
DATA written<>+0x50(SB)/8, $0x5656565656565656
DATA written<>+0x58(SB)/8, $0x5656565656565656
GLOBL written<>(SB), RODATA|NOPTR, $96

// FLAGS sets bit k of AX (bits 16-31 zero) when byte k of X0 is a key byte,
// X1 holding the byte before each of X0's; it clobbers X0-X5. Every compare
// is an exact byte equality: b|0x20 equals one of the folded letters only
// for that letter in either case, and a byte >= 0x80 equals none of them.
// SSE2's compares overwrite their destination, hence a copy before each.
#define FLAGS \
	MOVOU    written<>+0x00(SB), X2; PCMPEQB X1, X2; \ // after 'D' as written:
	MOVOU    written<>+0x20(SB), X3; PCMPEQB X0, X3; \ // 'e'
	MOVO     X0, X4;  PCMPEQB X13, X4; \ // or 's'
	POR      X4, X3;  PAND    X3, X2;  \
	MOVOU    written<>+0x40(SB), X3; PCMPEQB X0, X3; \ // 'V' as written
	POR      X3, X2;  \
	POR      X6, X0;  \                  // folded
	POR      X6, X1;  \                  // before, folded
	MOVO     X0, X3;  PCMPEQB X7, X3;  \ // 'y'
	MOVO     X1, X4;  PCMPEQB X14, X4; \ // after 'r'
	MOVO     X1, X5;  PCMPEQB X15, X5; \ // or 't'
	POR      X5, X4;  PAND    X4, X3;  \
	POR      X3, X2;  \
	MOVO     X0, X3;  PCMPEQB X1, X3;  \ // same as before
	MOVO     X0, X4;  PCMPEQB X8, X4;  \ // 'l'
	MOVO     X0, X5;  PCMPEQB X9, X5;  \ // 'f'
	POR      X5, X4;  PAND    X3, X4;  \ // "ll" or "ff"
	POR      X4, X2;  \
	MOVO     X0, X3;  PCMPEQB X10, X3; \ // 'd'
	MOVO     X1, X4;  PCMPEQB X11, X4; \ // after 'u'
	PAND     X4, X3;  POR     X3, X2;  \
	MOVO     X0, X3;  PCMPEQB X12, X3; \ // 'i'
	MOVO     X1, X4;  PCMPEQB X13, X4; \ // after 's'
	PAND     X4, X3;  POR     X3, X2;  \
	PMOVMSKB X2, AX

// FLAGS32 is FLAGS in AVX2 over 32 bytes, Y0 and Y1 for X0 and X1, the
// constants in Y6-Y15: all 32 bits of AX are flags. AVX's compares take a
// separate destination and an unaligned memory operand, so no copies.
#define FLAGS32 \
	VPCMPEQB  written<>+0x00(SB), Y1, Y2; \ // after 'D' as written:
	VPCMPEQB  written<>+0x20(SB), Y0, Y3; \ // 'e'
	VPCMPEQB  Y13, Y0, Y4; \ // or 's'
	VPOR      Y4, Y3, Y3;  \
	VPAND     Y3, Y2, Y2;  \
	VPCMPEQB  written<>+0x40(SB), Y0, Y3; \ // 'V' as written
	VPOR      Y3, Y2, Y2;  \
	VPOR      Y6, Y0, Y0;  \ // folded
	VPOR      Y6, Y1, Y1;  \ // before, folded
	VPCMPEQB  Y7, Y0, Y3;  \ // 'y'
	VPCMPEQB  Y14, Y1, Y4; \ // after 'r'
	VPCMPEQB  Y15, Y1, Y5; \ // or 't'
	VPOR      Y5, Y4, Y4;  \
	VPAND     Y4, Y3, Y3;  \
	VPOR      Y3, Y2, Y2;  \
	VPCMPEQB  Y1, Y0, Y3;  \ // same as before
	VPCMPEQB  Y8, Y0, Y4;  \ // 'l'
	VPCMPEQB  Y9, Y0, Y5;  \ // 'f'
	VPOR      Y5, Y4, Y4;  \
	VPAND     Y3, Y4, Y4;  \ // "ll" or "ff"
	VPOR      Y4, Y2, Y2;  \
	VPCMPEQB  Y10, Y0, Y3; \ // 'd'
	VPCMPEQB  Y11, Y1, Y4; \ // after 'u'
	VPAND     Y4, Y3, Y3;  \
	VPOR      Y3, Y2, Y2;  \
	VPCMPEQB  Y12, Y0, Y3; \ // 'i'
	VPCMPEQB  Y13, Y1, Y4; \ // after 's'
	VPAND     Y4, Y3, Y3;  \
	VPOR      Y3, Y2, Y2;  \
	VPMOVMSKB Y2, AX

// FIRST32 loads the text's first 32 bytes into Y0 and the same shifted up one
// byte, a zero first, into Y1: VPALIGNR shifts within each 16-byte lane, so
// the byte that crosses from the low lane to the high one comes from a copy
// of the low lane moved up (VPERM2I128), the low lane of that copy zero.
#define FIRST32 \
	VMOVDQU    (SI), Y0;          \
	VPERM2I128 $0x08, Y0, Y0, Y1; \
	VPALIGNR   $15, Y1, Y0, Y1

// func nextKey(text string, from int) int
//
// Blocks of sixteen bytes from from on, each compared with the fifteen bytes
// before it and its first byte's predecessor loaded as one more unaligned
// block (one byte back); the text's first block has a zero shifted in for
// the byte before its first (no key is after a zero), as the word pass has.
// The last bytes are the text's last sixteen, the bytes already seen shifted
// off the mask, and a text shorter than sixteen bytes is gathered into a
// register with loads that stay inside it: nothing past the text is read.
// X15 is free here: nextKey is ABI0, and the compiler zeroes X15 (and
// reloads R14) after every call from Go into ABI0 code.
TEXT ·nextKey(SB), NOSPLIT, $0-32
	MOVQ  text_base+0(FP), SI
	MOVQ  text_len+8(FP), BX
	MOVQ  from+16(FP), DI
	CMPQ  DI, BX
	JAE   none
	CMPQ  BX, $32
	JB    sse2
	CMPB  ·useAVX2(SB), $0
	JNE   avx2

sse2:
	MOVOU keys<>+0x00(SB), X6
	MOVOU keys<>+0x10(SB), X7
	MOVOU keys<>+0x20(SB), X8
	MOVOU keys<>+0x30(SB), X9
	MOVOU keys<>+0x40(SB), X10
	MOVOU keys<>+0x50(SB), X11
	MOVOU keys<>+0x60(SB), X12
	MOVOU keys<>+0x70(SB), X13
	MOVOU keys<>+0x80(SB), X14
	MOVOU keys<>+0x90(SB), X15
	CMPQ  BX, $16
	JB    short
	TESTQ DI, DI
	JNZ   blocks

	// The text's first block: a zero before its first byte.
	MOVOU  (SI), X0
	MOVO   X0, X1
	PSLLDQ $1, X1
	FLAGS
	TESTL  AX, AX
	JNZ    found
	MOVQ   $16, DI

blocks:
	LEAQ  16(DI), DX
	CMPQ  DX, BX
	JA    tail
	MOVOU (SI)(DI*1), X0
	MOVOU -1(SI)(DI*1), X1 // DI >= 1 here
	FLAGS
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, DI
	JMP   blocks

tail:
	// from <= DI < len < DI+16: the last sixteen bytes start at DX = len-16,
	// and bits 0 to DI-DX-1 of their mask were seen before (or precede from).
	CMPQ  DI, BX
	JAE   none
	LEAQ  -16(BX), DX
	TESTQ DX, DX
	JZ    tail0
	MOVOU (SI)(DX*1), X0
	MOVOU -1(SI)(DX*1), X1

tailflags:
	FLAGS
	MOVQ  DI, CX
	SUBQ  DX, CX
	SHRL  CX, AX
	TESTL AX, AX
	JZ    none
	JMP   found

tail0:
	// A text of exactly sixteen bytes asked from from > 0: its first block again.
	MOVOU  (SI), X0
	MOVO   X0, X1
	PSLLDQ $1, X1
	JMP    tailflags

short:
	// 0 <= from < len < 16. Gather the text into AX (bytes 0-7) and DX
	// (bytes 8-15), the bytes past its end zero, with two loads from each
	// end that overlap in the middle, as memmove does for short copies.
	CMPQ BX, $8
	JB   lt8
	MOVQ (SI), AX
	MOVQ -8(SI)(BX*1), DX // bytes len-8 to len-1
	MOVQ $15, CX
	SUBQ BX, CX
	SHLQ $3, CX
	SHRQ CX, DX
	SHRQ $8, DX           // 8*(16-len) bits in all, 64 for len 8: bytes 8 to len-1
	JMP  gathered

lt8:
	CMPQ BX, $4
	JB   lt4
	MOVL (SI), AX
	MOVL -4(SI)(BX*1), DX // bytes len-4 to len-1, shifted to their places
	LEAQ -4(BX), CX
	SHLQ $3, CX
	SHLQ CX, DX
	ORQ  DX, AX
	XORL DX, DX
	JMP  gathered

lt4:
	// 1 to 3 bytes: the first, the middle and the last cover them all.
	MOVBQZX (SI), AX
	MOVBQZX -1(SI)(BX*1), DX
	LEAQ    -1(BX), CX
	SHLQ    $3, CX
	SHLQ    CX, DX
	ORQ     DX, AX
	MOVQ    BX, CX
	SHRQ    $1, CX
	MOVBQZX (SI)(CX*1), DX
	SHLQ    $3, CX
	SHLQ    CX, DX
	ORQ     DX, AX
	XORL    DX, DX

gathered:
	MOVQ       AX, X0
	MOVQ       DX, X1
	PUNPCKLQDQ X1, X0
	MOVO       X0, X1
	PSLLDQ     $1, X1
	FLAGS

	// A zero byte is no key, but keep the mask to the text all the same,
	// then drop the bytes before from.
	MOVL $1, DX
	MOVQ BX, CX
	SHLL CX, DX
	DECL DX
	ANDL DX, AX
	MOVQ DI, CX
	SHRL CX, AX
	TESTL AX, AX
	JZ   none

found:
	// AX: the flags of the bytes from DI on.
	BSFL AX, AX
	ADDQ DI, AX
	MOVQ AX, ret+24(FP)
	RET

none:
	MOVQ BX, ret+24(FP)
	RET

avx2:
	// The SSE2 path's blocks, 32 bytes each, for texts of 32 bytes or more
	// (a 60-byte line is two blocks instead of four). VZEROUPPER before
	// every return: SSE code after dirty upper halves pays a transition.
	VBROADCASTI128 keys<>+0x00(SB), Y6
	VBROADCASTI128 keys<>+0x10(SB), Y7
	VBROADCASTI128 keys<>+0x20(SB), Y8
	VBROADCASTI128 keys<>+0x30(SB), Y9
	VBROADCASTI128 keys<>+0x40(SB), Y10
	VBROADCASTI128 keys<>+0x50(SB), Y11
	VBROADCASTI128 keys<>+0x60(SB), Y12
	VBROADCASTI128 keys<>+0x70(SB), Y13
	VBROADCASTI128 keys<>+0x80(SB), Y14
	VBROADCASTI128 keys<>+0x90(SB), Y15
	TESTQ          DI, DI
	JNZ            blocks32
	FIRST32
	FLAGS32
	TESTL          AX, AX
	JNZ            found32
	MOVQ           $32, DI

blocks32:
	LEAQ    32(DI), DX
	CMPQ    DX, BX
	JA      tail32
	VMOVDQU (SI)(DI*1), Y0
	VMOVDQU -1(SI)(DI*1), Y1 // DI >= 1 here
	FLAGS32
	TESTL   AX, AX
	JNZ     found32
	ADDQ    $32, DI
	JMP     blocks32

tail32:
	// As tail, with the last 32 bytes.
	CMPQ    DI, BX
	JAE     none32
	LEAQ    -32(BX), DX
	TESTQ   DX, DX
	JZ      tail32first
	VMOVDQU (SI)(DX*1), Y0
	VMOVDQU -1(SI)(DX*1), Y1

tail32flags:
	FLAGS32
	MOVQ  DI, CX
	SUBQ  DX, CX
	SHRL  CX, AX
	TESTL AX, AX
	JZ    none32

found32:
	VZEROUPPER
	JMP found

none32:
	VZEROUPPER
	JMP none

tail32first:
	// A text of exactly 32 bytes asked from from > 0.
	FIRST32
	JMP tail32flags
