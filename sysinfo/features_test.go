package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
)

func TestProbeResult(t *testing.T) {
	for _, c := range []struct {
		err    error
		status Status
		detail string
	}{
		{nil, Available, ""},
		{fmt.Errorf("socket: %w", fs.ErrPermission), Inconclusive, "needs CAP_NET_RAW"},
		{errors.New("setsockopt: protocol not available"), NotSupported, "setsockopt: protocol not available"},
	} {
		if s, d := ProbeResult(c.err, "needs CAP_NET_RAW"); s != c.status || d != c.detail {
			t.Errorf("ProbeResult(%v) = %s, %q; want %s, %q", c.err, s, d, c.status, c.detail)
		}
	}
}

func TestProbesCached(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	p := NewProbes(Probe{Name: "zz test probe", MinKernel: "0.0", Run: func() (Status, string) {
		mu.Lock()
		runs++
		mu.Unlock()
		return Inconclusive, "test"
	}}, Probe{Name: "aa other", MinKernel: "1.0", Run: func() (Status, string) { return Available, "" }})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs := p.Features()
			if len(fs) != 2 || fs[0].Name != "aa other" || fs[1].Name != "zz test probe" {
				t.Errorf("Features() = %+v, want both probes sorted by name", fs)
				return
			}
			if f := fs[1]; f.Status != Inconclusive || f.Detail != "test" || f.MinKernel != "0.0" {
				t.Errorf("probe result %+v", f)
			}
		}()
	}
	wg.Wait()
	if f, ok := p.Feature("zz test probe"); !ok || f.Status != Inconclusive {
		t.Errorf("Feature(zz test probe) = %+v, %v", f, ok)
	}
	if _, ok := p.Feature("missing"); ok {
		t.Error("Feature(missing) found a probe")
	}
	if runs != 1 {
		t.Fatalf("probe ran %d times, want once", runs)
	}
	// Another Probes value runs its probes again: nothing is cached per process.
	if NewProbes(p.probes...).Features(); runs != 2 {
		t.Fatalf("a second Probes reused the first one's results (runs %d)", runs)
	}
}

func TestRegisteredProbesAreACopy(t *testing.T) {
	ps := RegisteredProbes()
	n := len(ps)
	_ = append(ps, Probe{Name: "not registered"})
	if got := len(RegisteredProbes()); got != n {
		t.Fatalf("RegisteredProbes changed from %d to %d", n, got)
	}
}
