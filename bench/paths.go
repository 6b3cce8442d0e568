package bench

import (
	"os"
	"slices"

	"github.com/wpg-dev/wpg/job"
)

// Group says what a row is compared with.
type Group string

// Groups of rows.
const (
	// Reference rows are the yardsticks: null (the generator alone) and
	// memcpy (a copy in one process).
	Reference Group = "reference"
	// Local rows move payload frames between two processes; their ratio
	// is to memcpy.
	Local Group = "local"
	// Network rows send packets through an interface (a veth pair in a
	// private namespace); their ratio is to null.
	Network Group = "network"
)

// Path is one row of the matrix: a backend and the options of one variant.
type Path struct {
	// Name is the row's label, as a user would type the variant
	// ("pipe --vmsplice").
	Name string
	// Backend is the job.Spec backend.
	Backend string
	Group   Group
	// Net is true for paths that send through a network interface (the
	// matrix's veth pair). Network rows and the null reference are.
	Net bool
	// SmallOnly is true for paths that carry packets (at most an MTU):
	// they run at the small size only.
	SmallOnly bool
	// Tune applies the variant's options to the spec; nil for the
	// defaults.
	Tune func(*job.Spec)
	// Available, when set, says why this host cannot run the path ("" when
	// it can), beyond the backend being in the build.
	Available func() string
}

// Paths lists the matrix: every row wpg knows, references first (a new
// slice each call).
func Paths() []Path { return slices.Clone(paths) }

// paths is the matrix. Adding a row (a new backend, a new variant) is one
// entry here; a row whose backend is not in this build is listed as
// skipped.
var paths = []Path{
	{Name: "null", Backend: "null", Group: Reference, Net: false, SmallOnly: true},
	{Name: "memcpy", Backend: "memcpy", Group: Reference},
	{Name: "pipe", Backend: "pipe", Group: Local},
	{Name: "pipe --vmsplice", Backend: "pipe", Group: Local, Tune: func(s *job.Spec) { s.Vmsplice = true }},
	{Name: "shm", Backend: "shm", Group: Local},
	{Name: "shm --recv-mode copy", Backend: "shm", Group: Local, Tune: func(s *job.Spec) { s.RecvMode = "copy" }},
	{Name: "cma", Backend: "cma", Group: Local},
	{Name: "unix", Backend: "unix", Group: Local},
	{Name: "xpmem", Backend: "xpmem", Group: Local, Available: func() string {
		if _, err := os.Stat("/dev/xpmem"); err != nil {
			return "no /dev/xpmem (the xpmem kernel module is not loaded)"
		}
		return ""
	}},
	{Name: "afpacket", Backend: "afpacket", Group: Network, Net: true, SmallOnly: true},
	{Name: "afpacket --qdisc-bypass", Backend: "afpacket", Group: Network, Net: true, SmallOnly: true, Tune: func(s *job.Spec) { s.QdiscBypass = true }},
	{Name: "afxdp", Backend: "afxdp", Group: Network, Net: true, SmallOnly: true},
}
