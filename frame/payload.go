package frame

import (
	"errors"
	"fmt"
	"strings"
)

// Payload frame layout (little-endian, the native order of the hosts wpg
// runs on; the packet Signature is big-endian because it travels on wires):
//
//	offset 0  magic    uint32  0x46475057 ("WPGF" in memory order)
//	offset 4  version  uint8   PayloadVersion
//	offset 5  flags    uint8   bit 0: checksum field is valid; bit 1: end
//	                           stamps only (FlagEndStamps)
//	offset 6  stream   uint16  PayloadConfig.Stream + worker index
//	offset 8  seq      uint64  sequence number within the stream, from 0
//	offset 16 tx       int64   transmit time, ns of CLOCK_MONOTONIC
//	offset 24 length   uint32  payload length in bytes (after the header)
//	offset 28 checksum uint32  CRC-32C (Castagnoli) of the payload
//	offset 32 payload  length bytes
//
// The payload is a base image (a fixed pattern, a seeded random block or a
// file, repeated to the payload length) in which the 8-byte word at every
// stamp position (offset 0, every StampStride bytes, and the last 8 bytes)
// is overwritten with seq+1 (little-endian). A frame whose slot or pipe
// page still holds an older frame therefore fails the stamp check even
// where the base bytes are identical, and the checksum covers every byte.
// A sender running with VerifyOff stamps only the first and the last word
// and says so with flag bit 1: a pure bandwidth run then writes no more of
// each frame than its header and two words (a sender that fills its
// buffers once writes none).
const (
	PayloadMagic     uint32 = 0x46475057
	PayloadVersion   uint8  = 1
	PayloadHeaderLen        = 32
	// StampStride is the distance between sequence stamps in the payload.
	StampStride = 4096
	// MinPayload and MaxPayload bound PayloadConfig.Size.
	MinPayload = 64
	MaxPayload = 1 << 30

	flagChecksum = 1 << 0
	// flagEndStamps: only the first and the last payload word carry the
	// stamp (sent with VerifyOff); the words between hold the base image
	// or whatever an earlier frame left there.
	flagEndStamps = 1 << 1
	blockLen      = 64 << 10 // period of the pattern and random fills
)

// VerifyMode says how much of each payload frame the receiver checks.
type VerifyMode int

// Verification modes. VerifyOn is the default (zero value).
const (
	// VerifyOn checks header, stamps and the CRC-32C of every frame.
	VerifyOn VerifyMode = iota
	// VerifySample fully checks one frame in SampleEvery (the header and
	// the first and last stamps of the others).
	VerifySample
	// VerifyOff checks headers only; the sender does not compute the
	// checksum and stamps only the first and last payload words. For pure
	// bandwidth runs; the report says so.
	VerifyOff
)

// SampleEvery is the sampling period of VerifySample.
const SampleEvery = 64

// String returns "on", "sample" or "off".
func (m VerifyMode) String() string {
	switch m {
	case VerifyOn:
		return "on"
	case VerifySample:
		return "sample"
	case VerifyOff:
		return "off"
	}
	return fmt.Sprintf("VerifyMode(%d)", int(m))
}

// ParseVerify parses the --verify flag value.
func ParseVerify(s string) (VerifyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "on", "full":
		return VerifyOn, nil
	case "sample":
		return VerifySample, nil
	case "off", "none":
		return VerifyOff, nil
	}
	return 0, fmt.Errorf("--verify %q: choose on, sample or off", s)
}

// Fill kinds for PayloadConfig.Fill.
const (
	FillPattern = "pattern"
	FillRandom  = "random"
	FillFile    = "file"
)

// PayloadConfig describes the payload frames of a run.
type PayloadConfig struct {
	Size   int        // payload bytes, MinPayload … MaxPayload
	Raw    bool       // payload only, no header and no stamps (for ffmpeg etc.)
	Fill   string     // FillPattern (default), FillRandom (seeded) or FillFile
	File   string     // the file of FillFile (--payload-file)
	Seed   uint64     // seed of FillRandom
	Count  uint64     // total frames across workers, 0 = unlimited
	Verify VerifyMode // VerifyOff: the sender skips the checksum
	Stream uint16     // stream id of worker 0; worker i uses Stream+i
}

// FrameLen is the length of one frame on the wire: header plus payload, or
// the payload alone when Raw.
func (c PayloadConfig) FrameLen() int {
	if c.Raw {
		return c.Size
	}
	return PayloadHeaderLen + c.Size
}

// Validate checks the configuration without touching files.
func (c PayloadConfig) Validate() error {
	if c.Size < MinPayload || c.Size > MaxPayload {
		return fmt.Errorf("payload size %d bytes is out of range: --size takes %d B … 1 GiB (e.g. --size 460800, --size 1MiB)", c.Size, MinPayload)
	}
	switch c.Fill {
	case "", FillPattern, FillRandom:
		if c.File != "" {
			return fmt.Errorf("--payload-file %q given with --fill %s: use --fill file (or drop --payload-file)", c.File, c.fill())
		}
	case FillFile:
		if c.File == "" {
			return errors.New("--fill file needs --payload-file PATH")
		}
	default:
		return fmt.Errorf("--fill %q: choose pattern, random or file", c.Fill)
	}
	if c.Verify < VerifyOn || c.Verify > VerifyOff {
		return fmt.Errorf("verify mode %d: choose on, sample or off", int(c.Verify))
	}
	return nil
}

func (c PayloadConfig) fill() string {
	if c.Fill == "" {
		return FillPattern
	}
	return c.Fill
}
