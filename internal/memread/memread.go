package memread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

func errUnknownCopy(name string) error {
	return errors.New("memread: copy " + fmt.Sprintf("%q", name) + " unknown: choose auto or go")
}

// Impl is one implementation of the in-place read.
type Impl struct {
	// Name is the short name ("avx512", "avx2", "go").
	Name string
	// How describes the loads, for reports.
	How string
	// Sum is the implementation; all of them return Sum64Generic's result.
	Sum func(b []byte) uint64
}

var (
	impls  []Impl // available on this CPU, best first; filled by the arch file
	active Impl
)

func init() {
	impls = append(archImpls(), Impl{Name: "go", How: "go 8B loads ×8 unrolled (64 B/iteration, 4 accumulators)", Sum: Sum64Generic})
	active = impls[0]
}

// Sum64 returns the sum (mod 2^64) of b read as little-endian uint64 words;
// a tail of fewer than 8 bytes counts as one zero-extended word. It uses
// the implementation chosen by Use (the best available by default).
func Sum64(b []byte) uint64 { return active.Sum(b) }

// Active returns the implementation Sum64 uses.
func Active() Impl { return active }

// Available lists the implementations this CPU can run, best first.
func Available() []Impl { return append([]Impl(nil), impls...) }

// Use selects the implementation by name ("auto" = best available). It is
// meant for start-up (flags), not for concurrent use with Sum64.
func Use(name string) error {
	if name == "" || name == "auto" {
		active = impls[0]
		return nil
	}
	var names []string
	for _, im := range impls {
		if im.Name == name {
			active = im
			return nil
		}
		names = append(names, im.Name)
	}
	return fmt.Errorf("memread: reader %q is not available on this CPU: choose auto or one of %s", name, strings.Join(names, ", "))
}

// Sum64Generic is the portable implementation of Sum64.
func Sum64Generic(b []byte) uint64 {
	var s0, s1, s2, s3 uint64
	for len(b) >= 64 {
		s0 += binary.LittleEndian.Uint64(b[0:8])
		s1 += binary.LittleEndian.Uint64(b[8:16])
		s2 += binary.LittleEndian.Uint64(b[16:24])
		s3 += binary.LittleEndian.Uint64(b[24:32])
		s0 += binary.LittleEndian.Uint64(b[32:40])
		s1 += binary.LittleEndian.Uint64(b[40:48])
		s2 += binary.LittleEndian.Uint64(b[48:56])
		s3 += binary.LittleEndian.Uint64(b[56:64])
		b = b[64:]
	}
	for len(b) >= 8 {
		s0 += binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	if len(b) > 0 {
		var t [8]byte
		copy(t[:], b)
		s0 += binary.LittleEndian.Uint64(t[:])
	}
	return s0 + s1 + s2 + s3
}

// tailWord reads up to 7 bytes as one zero-extended little-endian word.
func tailWord(t []byte) uint64 {
	var w uint64
	for i, c := range t {
		w |= uint64(c) << (8 * i)
	}
	return w
}
