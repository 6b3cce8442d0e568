package membench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/wire"
)

func TestParseSizes(t *testing.T) {
	// KB = 1000, KiB = K = 1024, as every other wpg command reads sizes.
	got, err := ParseSizes("4K, 64KiB,1M,16MB,460800,1G,4KB")
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{4096, 65536, 1 << 20, 16e6, 460800, 1 << 30, 4000}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for _, bad := range []string{"", "0", "-4K", "1.5", "abc", "32G", "4X"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) succeeded", bad)
		}
	}
}

func TestParseMethods(t *testing.T) {
	got, err := ParseMethods("shm-dir,CMA-cpy,shm-dir")
	if err != nil || fmt.Sprint(got) != "[SHM-dir CMA-cpy]" {
		t.Fatalf("got %v, %v", got, err)
	}
	all, err := ParseMethods("all")
	if err != nil || len(all) != len(AllMethods()) {
		t.Fatalf("all: %v, %v", all, err)
	}
	if _, err := ParseMethods("rdma"); err == nil {
		t.Error("unknown method accepted")
	}
}

func TestFillSeedsDiffer(t *testing.T) {
	a, b := make([]byte, 4099), make([]byte, 4099)
	fill(a, 1)
	fill(b, 2)
	if memread.Sum64Generic(a) == memread.Sum64Generic(b) {
		t.Error("two seeds gave the same checksum")
	}
	c := make([]byte, 4099)
	fill(c, 1)
	if string(a) != string(c) {
		t.Error("fill is not deterministic")
	}
}

func TestSummarize(t *testing.T) {
	r := Result{Iterations: []Iteration{{GBps: 1}, {GBps: 4}, {GBps: 6}}}
	r.summarize()
	if r.ColdGBps != 1 || r.WarmGBps != 5 || r.BestGBps != 6 {
		t.Fatalf("%+v", r)
	}
}

func ExampleFormatSize() {
	for _, n := range []int64{4096, 65536, 1 << 20, 1 << 30, 460800, 100} {
		fmt.Print(FormatSize(n), " ")
	}
	fmt.Println()
	// Output: 4KiB 64KiB 1MiB 1GiB 450KiB 100B
}

func ExampleParseSizes() {
	sizes, _ := ParseSizes("4K,460800,1M,1G")
	fmt.Println(sizes)
	// Output: [4096 460800 1048576 1073741824]
}

// membench's messages travel in the peer protocol's framing: a request or
// reply of another kind or version is refused.
func TestProtoFraming(t *testing.T) {
	b, err := encodeRequest(request{Op: "alloc", Size: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := decodeRequest(b); err != nil || r.Op != "alloc" || r.Size != 4096 {
		t.Fatalf("decodeRequest = %+v, %v", r, err)
	}
	if _, err := decodeReply(b); err == nil {
		t.Fatal("a request was taken as a reply")
	}
	old, _ := wire.Encode(kindReply, protoVersion+1, reply{OK: true})
	if _, err := decodeReply(old); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("decodeReply of another version = %v", err)
	}
}

// TestSizesGivenTwice: a size given twice (4KiB and 4096) is refused: the
// tables are keyed by size, so both rows showed the first run's figures.
func TestSizesGivenTwice(t *testing.T) {
	if _, err := ParseSizes("4KiB,1MiB,4096"); err == nil || err.Error() != "4096 is given twice (4KiB): give each size once" {
		t.Errorf("ParseSizes: %v", err)
	}
	if err := (Config{Sizes: []int64{4096, 4096}, Iters: 2}).validate(); err == nil || !strings.Contains(err.Error(), "size 4096 is given twice") {
		t.Errorf("validate: %v", err)
	}
}

// TestRateFigures: a slow cell's rate keeps its digits (it read 0.000),
// and the warm span says what it averages.
func TestRateFigures(t *testing.T) {
	for v, want := range map[float64]string{0.00023: "0.00023", 0.005: "0.005", 12.345: "12.35", 0: "-"} {
		if got := fmtGBps(v); got != want {
			t.Errorf("fmtGBps(%v) = %q, want %q", v, got, want)
		}
	}
	for n, want := range map[int]string{1: "none (--iters 1", 2: "iteration 2", 5: "mean of iterations 2..5"} {
		if got := warmSpan(n); !strings.HasPrefix(got, want) {
			t.Errorf("warmSpan(%d) = %q, want %q…", n, got, want)
		}
	}
}
