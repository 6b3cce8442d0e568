package sys_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// kernelDoor lists the packages that may import unsafe,
// golang.org/x/sys/unix or cgo ("C"), each with the imports it may use.
// internal/sys holds the shared primitives (owned descriptors, mappings,
// errno helpers, clocks); a protocol that only one backend speaks lives
// in that backend's internal package, built on those primitives.
var kernelDoor = map[string][]string{
	"internal/sys":                      {"unsafe", "golang.org/x/sys/unix"},
	"backend/afpacket/internal/tpacket": {"unsafe", "golang.org/x/sys/unix"}, // TPACKET_V3 rings, sendmmsg/recvmmsg
	"backend/afxdp/internal/xsk":        {"unsafe", "golang.org/x/sys/unix"}, // AF_XDP UMEM (setsockopt XDP_UMEM_REG, mbind), mmap'd rings, sendto kicks
	// The cgo boundaries of the backends behind build tags (their other
	// files are pure Go; the test lists them with the tags):
	"backend/dpdk/internal/rte":     {"C", "unsafe"}, // -tags dpdk: EAL, ports, mbuf pools, one crossing per burst
	"backend/pcap/internal/libpcap": {"C", "unsafe"}, // -tags pcap: pcap_inject of a batch from C memory
}

// doorImports are the imports that open the door to the kernel.
var doorImports = map[string]bool{"unsafe": true, "golang.org/x/sys/unix": true, "C": true}

// TestOneDoorToTheKernel enforces the allow-list kernelDoor: no other
// package of the module imports unsafe, golang.org/x/sys/unix or C, and
// a listed package uses only the imports listed for it.
func TestOneDoorToTheKernel(t *testing.T) {
	const module = "github.com/wpg-dev/wpg/"
	// With the cgo backends' tags (and cgo on, so that their files are
	// listed), every file of the module is looked at.
	list := exec.Command("go", "list", "-e", "-tags", "pcap,dpdk", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...")
	list.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rel := strings.TrimPrefix(f[0], module)
		allowed := map[string]bool{}
		for _, imp := range kernelDoor[rel] {
			allowed[imp] = true
		}
		if _, ok := kernelDoor[rel]; ok {
			seen[rel] = true
		}
		for _, imp := range f[1:] {
			if doorImports[imp] && !allowed[imp] {
				t.Errorf("%s imports %s: use the primitives of internal/sys, or add the package to kernelDoor (internal/sys/door_test.go) with the reason", f[0], imp)
			}
		}
	}
	for rel := range kernelDoor {
		if !seen[rel] {
			t.Errorf("kernelDoor lists %s, which go list does not find: remove it from the list", rel)
		}
	}
}

// TestMonotonicNsIsClockMonotonic checks the vDSO read against the
// system call: the two must agree (they are the same clock).
func TestMonotonicNsIsClockMonotonic(t *testing.T) {
	a := sys.MonotonicNs()
	b := sys.MonotonicSyscallNs()
	c := sys.MonotonicNs()
	if b < a || b > c {
		t.Fatalf("CLOCK_MONOTONIC syscall %d not between vDSO reads %d and %d", b, a, c)
	}
}
