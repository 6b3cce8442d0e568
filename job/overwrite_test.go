package job_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/job"
)

// The output file may not be a file the run reads: wpg send --pcap
// cap.pcap --backend pcapfile -o cap.pcap truncated the capture when the
// worker created its output, and replayed 10 frames of 500 into what was
// left. The same for a template's pcap: stream and for the template, by
// any name (relative, through a symlink). The files stay as they were.
func TestOutputMayNotOverwriteAnInput(t *testing.T) {
	capture := onePcap(t)
	dir := filepath.Dir(capture)
	tpl := filepath.Join(dir, "rp.wpg.yaml")
	if err := os.WriteFile(tpl, []byte("streams:\n  - name: again\n    pcap: one.pcap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pcap")
	if err := os.Symlink(capture, link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(capture)
	for _, tc := range []struct {
		name, pcap, template, output, want string
	}{
		{"--pcap -o the same", capture, "", capture, "is the capture pcap replays"},
		{"through a symlink", capture, "", link, "is the capture pcap replays"},
		{"by another path", capture, "", filepath.Join(dir, ".", "..", filepath.Base(dir), "one.pcap"), "is the capture pcap replays"},
		{"template's stream", "", tpl, capture, "is the capture stream 0 (again) replays"},
		{"the template", "", tpl, tpl, "is the template file"},
		{"another file", capture, "", filepath.Join(dir, "copy.pcap"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := job.NewSpec()
			s.Backend, s.Pcap, s.Template, s.Output = "pcapfile", tc.pcap, tc.template, tc.output
			err := job.Validate(s, job.Env{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var oe *job.OptionError
			if !errors.As(err, &oe) || oe.Field != "output" || !strings.Contains(oe.Error(), tc.want) || !strings.Contains(oe.Error(), "another file") {
				t.Fatalf("Validate = %v, want an output problem with %q", err, tc.want)
			}
			// Start refuses it the same way, before a worker opens the file.
			if run, err := job.Start(t.Context(), s, job.Env{}); err == nil {
				run.Stop()
				<-run.Done()
				t.Fatal("Start accepted it")
			}
		})
	}
	if after, _ := os.ReadFile(capture); !bytes.Equal(before, after) {
		t.Fatalf("the capture changed: %d bytes before, %d after", len(before), len(after))
	}
}
