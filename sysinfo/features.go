package sysinfo

import (
	"sort"
	"sync"
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

var (
	probeMu  sync.Mutex
	probes   []Probe
	results  = map[string]Feature{}
	resultMu sync.Mutex
)

// RegisterProbe adds a probe; backends call it from init. Probes run
// only when Features is called, once each.
func RegisterProbe(p Probe) {
	probeMu.Lock()
	defer probeMu.Unlock()
	probes = append(probes, p)
}

// Features runs every registered probe (each once per process; the
// result is cached) and returns the results sorted by name.
func Features() []Feature {
	probeMu.Lock()
	ps := append([]Probe(nil), probes...)
	probeMu.Unlock()
	out := make([]Feature, 0, len(ps))
	for _, p := range ps {
		resultMu.Lock()
		f, ok := results[p.Name]
		resultMu.Unlock()
		if !ok {
			st, detail := p.Run()
			f = Feature{Name: p.Name, MinKernel: p.MinKernel, Status: st, Detail: detail}
			resultMu.Lock()
			results[p.Name] = f
			resultMu.Unlock()
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
