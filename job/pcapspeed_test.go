package job_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/job"
)

// A capture of one frame for the replay specs below (classic pcap, µs).
func onePcap(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "one.pcap")
	testbed.WritePcap(t, path, 65535, false, testbed.Records(1, make([]byte, 60), 0, 0))
	return path
}

// pcap_speed is checked: a factor from 0.001 to 1e6 (0: not given, 1), only with a
// capture, and not beside a rate that replaces the capture's timing.
func TestPcapSpeedProblems(t *testing.T) {
	capture := onePcap(t)
	for _, tc := range []struct {
		name       string
		pcap, rate string
		speed      float64
		want       string // in the problem's text; "" = valid
	}{
		{"twice as fast", capture, "", 2, ""},
		{"default", capture, "", 0, ""},
		{"negative", capture, "", -1, "a factor from 0.001 to 1e6"},
		{"NaN", capture, "", math.NaN(), "a factor from 0.001 to 1e6"},
		{"too large", capture, "", 1e7, "a factor from 0.001 to 1e6"},
		// Below a template's smallest speed: key, a one-second capture
		// would take over eleven days and its target read as one frame.
		{"too small", capture, "", 1e-9, "a factor from 0.001 to 1e6"},
		{"smallest", capture, "", 0.001, ""},
		{"largest", capture, "", 1e6, ""},
		{"with a rate", capture, "1kpps", 2, "which rate replaces"},
		{"without a capture", "", "", 2, "none is given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := job.NewSpec()
			s.Backend, s.Pcap, s.Rate, s.PcapSpeed = "null", tc.pcap, tc.rate, tc.speed
			err := job.Validate(s, job.Env{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var oe *job.OptionError
			if !errors.As(err, &oe) || oe.Field != "pcap_speed" || !strings.Contains(oe.Error(), tc.want) {
				t.Fatalf("Validate = %v, want a pcap_speed problem with %q", err, tc.want)
			}
		})
	}
}
