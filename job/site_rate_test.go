package job_test

import (
	"testing"

	"github.com/wpg-dev/wpg/job"
)

// TestSiteRate: Limits.Rate (wpg.toml send.rate) paces a run that gives
// no rate, in --rate's syntax; a rate given wins; a template whose
// streams keep their own schedules keeps them (a site's default never
// trips "rate does not apply"); a bad one is the rate's problem.
func TestSiteRate(t *testing.T) {
	timed := "streams:\n  - rate: 1kpps\n    count: 3\n    ipv4: {}\n    udp: {}\n"
	for _, c := range []struct {
		name, rate, site, tpl string
		want                  string
		pps                   float64
	}{
		{"site", "", "1mpps", "", "1Mpps", 1e6},
		{"given wins", "2kpps", "1mpps", "", "2kpps", 2e3},
		{"bits", "", "100mbit", "", "100Mbps", 100e6 / 512},
		{"timed template", "", "1mpps", timed, "per stream", 1500}, // 3 frames due over 2 ms
	} {
		s := job.NewSpec()
		s.Backend, s.Count, s.Rate, s.Limits.Rate, s.TemplateText = "null", 3, c.rate, c.site, c.tpl
		rep, _ := noted(t, s, "")
		if rep.Rate != c.want || rep.TargetPPS < c.pps*0.999 || rep.TargetPPS > c.pps*1.001 || rep.Frames != 3 {
			t.Errorf("%s: rate %q at %v pps, %d frames; want %q at %v", c.name, rep.Rate, rep.TargetPPS, rep.Frames, c.want, c.pps)
		}
	}
	s := job.NewSpec()
	s.Backend, s.Count, s.Limits.Rate = "null", 3, "10MBps"
	if ps := job.AsProblems(job.Validate(s, job.Env{})); len(ps) != 1 || ps[0].Field != "rate" {
		t.Errorf("a byte rate as the site's: %v", ps)
	}
}
