package job

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/template"
)

// A capture replayed with its own timing faster than the path sends it
// (a pcapfile capture of a flat-out run: records nanoseconds apart) read
// "target 3.9 G pps, achieved 0.00 %" and nothing else. The report says
// what the capture asked for, what the path kept, and what to give
// instead; a replay that kept the pace, or a stream at a rate, gets no
// such note.
func TestCaptureTimingNote(t *testing.T) {
	replay := &template.Spec{Streams: []template.Stream{{Timing: &template.Timing{Original: true}}}}
	rated := &template.Spec{Streams: []template.Stream{{Timing: &template.Timing{}}}}
	for _, c := range []struct {
		name        string
		spec        *template.Spec
		s           Spec
		target, pps float64
		want, not   []string
	}{
		{"a third of the pace", replay, Spec{Pcap: "f.pcap"}, 16.65e6, 5.6e6,
			[]string{"asks for 16.650 M pps (a record every 60.1 ns on average)", "sent 5.600 M pps", "kept 33.6 % of that pace", "up to 1.284ms late", "--pcap-speed 0.2", "--rate 5Mpps", "--rate max"},
			[]string{"beyond any link", "template"}},
		{"already slowed", replay, Spec{Pcap: "f.pcap", PcapSpeed: 0.5}, 16.65e6, 5.6e6, []string{"--pcap-speed 0.1"}, nil},
		{"beyond any link", replay, Spec{Pcap: "f.pcap"}, 3.9e9, 3.9e6,
			[]string{"kept 1/1000 of that pace", "beyond any link (400 Gbit/s carries 568.182 M pps of these frames)", "every 0.256 ns", "--pcap-speed 0.001"}, nil},
		{"a template's replay", replay, Spec{}, 16.65e6, 5.6e6, []string{"slow the capture (speed: 0.2 in the template)", "(timing: rate and rate: 5Mpps)", "drop timing: and give --rate max"}, []string{"--pcap-speed", "--rate 5Mpps"}},
		{"kept the pace", replay, Spec{Pcap: "f.pcap"}, 1e6, 0.95e6, nil, []string{"capture"}},
		{"a stream at its rate", rated, Spec{}, 1e6, 0.5e6, nil, []string{"capture"}},
	} {
		rep := &report.Report{Frames: 10000, FrameSize: 64, TargetPPS: c.target, PPS: c.pps, AchievedRatio: c.pps / c.target, LatenessMaxNs: 1283617}
		got := captureTimingNote(rep, c.spec, c.s)
		if len(c.want) > 0 && got == "" {
			t.Errorf("%s: no note", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: note %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: note %q has %q", c.name, got, w)
			}
		}
	}
}
