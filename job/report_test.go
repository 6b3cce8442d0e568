package job

import (
	"encoding/json"
	"testing"

	"github.com/wpg-dev/wpg/report"
)

// A finished run's failed check is typed: the receiver's verification
// first, then the fail-under rate check.
func TestCheckOutcomeIsTyped(t *testing.T) {
	ratio := 0.9
	s := Spec{FailUnder: &ratio}
	cases := []struct {
		name string
		rep  report.Report
		want string
	}{
		{"passes", report.Report{Frames: 10, TargetPPS: 100, AchievedRatio: 0.95}, ""},
		{"rate", report.Report{Frames: 10, TargetPPS: 100, AchievedRatio: 0.5, Rate: "100pps"}, report.CheckRate},
		{"lost", report.Report{Frames: 10, Verification: json.RawMessage(`{"frames": 8, "lost": 2}`)}, report.CheckVerification},
		{"tail never arrived", report.Report{Frames: 10, Verification: json.RawMessage(`{"frames": 8}`)}, report.CheckVerification},
		{"all arrived", report.Report{Frames: 10, Verification: json.RawMessage(`{"frames": 10}`)}, ""},
	}
	for _, c := range cases {
		got := checkOutcome(s, &c.rep)
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%s: %v, want none", c.name, got)
		case c.want != "" && (got == nil || got.Check != c.want):
			t.Errorf("%s: %+v, want the %s check", c.name, got, c.want)
		}
	}
}
