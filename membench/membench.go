package membench

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wpg-dev/wpg/units"
)

// Method is one way of moving a buffer from the exporting process to the
// importing one (or, for LocalCopy, within one process).
type Method string

// The methods, in the order the table shows them.
const (
	// LocalCopy copies between two buffers of one process: the memory
	// bandwidth reference.
	LocalCopy Method = "LOCAL-cpy"
	// SHMCopy maps the exporter's memfd and copies it out into a private buffer.
	SHMCopy Method = "SHM-cpy"
	// SHMDirect maps the exporter's memfd and reads it in place (no copy),
	// the stock-kernel analogue of XPMEMDirect.
	SHMDirect Method = "SHM-dir"
	// CMACopy pulls the exporter's private memory with process_vm_readv,
	// the stock-kernel analogue of XPMEMCopy.
	CMACopy Method = "CMA-cpy"
	// XPMEMCopy attaches the exporter's private memory through /dev/xpmem
	// and copies it out.
	XPMEMCopy Method = "XPMEM-cpy"
	// XPMEMDirect attaches the exporter's memory and reads it in place.
	XPMEMDirect Method = "XPMEM-dir"
	// Pipe has the exporter write the buffer into a pipe (enlarged to
	// /proc/sys/fs/pipe-max-size) and the importer read it.
	Pipe Method = "PIPE"
)

// allMethods is every method in table order.
var allMethods = []Method{LocalCopy, SHMCopy, SHMDirect, CMACopy, XPMEMCopy, XPMEMDirect, Pipe}

// AllMethods lists every method in table order (a new slice each call).
func AllMethods() []Method { return slices.Clone(allMethods) }

// Describe says in one line what the method measures.
func (m Method) Describe() string {
	switch m {
	case LocalCopy:
		return "copy() between two private buffers of one process"
	case SHMCopy:
		return "importer maps the exporter's memfd and copies it into a private buffer"
	case SHMDirect:
		return "importer maps the exporter's memfd and reads it in place"
	case CMACopy:
		return "importer pulls the exporter's private buffer with process_vm_readv"
	case XPMEMCopy:
		return "importer attaches the exporter's buffer through /dev/xpmem and copies it out"
	case XPMEMDirect:
		return "importer attaches the exporter's buffer through /dev/xpmem and reads it in place"
	case Pipe:
		return "exporter write(2)s the buffer into an enlarged pipe, importer read(2)s it"
	}
	return "unknown method"
}

// inPlace reports whether the method reads without copying.
func (m Method) inPlace() bool { return m == SHMDirect || m == XPMEMDirect }

// needsPeer reports whether the method needs the exporting process.
func (m Method) needsPeer() bool { return m != LocalCopy }

// ParseMethods parses a comma-separated list of method names
// (case-insensitive; "all" = every method).
func ParseMethods(s string) ([]Method, error) {
	var out []Method
	seen := map[Method]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.EqualFold(f, "all") {
			for _, m := range allMethods {
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
			continue
		}
		var found Method
		for _, m := range allMethods {
			if strings.EqualFold(f, string(m)) {
				found = m
			}
		}
		if found == "" {
			names := make([]string, len(allMethods))
			for i, m := range allMethods {
				names[i] = string(m)
			}
			return nil, fmt.Errorf("unknown method %q: choose from %s (or all)", f, strings.Join(names, ", "))
		}
		if !seen[found] {
			seen[found] = true
			out = append(out, found)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no methods given: --methods takes a comma-separated list such as SHM-dir,CMA-cpy")
	}
	return out, nil
}

// DefaultSizes lists the sizes measured by default, 4K … 1G (a new slice
// each call).
func DefaultSizes() []int64 {
	return []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 512 << 20, 1 << 30}
}

// MaxSize is the largest buffer size accepted (16 GiB).
const MaxSize = 16 << 30

// ParseSize parses a buffer size with the units every wpg command uses
// (package units: 4K = 4KiB = 4096, 4KB = 4000), from 1 byte to MaxSize.
func ParseSize(s string) (int64, error) {
	return units.ParseSizeIn(s, 1, MaxSize)
}

