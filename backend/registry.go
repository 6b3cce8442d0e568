package backend

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/wpg-dev/wpg/internal/inputerr"
)

// Kind groups backends by what they reach: nothing (reference), a network
// interface, another local process, a device.
type Kind string

// Backend kinds.
const (
	KindReference Kind = "reference"
	KindNetwork   Kind = "network"
	KindLocal     Kind = "local"
	KindDevice    Kind = "device"
)

// Registration describes one backend.
type Registration struct {
	Name    string
	Kind    Kind
	Summary string
	// Open opens the backend for one job (see Instance); every backend
	// has a sending side.
	Open OpenFunc
	// Receives is true when the instance has a receiving side
	// (Instance.NewReceiver; `wpg recv --backend NAME`).
	Receives bool
	// Payload is true for paths that carry payload frames (local, device)
	// rather than network packets.
	Payload bool
	// SingleWorker is true when the path supports one worker only.
	SingleWorker bool
	// SingleWorkerWhy, when set, says why, as a clause that follows
	// "supports one worker only" (": a libpcap handle is one socket").
	SingleWorkerWhy string
	// NeedsPeer is true when a sender needs a receiving process (local
	// paths); `wpg bench` then starts one itself.
	NeedsPeer bool
	// Options names the backend-specific options this backend reads, on
	// either side, by their field names (see SpecificOptions). Setting any
	// other backend-specific option for this backend is an error that
	// names the backends reading it, so a new backend declares here every
	// such option it honours.
	Options []string
	// Check, when set, validates the options only this backend knows the
	// values of (--format, --recv-mode, …) before any worker starts: no
	// system calls, just the values, so that a bad one is a usage error and
	// not a failed run. Open checks them again.
	Check func(o Options) error
}

// SpecificOptions returns the names of the options that only some
// backends read, each its field's name in snake case, as job.Spec's JSON
// names it (Options.Net.RingDepth is "ring_depth", Options.Mem.RecvMode
// "recv_mode"; a client maps them to its own words, the CLI to --ring-depth);
// each Registration lists those it reads in Options. The rest (count,
// rate, workers, …) apply to every backend.
func SpecificOptions() []string {
	return []string{
		"interface", "ring_depth", "ring_bytes", "no_tx_ring", "no_rx_ring", "tx_copy", "qdisc_bypass",
		"queue", "xdp_mode", "busy_poll",
		"output", "format",
		"fifo", "vmsplice", "pipe_size", "connect", "listen", "recv_mode", "busy_wait", "slots",
		"device", "sync", "sync_mode",
		"dpdk_args",
	}
}

// Reads reports whether the backend reads the backend-specific option
// named option (a name from SpecificOptions).
func (r Registration) Reads(option string) bool {
	return slices.Contains(r.Options, option)
}

// Reading lists, sorted, the registered backends that read option.
func Reading(option string) []string {
	var names []string
	for _, r := range All() {
		if r.Reads(option) {
			names = append(names, r.Name)
		}
	}
	return names
}

var (
	mu       sync.RWMutex
	registry = map[string]Registration{}
	absent   = map[string]string{} // name → why this build lacks it
)

// Register adds a backend; it panics on a duplicate name (a programming error).
func Register(r Registration) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic("backend: duplicate registration of " + r.Name)
	}
	registry[r.Name] = r
}

// RegisterAbsent records a backend that this build leaves out (cgo code
// behind a build tag), with why as a clause that says how to get it ("it
// is cgo code behind a build tag: build wpg with -tags pcap …"): Known
// lists it, Lookup refuses it with why. Package all calls it beside the
// build-tagged import that leaves the backend out.
func RegisterAbsent(name, why string) {
	mu.Lock()
	defer mu.Unlock()
	absent[name] = why
}

// ErrUnknown is returned (wrapped) by Lookup for a name nobody registered.
var ErrUnknown = errors.New("unknown backend")

// Lookup returns the registration for name, or an error listing the
// backends that exist.
func Lookup(name string) (Registration, error) {
	mu.RLock()
	r, ok := registry[name]
	why, known := absent[name]
	mu.RUnlock()
	if !ok {
		names := strings.Join(Names(), ", ")
		if known {
			return Registration{}, inputerr.Worded(ErrUnknown, fmt.Sprintf("%s %q in this build: %s; this build has %s (--backend NAME)", ErrUnknown, name, why, names),
				"is not in this build: "+why, "choose one of "+names)
		}
		return Registration{}, inputerr.Worded(ErrUnknown, fmt.Sprintf("%s %q: choose one of %s (--backend NAME)", ErrUnknown, name, names),
			"is not a backend of wpg", "choose one of "+names)
	}
	return r, nil
}

// Known lists, sorted, every backend name wpg documents: the registered
// ones and those this build leaves out (RegisterAbsent). Help text and
// docs/cli.md list these, so that they read the same for every build of
// wpg; Names lists what this build has.
func Known() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry)+len(absent))
	for n := range registry {
		names = append(names, n)
	}
	for n := range absent {
		if _, ok := registry[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns every registration, sorted by name.
func All() []Registration {
	var out []Registration
	for _, n := range Names() {
		r, _ := Lookup(n)
		out = append(out, r)
	}
	return out
}
