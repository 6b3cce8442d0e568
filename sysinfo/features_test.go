package sysinfo

import "testing"

func TestFeaturesCached(t *testing.T) {
	runs := 0
	RegisterProbe(Probe{Name: "zz test probe", MinKernel: "0.0", Run: func() (Status, string) {
		runs++
		return Inconclusive, "test"
	}})
	for range 2 {
		found := false
		for _, f := range Features() {
			if f.Name == "zz test probe" {
				found = f.Status == Inconclusive && f.Detail == "test" && f.MinKernel == "0.0"
			}
		}
		if !found {
			t.Fatal("probe result missing")
		}
	}
	if runs != 1 {
		t.Fatalf("probe ran %d times, want once", runs)
	}
}
