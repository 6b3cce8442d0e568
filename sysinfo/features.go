package sysinfo

import (
	"sort"
	"sync"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Status is the outcome of a kernel feature probe.
type Status string

// Probe outcomes.
const (
	Available    Status = "available"
	NotSupported Status = "not supported"
	// Inconclusive means the probe could not tell, typically for lack of a
	// privilege; Detail says which.
	Inconclusive Status = "inconclusive"
)

// Feature is one probed kernel feature.
type Feature struct {
	Name      string `json:"name"`
	MinKernel string `json:"min_kernel"` // first Linux release that has it
	Status    Status `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

// Probe tests one feature on the running kernel.
type Probe struct {
	Name      string
	MinKernel string
	Run       func() (Status, string)
}

// ProbeResult is a probe's outcome for err, what trying the feature
// returned: Available for nil; Inconclusive for a permission error, with
// denied as the detail (what the probe needs, e.g. "needs CAP_NET_RAW to
// open a packet socket"); NotSupported with err's text otherwise.
func ProbeResult(err error, denied string) (Status, string) {
	switch {
	case err == nil:
		return Available, ""
	case sys.IsPermission(err):
		return Inconclusive, denied
	}
	return NotSupported, err.Error()
}

// registered is the table of probes the backends declare from init (as
// they register themselves with package backend). It is filled before
// main runs and only read afterwards; results are never cached here but
// in a Probes value.
var (
	registeredMu sync.Mutex
	registered   []Probe
)

// RegisterProbe declares a probe; backends call it from init. Probes run
// only through a Probes value (HostProbes), each at most once per value.
func RegisterProbe(p Probe) {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	registered = append(registered, p)
}

// RegisteredProbes returns the probes declared with RegisterProbe, in
// registration order.
func RegisteredProbes() []Probe {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	return append([]Probe(nil), registered...)
}

// Probes runs a fixed set of probes lazily, each at most once, and caches
// the results; it is safe for concurrent use. A job holds one in its
// environment; tests construct their own with NewProbes instead of
// touching a process-wide cache.
type Probes struct {
	probes []Probe
	once   []sync.Once
	result []Feature
}

// NewProbes returns a Probes over ps (copied).
func NewProbes(ps ...Probe) *Probes {
	return &Probes{
		probes: append([]Probe(nil), ps...),
		once:   make([]sync.Once, len(ps)),
		result: make([]Feature, len(ps)),
	}
}

// HostProbes returns a Probes over every registered probe of the running
// kernel.
func HostProbes() *Probes { return NewProbes(RegisteredProbes()...) }

func (p *Probes) run(i int) Feature {
	p.once[i].Do(func() {
		pr := p.probes[i]
		st, detail := pr.Run()
		p.result[i] = Feature{Name: pr.Name, MinKernel: pr.MinKernel, Status: st, Detail: detail}
	})
	return p.result[i]
}

// Feature returns the result of the probe called name, running it on the
// first call; ok is false when p has no such probe.
func (p *Probes) Feature(name string) (f Feature, ok bool) {
	for i, pr := range p.probes {
		if pr.Name == name {
			return p.run(i), true
		}
	}
	return Feature{}, false
}

// Features runs every probe of p that has not run yet and returns all
// results sorted by name.
func (p *Probes) Features() []Feature {
	out := make([]Feature, len(p.probes))
	for i := range p.probes {
		out[i] = p.run(i)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Features runs every registered probe on a fresh HostProbes and returns
// the results sorted by name. A caller that asks more than once keeps its
// own Probes (HostProbes) instead.
func Features() []Feature { return HostProbes().Features() }
