package job_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/wpg-dev/wpg/backend/null"
	_ "github.com/wpg-dev/wpg/backend/pcapfile"
	_ "github.com/wpg-dev/wpg/backend/shm"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/peer/peertest"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/template"
)

// TestMain lets the test binary act as the shm run's receiver (`wpg recv`).
func TestMain(m *testing.M) { peertest.Main(m) }

// outcome is what a --count run must give whatever else runs beside it.
type outcome struct {
	Frames, Bytes uint64
	Stop          string
	Received      uint64 // the receiver's frames (shm)
	FileBytes     int64  // the capture file's size (pcapfile)
}

func outcomeOf(t *testing.T, spec job.Spec, rep *report.Report) outcome {
	t.Helper()
	o := outcome{Frames: rep.Frames, Bytes: rep.Bytes, Stop: rep.Stop}
	if rep.Error != "" || rep.Failed != nil {
		t.Fatalf("%s: error %q, failed check %v", spec.BackendName(), rep.Error, rep.Failed)
	}
	if len(rep.Verification) > 0 {
		var v struct{ Frames uint64 }
		if err := json.Unmarshal(rep.Verification, &v); err != nil {
			t.Fatal(err)
		}
		o.Received = v.Frames
	}
	if spec.Output != "" {
		st, err := os.Stat(spec.Output)
		if err != nil {
			t.Fatal(err)
		}
		o.FileBytes = st.Size()
	}
	return o
}

// threeSpecs are a paced null run, a pcapfile run into dir and an shm run
// with its own receiver process, each pinned to its own allowed CPU
// (wrapping around where there are fewer than three).
func threeSpecs(t *testing.T, dir string) []job.Spec {
	allowed, err := sys.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpu := func(i int) string { return job.FormatCPUList([]int{allowed[i%len(allowed)]}) }
	null := job.NewSpec()
	null.Rate, null.Count, null.Cores = "20kpps", 2000, cpu(0)
	pcap := job.NewSpec()
	pcap.Backend, pcap.Output, pcap.Count, pcap.Cores = "pcapfile", filepath.Join(dir, "out.pcap"), 5000, cpu(1)
	shm := job.NewSpec()
	shm.Backend, shm.Size, shm.Count, shm.StartReceiver, shm.Cores = "shm", "4KiB", 3000, true, cpu(2)
	return []job.Spec{null, pcap, shm}
}

func testEnv() job.Env { return job.Env{Launcher: peertest.Launch} }

