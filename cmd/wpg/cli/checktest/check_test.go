// Package checktest runs the CLI over fake backends registered only in
// this test binary (so that they stay out of docs/cli.md): a local path
// whose receiver reports damage, and one that stops taking frames.
package checktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/cmd/wpg/cli"
)

// fakeSender hands out buffers and drops what is committed. It stops
// taking frames after stallAfter frames (0: never), and reports the
// verification that report returns for the number of frames committed.
type fakeSender struct {
	slab       []byte
	maxFrame   int
	sent       uint64
	stallAfter uint64
	report     func(sent uint64) string
}

func (s *fakeSender) Reserve(bufs [][]byte) (int, error) {
	if s.stallAfter > 0 && s.sent >= s.stallAfter {
		return 0, nil
	}
	n := min(len(bufs), len(s.slab)/s.maxFrame)
	for i := range n {
		bufs[i] = s.slab[i*s.maxFrame : (i+1)*s.maxFrame]
	}
	return n, nil
}

func (s *fakeSender) Commit(lens []int) (int, error) {
	s.sent += uint64(len(lens))
	return len(lens), nil
}

func (s *fakeSender) MaxFrame() int { return s.maxFrame }
func (s *fakeSender) Info() backend.Info {
	return backend.Info{Backend: "fake", Mode: "drop", NUMANode: -1}
}
func (s *fakeSender) Flush() error { return nil }
func (s *fakeSender) Close() error { return nil }

// PeerReport is what a local path's own receiver would send back.
func (s *fakeSender) PeerReport() []byte {
	if s.report == nil {
		return nil
	}
	return []byte(s.report(s.sent))
}

func register(name string, stallAfter uint64, report func(uint64) string) {
	backend.Register(backend.Registration{
		Name: name, Kind: backend.KindLocal, Summary: "test: " + name, Payload: true,
		Open: backend.Factories{Sender: func(_ context.Context, o backend.Options) (backend.Sender, error) {
			return &fakeSender{slab: make([]byte, o.Batch*o.MaxFrame), maxFrame: o.MaxFrame, stallAfter: stallAfter, report: report}, nil
		}}.Open,
	})
}

func init() {
	recvReport := func(lost, dup, corrupt uint64) func(uint64) string {
		return func(sent uint64) string {
			return fmt.Sprintf(`{"schema":"wpg.recv/v1","frames":%d,"lost":%d,"duplicated":%d,"reordered":0,"corrupted":%d}`, sent-lost, lost, dup, corrupt)
		}
	}
	register("fake-intact", 0, recvReport(0, 0, 0))
	register("fake-lossy", 0, recvReport(3, 0, 0))
	register("fake-corrupting", 0, recvReport(0, 0, 2))
	register("fake-duplicating", 0, recvReport(0, 5, 0))
	register("fake-stalling", 10, nil)
}

func wpg(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := cli.Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// Issue #17 item 20: a bench whose own receiver reports loss, corruption or
// duplicates exits 3 with a plain line in the report; an intact one exits 0.
func TestBenchVerificationFailureExit3(t *testing.T) {
	for _, c := range []struct {
		backend string
		code    int
		want    string
	}{
		{"fake-intact", 0, ""},
		{"fake-lossy", cli.ExitCheckFailed, "3 lost"},
		{"fake-corrupting", cli.ExitCheckFailed, "2 corrupted"},
		{"fake-duplicating", cli.ExitCheckFailed, "5 duplicated"},
	} {
		t.Run(c.backend, func(t *testing.T) {
			out, errs, code := wpg(t, "bench", "--backend", c.backend, "--count", "1000")
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s%s", code, c.code, out, errs)
			}
			if c.want == "" {
				if strings.Contains(out, "verification failed") {
					t.Fatalf("intact run says verification failed:\n%s", out)
				}
				return
			}
			for _, s := range []string{out, errs} {
				if !strings.Contains(s, "verification failed") || !strings.Contains(s, c.want) {
					t.Errorf("want a line saying verification failed (%s) in both report and error:\nreport:\n%s\nstderr: %s", c.want, out, errs)
				}
			}
			js, _, code := wpg(t, "bench", "--backend", c.backend, "--count", "1000", "--json")
			var rep struct{ Notes []string }
			if code != c.code || json.Unmarshal([]byte(js), &rep) != nil || !strings.Contains(strings.Join(rep.Notes, "\n"), "verification failed") {
				t.Errorf("--json: exit %d, notes %q", code, rep.Notes)
			}
		})
	}
}

// Issue #17 item 34: send --fail-under fails (exit 3) a paced run that
// missed its target, and passes one that met it.
func TestFailUnderExit3(t *testing.T) {
	// The path takes 10 frames and then nothing: far below 1 kpps.
	out, errs, code := wpg(t, "send", "--backend", "fake-stalling", "--rate", "1kpps", "--duration", "300ms", "--fail-under", "0.5")
	if code != cli.ExitCheckFailed || !strings.Contains(errs, "--fail-under 0.5") || !strings.Contains(out, "rate check failed") {
		t.Fatalf("exit %d, want %d with the reason: %s%s", code, cli.ExitCheckFailed, out, errs)
	}
	// Without --fail-under the same run is a success with a note.
	if _, errs, code := wpg(t, "send", "--backend", "fake-stalling", "--rate", "1kpps", "--duration", "300ms"); code != 0 {
		t.Fatalf("without --fail-under: exit %d: %s", code, errs)
	}
	// bench has it too.
	if _, errs, code := wpg(t, "bench", "--backend", "fake-stalling", "--rate", "1kpps", "--duration", "300ms", "--fail-under", "0.9"); code != cli.ExitCheckFailed {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
}
