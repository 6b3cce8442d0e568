package job_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/job"
)

// yearGapCapture writes 4 records 1 ms apart, but the third a year after
// the second.
func yearGapCapture(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "gap.pcap")
	recs := testbed.Records(4, make([]byte, 60), 0, time.Millisecond)
	for i := 2; i < len(recs); i++ {
		recs[i].At += 365 * 24 * time.Hour
	}
	testbed.WritePcap(t, path, 65535, true, recs)
	return path
}

// A capture with a year-long gap replayed with its own timing waited a
// year in silence. The preparation pass knows every gap: without
// pcap_speed (or a template's speed:) the run is refused before sending,
// naming the record and the fixes; with a speed that leaves a long wait
// the report says so; with a rate the gaps do not matter.
func TestCaptureGapRefused(t *testing.T) {
	capture := yearGapCapture(t)
	s := job.NewSpec()
	s.Backend, s.Pcap = "null", capture
	err := job.Validate(s, job.Env{})
	var oe *job.OptionError
	if !errors.As(err, &oe) || oe.Field != "pcap" || !strings.Contains(oe.Reason, "record 3 of "+capture+" comes 365 days after the one before it") ||
		!strings.Contains(oe.Fix, "{pcap_speed}") || !strings.Contains(oe.Fix, "{rate}") {
		t.Fatalf("Validate = %v (%+v); want a pcap problem naming record 3 and the fixes", err, oe)
	}

	// A rate replaces the capture's timing: the gap does not matter.
	s.Rate = "10kpps"
	if rep, _ := noted(t, s, "comes"); rep.Frames != 4 {
		t.Errorf("at a rate: %d frames, want 4", rep.Frames)
	}

	// A speed given, and still hours of waiting: a note, before sending.
	s.Rate, s.PcapSpeed = "", 1000
	if err := job.Validate(s, job.Env{}); err != nil {
		t.Fatalf("with pcap_speed 1000: %v", err)
	}
	run, err := job.Start(t.Context(), s, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	run.Stop()
	<-run.Done()
	var note string
	if rep := run.Report(); rep != nil {
		for _, n := range rep.Notes {
			if strings.Contains(n, "record 3") {
				note = n
			}
		}
	}
	if !strings.Contains(note, "8h45m36s") || !strings.Contains(note, "sends nothing") {
		t.Errorf("with pcap_speed 1000: note %q; want the wait of record 3", note)
	}

	// A template's stream with timing: original and no speed.
	tmpl := filepath.Join(t.TempDir(), "t.wpg.yaml")
	os.WriteFile(tmpl, []byte("streams:\n  - name: replay\n    pcap: "+capture+"\n    timing: original\n"), 0o644)
	s = job.NewSpec()
	s.Backend, s.Template = "null", tmpl
	err = job.Validate(s, job.Env{})
	if !errors.As(err, &oe) || oe.Field != "template" || !strings.Contains(oe.Reason, "stream 0 (replay)") || !strings.Contains(oe.Reason, "record 3") || !strings.Contains(oe.Fix, "speed:") {
		t.Fatalf("template: Validate = %v (%+v); want a template problem naming the stream, the record and speed:", err, oe)
	}
}
