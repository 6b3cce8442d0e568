#include "textflag.h"

// func crc32cFold(crc uint32, b []byte, k *[crcKN][2]uint64) uint32
//
// CRC-32C by folding (Intel's "Fast CRC computation for generic
// polynomials using PCLMULQDQ", on 512-bit registers), len(b) ≥ 256. crc
// is the raw register (not inverted); it is xored into the first four
// bytes. Four ZMM accumulators take 256 bytes per iteration; they are then
// folded into one, its four 16-byte lanes into the last, the remaining
// 16-byte blocks onto that; the CRC of the final 16 bytes (the crc32
// instruction from a zero register) is the CRC of everything folded, and
// the last len%16 bytes follow with the crc32 instruction.
TEXT ·crc32cFold(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ b_base+8(FP), SI
	MOVQ b_len+16(FP), CX
	MOVQ k+32(FP), DX

	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPXORQ    Z4, Z4, Z4
	VMOVD     AX, X4
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX

	VBROADCASTI32X4 0(DX), Z8  // fold by 256 bytes
	VBROADCASTI32X4 16(DX), Z9 // fold by 64 bytes
	CMPQ            CX, $256
	JB              fold4

	PCALIGN $32
loop256:
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPCLMULQDQ $0x00, Z8, Z1, Z5
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPCLMULQDQ $0x00, Z8, Z2, Z6
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPCLMULQDQ $0x00, Z8, Z3, Z7
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGD $0x96, (SI), Z4, Z0
	VPTERNLOGD $0x96, 64(SI), Z5, Z1
	VPTERNLOGD $0x96, 128(SI), Z6, Z2
	VPTERNLOGD $0x96, 192(SI), Z7, Z3
	ADDQ       $256, SI
	SUBQ       $256, CX
	CMPQ       CX, $256
	JAE        loop256

fold4:
	// Z0 onto Z1, Z1 onto Z2, Z2 onto Z3 (64 bytes apart each).
	VPCLMULQDQ $0x00, Z9, Z0, Z4
	VPCLMULQDQ $0x11, Z9, Z0, Z5
	VPTERNLOGD $0x96, Z4, Z5, Z1
	VPCLMULQDQ $0x00, Z9, Z1, Z4
	VPCLMULQDQ $0x11, Z9, Z1, Z5
	VPTERNLOGD $0x96, Z4, Z5, Z2
	VPCLMULQDQ $0x00, Z9, Z2, Z4
	VPCLMULQDQ $0x11, Z9, Z2, Z5
	VPTERNLOGD $0x96, Z4, Z5, Z3
	CMPQ       CX, $64
	JB         lanes

loop64:
	VPCLMULQDQ $0x00, Z9, Z3, Z4
	VPCLMULQDQ $0x11, Z9, Z3, Z3
	VPTERNLOGD $0x96, (SI), Z4, Z3
	ADDQ       $64, SI
	SUBQ       $64, CX
	CMPQ       CX, $64
	JAE        loop64

lanes:
	// Lanes 0, 1 and 2 of Z3 onto lane 3 (48, 32 and 16 bytes on).
	VEXTRACTI32X4 $0, Z3, X0
	VEXTRACTI32X4 $1, Z3, X1
	VEXTRACTI32X4 $2, Z3, X2
	VEXTRACTI32X4 $3, Z3, X7
	VMOVDQU       32(DX), X8
	VPCLMULQDQ    $0x00, X8, X0, X4
	VPCLMULQDQ    $0x11, X8, X0, X5
	VPXOR         X4, X7, X7
	VPXOR         X5, X7, X7
	VMOVDQU       48(DX), X8
	VPCLMULQDQ    $0x00, X8, X1, X4
	VPCLMULQDQ    $0x11, X8, X1, X5
	VPXOR         X4, X7, X7
	VPXOR         X5, X7, X7
	VMOVDQU       64(DX), X8
	VPCLMULQDQ    $0x00, X8, X2, X4
	VPCLMULQDQ    $0x11, X8, X2, X5
	VPXOR         X4, X7, X7
	VPXOR         X5, X7, X7
	CMPQ          CX, $16
	JB            final

loop16:
	VPCLMULQDQ $0x00, X8, X7, X4
	VPCLMULQDQ $0x11, X8, X7, X7
	VPXOR      X4, X7, X7
	VPXOR      (SI), X7, X7
	ADDQ       $16, SI
	SUBQ       $16, CX
	CMPQ       CX, $16
	JAE        loop16

final:
	VMOVQ   X7, BX
	VPEXTRQ $1, X7, R8
	VZEROUPPER
	XORL    AX, AX
	CRC32Q  BX, AX
	CRC32Q  R8, AX
	CMPQ    CX, $8
	JB      tail
	CRC32Q  (SI), AX
	ADDQ    $8, SI
	SUBQ    $8, CX

tail:
	TESTQ CX, CX
	JZ    done

tailbyte:
	CRC32B (SI), AX
	INCQ   SI
	DECQ   CX
	JNZ    tailbyte

done:
	MOVL AX, ret+40(FP)
	RET
