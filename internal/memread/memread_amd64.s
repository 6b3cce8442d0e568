#include "textflag.h"

// func sum64AVX512(b []byte) uint64
// Sums the first len(b)&^7 bytes as little-endian uint64 words: 256-byte
// blocks into four ZMM accumulators, then 64-byte blocks, then words.
TEXT ·sum64AVX512(SB), NOSPLIT, $0-32
	MOVQ   b_base+0(FP), SI
	MOVQ   b_len+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	MOVQ   CX, DX
	SHRQ   $8, DX
	JZ     tail512

loop512:
	VPADDQ (SI), Z0, Z0
	VPADDQ 64(SI), Z1, Z1
	VPADDQ 128(SI), Z2, Z2
	VPADDQ 192(SI), Z3, Z3
	ADDQ   $256, SI
	DECQ   DX
	JNZ    loop512

tail512:
	MOVQ CX, DX
	ANDQ $255, DX
	SHRQ $6, DX
	JZ   reduce512

blk512:
	VPADDQ (SI), Z0, Z0
	ADDQ   $64, SI
	DECQ   DX
	JNZ    blk512

reduce512:
	VPADDQ        Z1, Z0, Z0
	VPADDQ        Z3, Z2, Z2
	VPADDQ        Z2, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDQ        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDQ        X1, X0, X0
	VMOVQ         X0, AX
	VZEROUPPER
	MOVQ          CX, DX
	ANDQ          $63, DX
	SHRQ          $3, DX
	JZ            done512

words512:
	ADDQ (SI), AX
	ADDQ $8, SI
	DECQ DX
	JNZ  words512

done512:
	MOVQ AX, ret+24(FP)
	RET

// func sum64AVX2(b []byte) uint64
// Sums the first len(b)&^7 bytes: 256-byte blocks into eight YMM
// accumulators, then 32-byte blocks, then words.
TEXT ·sum64AVX2(SB), NOSPLIT, $0-32
	MOVQ  b_base+0(FP), SI
	MOVQ  b_len+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ  CX, DX
	SHRQ  $8, DX
	JZ    tail2

loop2:
	VPADDQ (SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y4, Y4
	VPADDQ 160(SI), Y5, Y5
	VPADDQ 192(SI), Y6, Y6
	VPADDQ 224(SI), Y7, Y7
	ADDQ   $256, SI
	DECQ   DX
	JNZ    loop2

tail2:
	MOVQ CX, DX
	ANDQ $255, DX
	SHRQ $5, DX
	JZ   reduce2

blk2:
	VPADDQ (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   DX
	JNZ    blk2

reduce2:
	VPADDQ       Y1, Y0, Y0
	VPADDQ       Y3, Y2, Y2
	VPADDQ       Y5, Y4, Y4
	VPADDQ       Y7, Y6, Y6
	VPADDQ       Y2, Y0, Y0
	VPADDQ       Y6, Y4, Y4
	VPADDQ       Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDQ       X1, X0, X0
	VMOVQ        X0, AX
	VZEROUPPER
	MOVQ         CX, DX
	ANDQ         $31, DX
	SHRQ         $3, DX
	JZ           done2

words2:
	ADDQ (SI), AX
	ADDQ $8, SI
	DECQ DX
	JNZ  words2

done2:
	MOVQ AX, ret+24(FP)
	RET

// func copyAVX512(dst, src *byte, n int, nt bool)
// n >= 256; dst and src do not overlap. With nt the stores bypass the
// caches (VMOVNTDQ on a 64-byte aligned destination) and end with SFENCE.
TEXT ·copyAVX512(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVB nt+24(FP), AL
	// The last 256 bytes, copied first with unaligned loads/stores, so
	// the loops below never need a tail.
	LEAQ      -256(SI)(CX*1), R8
	LEAQ      -256(DI)(CX*1), R9
	VMOVDQU64 (R8), Z4
	VMOVDQU64 64(R8), Z5
	VMOVDQU64 128(R8), Z6
	VMOVDQU64 192(R8), Z7
	VMOVDQU64 Z4, (R9)
	VMOVDQU64 Z5, 64(R9)
	VMOVDQU64 Z6, 128(R9)
	VMOVDQU64 Z7, 192(R9)
	TESTB     AL, AL
	JNZ       nt

	SUBQ $256, CX
	JZ   done

regular:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	ADDQ      $256, SI
	ADDQ      $256, DI
	SUBQ      $256, CX
	JA        regular
	JMP       done

nt:
	// Head: one unaligned 64-byte move, then advance to the next 64-byte
	// boundary of dst (0..63 bytes; the overlap rewrites equal bytes).
	VMOVDQU64 (SI), Z0
	VMOVDQU64 Z0, (DI)
	MOVQ      DI, DX
	NEGQ      DX
	ANDQ      $63, DX
	ADDQ      DX, SI
	ADDQ      DX, DI
	SUBQ      DX, CX
	SUBQ      $256, CX
	JBE       ntdone

ntloop:
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVNTDQ  Z0, (DI)
	VMOVNTDQ  Z1, 64(DI)
	VMOVNTDQ  Z2, 128(DI)
	VMOVNTDQ  Z3, 192(DI)
	ADDQ      $256, SI
	ADDQ      $256, DI
	SUBQ      $256, CX
	JA        ntloop

ntdone:
	SFENCE

done:
	VZEROUPPER
	RET

// func copyERMS(dst, src *byte, n int)
// REP MOVSB: fastest for mid-size copies on CPUs with ERMS (and FSRM).
TEXT ·copyERMS(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	REP; MOVSB
	RET
