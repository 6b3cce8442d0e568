package job_test

import (
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/job"
)

// --count caps a run; a template's streams send their own counts (a
// replayed capture: one pass). send --pcap FILE --count 4000 loops a
// 2000-record capture, but the template the signed-capture note points
// to (pcap: FILE, signature: true) sent 2000 frames of --count 4000 and
// said nothing. The report says why the run ended short, and how to send
// more; a run that reached --count, or had none, gets no such note.
func TestCountShortOfTemplateCountsIsNoted(t *testing.T) {
	for _, c := range []struct {
		name  string
		count uint64
		want  bool
	}{{"short", 100, true}, {"reached", 5, false}, {"no count", 0, false}} {
		s := job.NewSpec()
		s.Backend, s.Count = "null", c.count
		s.TemplateText = "streams:\n  - name: ten\n    count: 10\n    ipv4: {src: 198.18.0.1, dst: 198.19.0.1}\n    udp: {src: 1, dst: 2}\n"
		rep, note := noted(t, s, "streams' own counts")
		if (note != "") != c.want {
			t.Fatalf("%s: note %q, want one: %v (notes %q)", c.name, note, c.want, rep.Notes)
		}
		if c.want && (!strings.Contains(note, "10 frames, before --count 100") || !strings.Contains(note, "count:")) {
			t.Errorf("%s: note %q", c.name, note)
		}
	}
}
