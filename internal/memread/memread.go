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
	// Needs names what the CPU must have to run it ("AVX-512F on amd64"),
	// "" for the portable reader.
	Needs string
	// Sum is the implementation; all of them return Sum64Generic's result.
	// It is nil in All's entries this CPU cannot run.
	Sum func(b []byte) uint64
}

// readers is every reader wpg has, best first, with its implementation
// where this CPU can run it: the list is the same on every machine (help
// text and docs list it), what this CPU can run is decided at run time.
var readers = []Impl{
	{Name: "avx512", How: "avx512 64B loads ×4 unrolled (256 B/iteration, 4 accumulators)", Needs: "AVX-512F on amd64"},
	{Name: "avx2", How: "avx2 32B loads ×8 unrolled (256 B/iteration, 8 accumulators)", Needs: "AVX2 on amd64"},
	{Name: "go", How: "go 8B loads ×8 unrolled (64 B/iteration, 4 accumulators)", Sum: Sum64Generic},
}

// impls is what this CPU can run, best first; it is decided once, at
// package initialisation, and never changes.
var impls = available(archSums())

// available returns the readers that have an implementation in sums (by
// name; "go" always has one), best first.
func available(sums map[string]func([]byte) uint64) []Impl {
	var out []Impl
	for _, r := range readers {
		if f := sums[r.Name]; f != nil {
			r.Sum = f
		}
		if r.Sum != nil {
			out = append(out, r)
		}
	}
	return out
}

// Sum64 returns the sum (mod 2^64) of b read as little-endian uint64 words;
// a tail of fewer than 8 bytes counts as one zero-extended word. It uses
// Best; a run that was given another reader calls that Impl's Sum.
func Sum64(b []byte) uint64 { return impls[0].Sum(b) }

// Best returns the best implementation this CPU can run (what "auto"
// selects and Sum64 uses).
func Best() Impl { return impls[0] }

// All lists every reader wpg has, best first, whether or not this CPU can
// run it (Sum is nil where it cannot): the same list on every machine.
func All() []Impl {
	out := append([]Impl(nil), readers...)
	for i := range out {
		for _, im := range impls {
			if im.Name == out[i].Name {
				out[i].Sum = im.Sum
			}
		}
	}
	return out
}

// Names lists the names of All, best first.
func Names() []string {
	out := make([]string, len(readers))
	for i, r := range readers {
		out[i] = r.Name
	}
	return out
}

// Available lists the implementations this CPU can run, best first.
func Available() []Impl { return append([]Impl(nil), impls...) }

// Lookup returns the implementation of name ("auto" or "" = Best). The
// caller keeps it for its run: there is no process-wide switch.
func Lookup(name string) (Impl, error) { return lookup(impls, name) }

func lookup(impls []Impl, name string) (Impl, error) {
	if name == "" || name == "auto" {
		return impls[0], nil
	}
	var names []string
	for _, im := range impls {
		if im.Name == name {
			return im, nil
		}
		names = append(names, im.Name)
	}
	for _, r := range readers {
		if r.Name == name {
			return Impl{}, fmt.Errorf("memread: reader %q needs %s, which this CPU does not have: choose auto or one of %s", name, r.Needs, strings.Join(names, ", "))
		}
	}
	return Impl{}, fmt.Errorf("memread: reader %q unknown: choose auto or one of %s (this CPU runs %s)", name, strings.Join(Names(), ", "), strings.Join(names, ", "))
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
