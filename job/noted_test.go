package job_test

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
)

// noted runs s to its end and returns its report and the last of its
// notes that contains phrase ("" when none does); a run that could not
// start, or that left no report, ends the test.
func noted(t *testing.T, s job.Spec, phrase string) (*report.Report, string) {
	t.Helper()
	run, err := job.Start(t.Context(), s, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	rep := run.Report()
	if rep == nil {
		t.Fatalf("no report (%v)", run.Err())
	}
	var note string
	for _, n := range rep.Notes {
		if strings.Contains(n, phrase) {
			note = n
		}
	}
	return rep, note
}
