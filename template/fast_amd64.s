#include "go_asm.h"
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

// func streamKernel(bufs [][]byte, lens []int, k *kernelArgs) int
//
// streamKernelGo (fast_kernel.go) in assembly; see there for what it
// does. Registers: SI the next slice header of bufs, R13 the next length
// (where the frame's size is kept once known), CX the buffers left, R11
// the frame's index in the chunk, R12 k, R10 seq, DX the frame, R8 and R9
// the first and second checksum's sums, DI the length field or the field,
// X1-X4 the image's first 64 bytes; AX, BX, R14 scratch.
TEXT ·streamKernel(SB), NOSPLIT, $0-64
	MOVQ bufs_base+0(FP), SI
	MOVQ bufs_len+8(FP), CX
	MOVQ lens_base+24(FP), R13
	MOVQ k+48(FP), R12
	MOVQ kernelArgs_seq(R12), R10
	XORQ R11, R11
	TESTQ CX, CX
	JZ kdone
	CMPQ kernelArgs_img+8(R12), $64
	JLT kloop
	MOVQ kernelArgs_img(R12), BX
	MOVOU (BX), X1
	MOVOU 16(BX), X2
	MOVOU 32(BX), X3
	MOVOU 48(BX), X4

kloop:
	// The frame's size (k.size0, or k.sizes[k.si[j]]) and base sums.
	LEAQ kernelArgs_size0(R12), AX
	MOVQ kernelArgs_si(R12), BX
	TESTQ BX, BX
	JEQ ksize
	MOVQ (BX)(R11*8), BX
	IMULQ $kernelSize__size, BX
	MOVQ kernelArgs_sizes(R12), AX
	ADDQ BX, AX

ksize:
	MOVQ kernelSize_n(AX), R14
	MOVQ R14, (R13)
	MOVQ kernelSize_base0(AX), R8
	MOVQ kernelSize_base1(AX), R9
	CMPQ 16(SI), R14 // cap(b) < n: stop
	JLT kdone
	MOVQ (SI), DX
	MOVQ kernelArgs_skip(R12), BX
	TESTQ BX, BX
	JEQ kimage
	CMPQ (BX)(R11*8), $0
	JNE klens

kimage:
	CMPQ R14, $64
	JNE kcopy
	MOVOU X1, (DX)
	MOVOU X2, 16(DX)
	MOVOU X3, 32(DX)
	MOVOU X4, 48(DX)
	JMP klens

kcopy:
	// n >= 16: 64-byte steps, 16-byte steps, then the last 16 bytes,
	// ending at n. AX the image, BX the offset, R14 n-16.
	MOVQ kernelArgs_img(R12), AX
	XORQ BX, BX
	SUBQ $16, R14

kcopy64:
	LEAQ 48(BX), DI
	CMPQ DI, R14
	JGT kcopy16
	MOVOU (AX)(BX*1), X0
	MOVOU X0, (DX)(BX*1)
	MOVOU 16(AX)(BX*1), X0
	MOVOU X0, 16(DX)(BX*1)
	MOVOU 32(AX)(BX*1), X0
	MOVOU X0, 32(DX)(BX*1)
	MOVOU 48(AX)(BX*1), X0
	MOVOU X0, 48(DX)(BX*1)
	ADDQ $64, BX
	JMP kcopy64

kcopy16:
	CMPQ BX, R14
	JGE kcopylast
	MOVOU (AX)(BX*1), X0
	MOVOU X0, (DX)(BX*1)
	ADDQ $16, BX
	JMP kcopy16

kcopylast:
	MOVOU (AX)(R14*1), X0
	MOVOU X0, (DX)(R14*1)

klens:
	// The length fields: n - sub, big-endian.
	LEAQ kernelArgs_lf(R12), DI
	CMPQ lenField_off(DI), $0
	JEQ kfields

klen1:
	MOVQ (R13), BX
	SUBQ lenField_sub(DI), BX
	ROLW $8, BX
	MOVQ lenField_off(DI), R14
	MOVW BX, (DX)(R14*1)
	ADDQ $lenField__size, DI
	CMPQ lenField_off(DI), $0
	JNE klen1

kfields:
	LEAQ kernelArgs_f(R12), DI
	CMPQ kernelField_width(DI), $0
	JEQ ksig

kfield:
	// v = vals[j] & mask into the slot's bits base, big-endian at off.
	MOVQ kernelField_vals(DI), AX
	MOVQ (AX)(R11*8), AX
	ANDQ kernelField_mask(DI), AX
	MOVQ kernelField_base(DI), BX
	ORQ AX, BX
	MOVQ kernelField_off(DI), R14
	CMPQ kernelField_width(DI), $4
	JNE kw2
	BSWAPL BX
	MOVL BX, (DX)(R14*1)
	JMP kshare

