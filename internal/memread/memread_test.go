package memread

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// naive is the definition of Sum64, one word at a time.
func naive(b []byte) uint64 {
	var s uint64
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		copy(w[:], b[i:])
		s += binary.LittleEndian.Uint64(w[:])
	}
	return s
}

func TestImplsAgreeRandomSizesAndAlignments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20+512)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	impls := Available()
	if len(impls) == 0 || impls[len(impls)-1].Name != "go" {
		t.Fatalf("implementations %v: the pure-Go fallback must always be last", impls)
	}
	sizes := []int{0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 511, 512, 4096, 65536, 1 << 20}
	for i := 0; i < 300; i++ {
		sizes = append(sizes, rng.IntN(1<<20))
	}
	for _, n := range sizes {
		off := rng.IntN(129)
		b := buf[off : off+n]
		want := naive(b)
		for _, im := range impls {
			if got := im.Sum(b); got != want {
				t.Fatalf("%s: Sum64 of %d bytes at offset %d = %#x, want %#x", im.Name, n, off, got, want)
			}
		}
	}
	t.Logf("checked %d sizes with %d implementations (best: %s)", len(sizes), len(impls), Best().How)
}

// A single changed byte anywhere changes the sum.
func TestSumDetectsACorruptByte(t *testing.T) {
	b := make([]byte, 4096+37)
	for i := range b {
		b[i] = byte(i)
	}
	for _, im := range Available() {
		ref := im.Sum(b)
		for _, pos := range []int{0, 255, 256, 4095, len(b) - 1} {
			b[pos] ^= 0x40
			if im.Sum(b) == ref {
				t.Errorf("%s: flipping byte %d left the sum unchanged", im.Name, pos)
			}
			b[pos] ^= 0x40
		}
	}
}

func TestLookup(t *testing.T) {
	if im, err := Lookup("go"); err != nil || im.Name != "go" || im.Sum == nil {
		t.Fatalf("Lookup(go): %v, %+v", err, im)
	}
	if _, err := Lookup("sse1"); err == nil {
		t.Fatal("Lookup of an unknown reader succeeded")
	}
	if im, err := Lookup("auto"); err != nil || im.Name != Available()[0].Name || Best().Name != im.Name {
		t.Fatalf("Lookup(auto): %v, %s", err, im.Name)
	}
}

func BenchmarkSum64(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 64 << 20} {
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = byte(i)
		}
		for _, im := range Available() {
			b.Run(fmt.Sprintf("%s/%d", im.Name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var s uint64
				for b.Loop() {
					s += im.Sum(buf)
				}
				sink = s
			})
		}
	}
}

var sink uint64

func ExampleSum64() {
	b := []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}
	fmt.Println(Sum64(b))
	// Output: 6
}

// The list of readers is the same on every CPU; what this CPU runs is
// decided separately (help text must not list only the readers of the
// machine it was generated on).
func TestReaderListIsHostIndependent(t *testing.T) {
	want := []string{"avx512", "avx2", "go"}
	if got := Names(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("All() = %v", all)
	}
	for i, im := range all {
		if im.Name != want[i] || im.How == "" {
			t.Errorf("All()[%d] = %+v", i, im)
		}
		runs := false
		for _, a := range Available() {
			runs = runs || a.Name == im.Name
		}
		if runs != (im.Sum != nil) {
			t.Errorf("%s: in Available %v, Sum set %v", im.Name, runs, im.Sum != nil)
		}
	}
	// A CPU with no assembly reader: only go.
	if got := available(nil); len(got) != 1 || got[0].Name != "go" {
		t.Errorf("available(no assembly) = %v", got)
	}
	// A CPU with AVX2 only.
	if got := available(map[string]func([]byte) uint64{"avx2": Sum64Generic}); len(got) != 2 || got[0].Name != "avx2" {
		t.Errorf("available(avx2) = %v", got)
	}
}

func TestUseUnavailableReaderSaysWhy(t *testing.T) {
	goOnly := available(nil)
	_, err := lookup(goOnly, "avx512")
	if err == nil || !strings.Contains(err.Error(), "needs AVX-512F") || !strings.Contains(err.Error(), "one of go") {
		t.Errorf("Lookup(avx512) on a CPU without it: %v", err)
	}
	if _, err := lookup(goOnly, "sse9"); err == nil || !strings.Contains(err.Error(), "unknown: choose auto or one of avx512, avx2, go") {
		t.Errorf("Lookup(sse9): %v", err)
	}
}