// ParseSizes parses a comma-separated list of sizes.
func ParseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			// the tables are keyed by size: a second run of it would
			// show the first one's figures twice
			return nil, fmt.Errorf("%s is given twice (%s): give each size once", strings.TrimSpace(f), FormatSize(n))
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no sizes given: --sizes takes a comma-separated list such as 4KiB,1MiB,1GiB")
	}
	return out, nil
}

// FormatSize prints a size exactly and briefly, as ParseSize reads it back:
// 4KiB, 64KiB, 1MiB, 1GiB, 1MB, or the number of bytes (100003B).
func FormatSize(n int64) string { return units.FormatSizeShort(n) }

// Config chooses what Run measures.
type Config struct {
	// Sizes in bytes (DefaultSizes when empty).
	Sizes []int64
	// Methods to run (AllMethods when empty). Methods this machine cannot
	// run (XPMEM without /dev/xpmem) are listed as not available.
	Methods []Method
	// Iters is the number of timed iterations per cell (default 5): the
	// first is cold, the rest warm.
	Iters int
	// MinBytes makes each warm iteration repeat the operation until at
	// least this many bytes have moved, so small sizes are timed over
	// many operations (default 64 MiB; negative = one operation per
	// iteration), and at most MaxOpsPerIteration times.
	MinBytes int64
	// Pin binds the importer to the last CPU this process may use and the
	// exporter to the first. The calling goroutine then stays locked to
	// its pinned OS thread after Run returns (the thread ends with it).
	Pin bool
	// HugePages asks for transparent huge pages (MADV_HUGEPAGE) on the
	// private buffers (not the memfd), which cuts the cold page-fault cost.
	HugePages bool
	// Reader selects the in-place reader ("auto", "avx512", "avx2", "go").
	Reader string
	// Copy selects the copy of the -cpy methods: "auto" (memread.Copy:
	// AVX-512 assembly where available) or "go" (the runtime's copy()).
	Copy string
	// PeerArgs is the command line that starts the exporting process; it
	// must call ServePeer. Default: this executable with
	// "membench --peer" (what the wpg binary understands).
	PeerArgs []string
	// PeerEnv, when not nil, is the peer's whole environment (as
	// exec.Cmd.Env: the caller appends to os.Environ() what it adds);
	// nil gives the peer this process's environment. Run itself never
	// reads the environment.
	PeerEnv []string
	// Progress, when set, is called after every finished cell.
	Progress func(r Result)
}

// MaxOpsPerIteration bounds the operations of one warm iteration: below
// 64 bytes, MinBytes would take tens of millions of system calls (CMA-cpy,
// PIPE) per iteration, minutes per cell, and an iteration is where a stop
// signal is seen.
const MaxOpsPerIteration = 1 << 20

func (c Config) withDefaults() Config {
	if len(c.Sizes) == 0 {
		c.Sizes = DefaultSizes()
	}
	if len(c.Methods) == 0 {
		c.Methods = AllMethods()
	}
	if c.Iters == 0 {
		c.Iters = 5
	}
	if c.MinBytes == 0 {
		c.MinBytes = 64 << 20
	}
	if c.Reader == "" {
		c.Reader = "auto"
	}
	return c
}

func (c Config) validate() error {
	if c.Iters < 1 || c.Iters > 1000 {
		return fmt.Errorf("iterations %d: want 1..1000 (--iters)", c.Iters)
	}
	for i, s := range c.Sizes {
		if s <= 0 || s > MaxSize {
			return fmt.Errorf("size %d: want 1 byte .. %s (--sizes)", s, FormatSize(MaxSize))
		}
		if slices.Contains(c.Sizes[:i], s) {
			return fmt.Errorf("size %d is given twice (--sizes): give each size once", s)
		}
	}
	return nil
}

// ErrVerification is wrapped by Run's error when an importer's checksum
// differed from the exporter's.
var ErrVerification = errors.New("membench: data verification failed")