kw2:
	CMPQ kernelField_width(DI), $2
	JNE kw8
	ROLW $8, BX
	MOVW BX, (DX)(R14*1)
	JMP kshare

kw8:
	CMPQ kernelField_width(DI), $8
	JNE kw6
	BSWAPQ BX
	MOVQ BX, (DX)(R14*1)
	// The share of 64 bits: the sum of their 32-bit halves.
	MOVL AX, BX
	SHRQ $32, AX
	ADDQ BX, AX
	JMP kshare

kw6:
	// 48 bits: shifted to the top and swapped, the first four bytes,
	// then the next two.
	SHLQ $16, BX
	BSWAPQ BX
	MOVL BX, (DX)(R14*1)
	SHRQ $32, BX
	MOVW BX, 4(DX)(R14*1)

kshare:
	MOVQ AX, BX
	ANDQ kernelField_cmask0(DI), BX
	ADDQ BX, R8
	ANDQ kernelField_cmask1(DI), AX
	ADDQ AX, R9
	ADDQ $kernelField__size, DI
	CMPQ kernelField_width(DI), $0
	JNE kfield

ksig:
	CMPQ kernelArgs_sig(R12), $0
	JEQ kck
	MOVQ (R13), R14
	SUBQ $20, R14
	CMPQ kernelArgs_si(R12), $0
	JEQ kseq
	MOVL kernelArgs_sighdr(R12), AX
	MOVL AX, (DX)(R14*1)

kseq:
	MOVQ R10, AX
	BSWAPQ AX
	MOVQ AX, 4(DX)(R14*1)
	MOVQ kernelArgs_be(R12), AX
	MOVQ AX, 12(DX)(R14*1)
	// The share of seq (its 32-bit halves) and of the time; at an odd
	// offset folded and byte-swapped.
	MOVL R10, AX
	MOVQ R10, BX
	SHRQ $32, BX
	ADDQ BX, AX
	ADDQ kernelArgs_tsum(R12), AX
	TESTQ $1, (R13)
	JEQ ksigshare
	MOVQ AX, BX
	SHRQ $32, BX
	ADDL BX, AX
	ADCL $0, AX
	MOVL AX, BX
	SHLL $16, BX
	ANDL $0xffff0000, AX
	ADDL BX, AX
	ADCL $0xffff, AX
	SHRL $16, AX
	ROLW $8, AX

ksigshare:
	MOVQ AX, BX
	ANDQ kernelArgs_smask0(R12), BX
	ADDQ BX, R8
	ANDQ kernelArgs_smask1(R12), AX
	ADDQ AX, R9

kck:
	ADDQ kernelArgs_w(R12), R10
	MOVQ kernelArgs_c0(R12), R14
	TESTQ R14, R14
	JLT knext
	// Fold (the sums are below 2^64): the 32-bit halves with end-around
	// carry, then the 16-bit halves in the top half of a 32-bit add, as
	// pre64; complement; a checksum of 0 written as z0.
	MOVQ R8, AX
	SHRQ $32, AX
	ADDL AX, R8
	ADCL $0, R8
	MOVL R8, AX
	SHLL $16, AX
	ANDL $0xffff0000, R8
	ADDL AX, R8
	ADCL $0xffff, R8
	SHRL $16, R8
	XORL $0xffff, R8
	CMOVQEQ kernelArgs_z0(R12), R8
	MOVQ R8, AX
	ROLW $8, AX
	MOVW AX, (DX)(R14*1)
	MOVQ kernelArgs_c1(R12), R14
	TESTQ R14, R14
	JLT knext
	ANDQ kernelArgs_in1(R12), R8
	ADDQ R8, R9
	MOVQ R9, AX
	SHRQ $32, AX
	ADDL AX, R9
	ADCL $0, R9
	MOVL R9, AX
	SHLL $16, AX
	ANDL $0xffff0000, R9
	ADDL AX, R9
	ADCL $0xffff, R9
	SHRL $16, R9
	XORL $0xffff, R9
	CMOVQEQ kernelArgs_z1(R12), R9
	ROLW $8, R9
	MOVW R9, (DX)(R14*1)

knext:
	ADDQ $24, SI
	ADDQ $8, R13
	INCQ R11
	DECQ CX
	JNZ kloop

kdone:
	MOVQ R11, ret+56(FP)
	RET
