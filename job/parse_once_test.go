package job

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wpg-dev/wpg/template"
)

// A run without --rate reads its template once: the check of whether
// its streams keep their own schedules parsed the file a first time,
// and the frames a second (65,535 streams: 7 s of the 17 that wpg send
// took before its first frame).
func TestTemplateReadOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.wpg.yaml")
	if err := os.WriteFile(path, []byte("streams:\n  - {ipv4: {}, udp: {}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := 0
	loadTemplate = func(p string) (*template.Spec, error) { reads++; return template.Load(p) }
	defer func() { loadTemplate = template.Load }()
	for _, rate := range []string{"", "1kpps"} {
		reads = 0
		s := NewSpec()
		s.Backend, s.Template, s.Rate = "null", path, rate
		if err := Validate(s, Env{}); err != nil {
			t.Fatal(err)
		}
		if reads != 1 {
			t.Errorf("rate %q: the template was read %d times", rate, reads)
		}
	}
}
