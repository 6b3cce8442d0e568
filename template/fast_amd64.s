#include "textflag.h"

// func pre64(bufs [][]byte, lens []int, arena []byte, off int, seq, w, be, sum uint64, c int, zero uint64) (n, next int)
//
// pre64Go (fast.go) in assembly; see there for what the arguments are.
// Registers: SI the next slice header of bufs, R13 the next length, CX
// the buffers left, R8 and R9 the arena's start and length, R10 the
// offset of the next frame in it, R11 seq, R12 w, DI c; AX, BX, DX
// scratch (DX the frame).
TEXT ·pre64(SB), NOSPLIT, $0-144
	MOVQ bufs_base+0(FP), SI
	MOVQ bufs_len+8(FP), CX
	MOVQ lens_base+24(FP), R13
	MOVQ arena_base+48(FP), R8
	MOVQ arena_len+56(FP), R9
	MOVQ off+72(FP), R10
	MOVQ seq+80(FP), R11
	MOVQ w+88(FP), R12
	MOVQ c+112(FP), DI
	TESTQ CX, CX
	JZ done

loop:
	MOVQ 16(SI), AX // cap(b)
	CMPQ AX, $64
	JLT done
	MOVQ (SI), DX
	LEAQ (R8)(R10*1), AX // the frame in the arena
	PREFETCHT0 512(AX)   // eight frames ahead (a hint: no fault past the end)
	MOVOU (AX), X0
	MOVOU 16(AX), X1
	MOVOU 32(AX), X2
	MOVOU X0, (DX)
	MOVOU X1, 16(DX)
	MOVOU X2, 32(DX)
	TESTQ DI, DI
	JLT sig

	// The checksum at c, adjusted by seq's 32-bit halves and sum:
	// x = ^Fold(^old + seq>>32 + seq&0xffffffff + sum), zero for 0.
	MOVWLZX (AX)(DI*1), BX
	ROLW $8, BX
	XORL $0xffff, BX
	MOVL R11, AX
	ADDQ AX, BX
	MOVQ R11, AX
	SHRQ $32, AX
	ADDQ AX, BX
	ADDQ sum+104(FP), BX
	// Fold (the sum is below 2^35): the 32-bit halves with end-around
	// carry, then the 16-bit halves in the top half of a 32-bit add
	// (H:0 + L:0, the carry back in with 0xffff), as Linux's csum_fold.
	MOVQ BX, AX
	SHRQ $32, AX
	ADDL AX, BX
	ADCL $0, BX
	MOVL BX, AX
	SHLL $16, AX
	ANDL $0xffff0000, BX
	ADDL AX, BX
	ADCL $0xffff, BX
	SHRL $16, BX
	XORL $0xffff, BX
	CMOVQEQ zero+120(FP), BX
	ROLW $8, BX
	MOVW BX, (DX)(DI*1)

sig:
	// The signature's seq (big-endian) and time, the frame's length.
	MOVQ R11, AX
	BSWAPQ AX
	MOVQ AX, 48(DX)
	MOVQ be+96(FP), AX
	MOVQ AX, 56(DX)
	MOVQ $64, (R13)
	ADDQ R12, R11
	ADDQ $64, R10
	CMPQ R10, R9
	JNE next
	XORL R10, R10

next:
	ADDQ $24, SI
	ADDQ $8, R13
	DECQ CX
	JNZ loop

done:
	MOVQ bufs_len+8(FP), AX
	SUBQ CX, AX
	MOVQ AX, n+128(FP)
	MOVQ R10, next+136(FP)
	RET
