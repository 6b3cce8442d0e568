package dpdk

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/inputerr"
)

// checkEALArgs refuses the EAL arguments that would end the process
// instead of initialising the EAL (--help prints and exits).
func checkEALArgs(args []string) error {
	for _, a := range args {
		switch a {
		case "-h", "--help":
			// Its fix is in its text: the Check's caller adds no other.
			return inputerr.WithFix(backend.Errorf("dpdk", "EAL argument %s prints the EAL's usage and exits the process: drop it from --dpdk-args (dpdk-testpmd --help lists the EAL options)", a), "drop "+a+" from --dpdk-args")
		}
	}
	return nil
}

// wantsHugepages reports whether the EAL arguments leave hugepages on
// (no --no-huge).
func wantsHugepages(args []string) bool {
	for _, a := range args {
		if a == "--no-huge" {
			return false
		}
	}
	return true
}

// freeHugepages sums free_hugepages over every hugepage size under
// sysRoot/kernel/mm/hugepages (sysRoot is "/sys" on a live system).
// It returns an error when the directory cannot be read (no hugetlbfs
// support: then the EAL says what it finds).
func freeHugepages(sysRoot string) (int64, error) {
	dir := filepath.Join(sysRoot, "kernel", "mm", "hugepages")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "hugepages-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "free_hugepages"))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil {
			total += n
		}
	}
	return total, nil
}

// hugepageError is the error for EAL arguments that ask for hugepages
// when none are free.
func hugepageError(args []string) error {
	what := fmt.Sprintf("the EAL arguments %q use", strings.Join(args, " "))
	if len(args) == 0 {
		what = "the EAL's defaults (no --dpdk-args) use"
	}
	return backend.Errorf("dpdk", "%s hugepages, and none are free (/sys/kernel/mm/hugepages/*/free_hugepages): reserve some, e.g. `echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages` (or dpdk-hugepages.py --setup 2G), or run without them: add --no-huge -m 512 to --dpdk-args (dpdk.eal_args)", what)
}

// portChoice is what -i names: a port id, or a device name.
type portChoice struct {
	id   int // -1: by name
	name string
}

func parsePort(s string) portChoice {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < 1<<16 {
		return portChoice{id: n}
	}
	return portChoice{id: -1, name: s}
}