// Issue #10: three jobs in one process at once (null, pcapfile, shm with
// its peer), each on its own CPU, give each the report it gives alone,
// while a fourth goroutine polls their snapshots. Run it with -race.
func TestThreeJobsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Alone, one after the other.
	var alone []outcome
	for _, spec := range threeSpecs(t, t.TempDir()) {
		run, err := job.Start(ctx, spec, testEnv())
		if err != nil {
			t.Fatalf("%s: %v", spec.BackendName(), err)
		}
		alone = append(alone, outcomeOf(t, spec, run.Report()))
	}

	// Together.
	specs := threeSpecs(t, t.TempDir())
	runs := make([]*job.Run, len(specs))
	for i, spec := range specs {
		run, err := job.Start(ctx, spec, testEnv())
		if err != nil {
			t.Fatalf("%s: %v", spec.BackendName(), err)
		}
		runs[i] = run
	}
	var wg sync.WaitGroup
	polls := 0
	wg.Add(1)
	go func() { // the fourth goroutine
		defer wg.Done()
		last := make([]uint64, len(runs))
		for {
			done := 0
			for i, r := range runs {
				s := r.Snapshot()
				if s.Frames < last[i] {
					t.Errorf("%s: snapshot frames went back from %d to %d", specs[i].BackendName(), last[i], s.Frames)
				}
				last[i] = s.Frames
				if len(s.Workers) != 1 {
					t.Errorf("%s: snapshot has %d workers, want 1", specs[i].BackendName(), len(s.Workers))
				}
				if s.Done {
					done++
				}
			}
			polls++
			if done == len(runs) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for i, r := range runs {
		if got := outcomeOf(t, specs[i], r.Report()); got != alone[i] {
			t.Errorf("%s: together %+v, alone %+v", specs[i].BackendName(), got, alone[i])
		}
	}
	wg.Wait()
	t.Logf("%d snapshot rounds; outcomes %+v", polls, alone)
	for i, o := range alone {
		if o.Frames != specs[i].Count || o.Stop != "count" {
			t.Errorf("%s: %+v, want %d frames and stop count", specs[i].BackendName(), o, specs[i].Count)
		}
	}
	if alone[2].Received != specs[2].Count {
		t.Errorf("shm receiver saw %d frames, want %d", alone[2].Received, specs[2].Count)
	}
}

// Validate returns every problem at once, each an OptionError on a JSON
// field name.
func TestValidateEveryProblem(t *testing.T) {
	spec := job.NewSpec()
	spec.Workers, spec.Batch, spec.Wait, spec.QdiscBypass = 0, 0, "spin", true
	err := job.Validate(spec, job.Env{})
	ps := job.AsProblems(err)
	fields := map[string]bool{}
	for _, p := range ps {
		fields[p.Field] = true
	}
	for _, f := range []string{"workers", "batch", "wait", "qdisc_bypass"} {
		if !fields[f] {
			t.Errorf("no problem with %s in %v", f, err)
		}
	}
	var oe *job.OptionError
	if !errors.As(err, &oe) || oe.Field != "workers" {
		t.Fatalf("errors.As: %v, %+v", err, oe)
	}
	if got := oe.Error(); got != "workers 0: is outside 1 to 256 (the documented limit; more threads than CPUs only take turns); give 1 to 256" {
		t.Errorf("Error() = %q", got)
	}
	if err := job.Validate(job.NewSpec(), job.Env{}); err != nil {
		t.Errorf("the default spec: %v", err)
	}
}

// OptionError names other fields the caller's way.
func TestOptionErrorFormat(t *testing.T) {
	e := &job.OptionError{Field: "output", Reason: "is needed: backend pcapfile writes a capture file", Fix: "add {output} FILE.pcap"}
	if got := e.Error(); got != "output is needed: backend pcapfile writes a capture file; add output FILE.pcap" {
		t.Errorf("Error() = %q", got)
	}
	flag := func(f string) string { return "--" + f }
	if got := e.Format(flag, flag); got != "--output is needed: backend pcapfile writes a capture file; add --output FILE.pcap" {
		t.Errorf("Format = %q", got)
	}
	cause := &job.OptionError{Field: "template", Err: errors.New("t.wpg.yaml:3:1: bad")}
	if got := cause.Format(flag, flag); got != "t.wpg.yaml:3:1: bad" {
		t.Errorf("Format of a cause = %q", got)
	}
}

// The Env's logger hears a run start and end; nothing else is written.
func TestEnvLogger(t *testing.T) {
	var buf bytes.Buffer
	env := job.Env{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	spec := job.NewSpec()
	spec.Count = 100
	run, err := job.Start(context.Background(), spec, env)
	if err != nil {
		t.Fatal(err)
	}
	if rep := run.Report(); rep.Frames != 100 {
		t.Fatalf("%d frames", rep.Frames)
	}
	for _, w := range []string{"run started", "run ended", "frames=100", "stop=count"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("log lacks %q: %s", w, buf.String())
		}
	}
}

// A template may come as text (a server's form) instead of a path.
func TestTemplateText(t *testing.T) {
	spec := job.NewSpec()
	spec.TemplateText, spec.Count = string(template.DefaultYAML()), 10
	run, err := job.Start(context.Background(), spec, job.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := run.Report(); rep.Frames != 10 || rep.Stop != "count" {
		t.Fatalf("%d frames, stop %q", rep.Frames, rep.Stop)
	}
	spec.TemplateText = "streams: [\n"
	var oe *job.OptionError
	if err := job.Validate(spec, job.Env{}); !errors.As(err, &oe) || oe.Field != "template" {
		t.Fatalf("bad template text: %v", err)
	}
}
