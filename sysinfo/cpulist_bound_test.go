package sysinfo

import (
	"strings"
	"testing"
)

// A bound is checked before a range is expanded: "0-99999999" must be
// refused at once, not expanded into gigabytes.
func TestParseCPUListBound(t *testing.T) {
	for _, s := range []string{"0-99999999", "3", "1,4", "0-2147483647"} {
		if _, err := ParseCPUListMax(s, 2); err == nil || !strings.Contains(err.Error(), "outside CPUs 0-2") {
			t.Errorf("ParseCPUListMax(%q, 2): %v, want an error naming CPUs 0-2", s, err)
		}
	}
	got, err := ParseCPUListMax("0-2", 2)
	if err != nil || len(got) != 3 {
		t.Errorf("ParseCPUListMax(0-2, 2) = %v, %v", got, err)
	}
	if _, err := ParseCPUList("0-99999999"); err == nil {
		t.Errorf("ParseCPUList(0-99999999) accepted (above MaxCPU %d)", MaxCPU)
	}
}
