package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// matrixDoc is the part of `wpg bench --json` (no --backend) these tests read.
type matrixDoc struct {
	Schema          string  `json:"schema"`
	Repeat          int     `json:"repeat"`
	DurationSeconds float64 `json:"duration_seconds"`
	Tables          []struct {
		Size int64 `json:"size"`
		Rows []struct {
			Rank  int     `json:"rank"`
			Path  string  `json:"path"`
			Group string  `json:"group"`
			PPS   float64 `json:"pps"`
			Runs  []any   `json:"runs"`
		} `json:"rows"`
		Advice string `json:"advice"`
	} `json:"tables"`
	Skipped []struct {
		Path, Reason string
	} `json:"skipped"`
	Noise struct {
		Verdict, Summary string
	} `json:"noise"`
	Notes      []string `json:"notes"`
	Provenance struct {
		Version     string   `json:"version"`
		CommandLine []string `json:"command_line"`
		Start       string   `json:"start"`
		Host        string   `json:"host"`
	} `json:"provenance"`
}

// ownNamespaces lists the network namespaces of wpg process pid.
func ownNamespaces(pid int) []string {
	m, _ := filepath.Glob("/run/netns/wpg-" + strconv.Itoa(pid) + "-*")
	return m
}

// TestBenchMatrixQuick: `wpg bench --quick --json` with no backend ranks
// the paths at 64 B and 1 MiB, three runs each, with references, a noise
// verdict and provenance; as root the network rows are there too and no
// namespace is left behind. Its planned length (cells × repeats × run
// length) stays under 30 s.
func TestBenchMatrixQuick(t *testing.T) {
	cmd := exec.Command(testbed.Wpg(t), "bench", "--quick", "--json")
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var d matrixDoc
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if d.Schema != "wpg.bench/v1" || d.Repeat != 3 || d.DurationSeconds != 0.2 {
		t.Fatalf("schema %q, repeat %d, duration %v", d.Schema, d.Repeat, d.DurationSeconds)
	}
	cells := 0
	for _, tb := range d.Tables {
		cells += len(tb.Rows)
	}
	if planned := float64(cells*d.Repeat) * d.DurationSeconds; planned >= 30 {
		t.Errorf("quick matrix plans %.1f s of runs", planned)
	}
	if len(d.Tables) != 2 || d.Tables[0].Size != 64 || d.Tables[1].Size != 1<<20 {
		t.Fatalf("tables %+v", d.Tables)
	}
	seen := map[string]bool{}
	for _, tb := range d.Tables {
		for i, r := range tb.Rows {
			seen[r.Path] = true
			if r.Rank != i+1 || len(r.Runs) != 3 || (i > 0 && r.PPS > tb.Rows[i-1].PPS) {
				t.Errorf("size %d row %d: %+v", tb.Size, i, r)
			}
		}
		if tb.Advice == "" {
			t.Errorf("size %d: no advice", tb.Size)
		}
	}
	for _, p := range []string{"null", "memcpy", "pipe", "pipe --vmsplice", "shm", "shm --recv-mode copy", "cma", "unix"} {
		if !seen[p] {
			t.Errorf("no row %q (skipped: %+v)", p, d.Skipped)
		}
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{"afpacket", "afpacket --qdisc-bypass"} {
			if !seen[p] {
				t.Errorf("running as root, no row %q (skipped: %+v)", p, d.Skipped)
			}
		}
	}
	if d.Noise.Verdict == "" || d.Noise.Summary == "" {
		t.Errorf("no noise verdict: %+v", d.Noise)
	}
	p := d.Provenance
	if _, err := time.Parse(time.RFC3339, p.Start); err != nil || p.Host == "" || !strings.HasPrefix(p.Version, "wpg ") || strings.Join(p.CommandLine, " ") != "wpg bench --quick --json" {
		t.Errorf("provenance %+v", p)
	}
	if left := ownNamespaces(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("namespaces left after a normal end: %v", left)
	}
}

// startMatrix starts the matrix as root and waits until its network
// namespace exists.
func startMatrix(t *testing.T, out *bytes.Buffer) (*exec.Cmd, string) {
	t.Helper()
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "ip", "iproute2")
	cmd := exec.Command(testbed.Wpg(t), "bench", "--duration", "2s", "--sizes", "64")
	cmd.Dir = t.TempDir()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for range 200 {
		if ns := ownNamespaces(cmd.Process.Pid); len(ns) == 1 {
			return cmd, filepath.Base(ns[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no namespace of wpg %d appeared: %s", cmd.Process.Pid, out.String())
	return nil, ""
}

// TestBenchMatrixCtrlC: Ctrl-C ends the matrix with the tables of what
// finished, says it was interrupted, and removes its namespace.
func TestBenchMatrixCtrlC(t *testing.T) {
	var out bytes.Buffer
	cmd, ns := startMatrix(t, &out)
	time.Sleep(3 * time.Second) // past the first cell
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v after Ctrl-C, want 1 (interrupted): %s", err, out.String())
	}
	if !strings.Contains(out.String(), "interrupted") || strings.Contains(out.String(), "context canceled") {
		t.Errorf("output does not say interrupted, or says it in Go's words:\n%s", out.String())
	}
	if _, err := os.Stat("/run/netns/" + ns); err == nil {
		t.Errorf("namespace %s left after Ctrl-C", ns)
	}
}

// TestBenchMatrixKill9: a matrix killed with SIGKILL leaves its namespace
// behind; the next run as root removes it (and its veth pair) and says so.
func TestBenchMatrixKill9(t *testing.T) {
	var out bytes.Buffer
	cmd, ns := startMatrix(t, &out)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	if _, err := os.Stat("/run/netns/" + ns); err != nil {
		t.Fatalf("namespace %s gone after kill -9 already: %v", ns, err)
	}
	outer := "wpg" + strconv.Itoa(cmd.Process.Pid) + "x"
	stdout, stderr, code := run(t, t.TempDir(), "bench", "--quick", "--repeat", "1", "--paths", "memcpy", "--sizes", "64")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat("/run/netns/" + ns); err == nil {
		t.Errorf("the next run left the stale namespace %s", ns)
	}
	if !strings.Contains(stdout, "removed 1 network namespace(s)") || !strings.Contains(stdout, ns) {
		t.Errorf("the next run does not say it removed %s:\n%s", ns, stdout)
	}
	links, _ := filepath.Glob("/sys/class/net/" + outer + "*")
	if len(links) > 0 {
		t.Errorf("veth ends left: %v", links)
	}
}

// intervalDoc is what the interval checks read of a report.
type intervalDoc struct {
	Frames    uint64 `json:"frames"`
	Bytes     uint64 `json:"bytes"`
	Lost      int64  `json:"lost"`
	Intervals []struct {
		Start, End    float64
		Frames, Bytes uint64
		Lost          *int64
	} `json:"intervals"`
	Provenance *struct{ Start, Host string } `json:"provenance"`
}

func checkIntervals(t *testing.T, name string, out []byte, loss bool) {
	t.Helper()
	var d intervalDoc
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("%s: %v: %s", name, err, out)
	}
	if len(d.Intervals) < 2 || d.Provenance == nil || d.Provenance.Host == "" {
		t.Fatalf("%s: %d intervals, provenance %v", name, len(d.Intervals), d.Provenance)
	}
	var f, b uint64
	var lost int64
	prev := 0.0
	for i, in := range d.Intervals {
		f += in.Frames
		b += in.Bytes
		if in.Lost != nil {
			lost += *in.Lost
		} else if loss {
			t.Errorf("%s: interval %d has no loss count", name, i)
		}
		if in.Start != prev || in.End < in.Start {
			t.Errorf("%s: interval %d spans %v–%v after %v", name, i, in.Start, in.End, prev)
		}
		prev = in.End
	}
	if f != d.Frames || b != d.Bytes || lost != d.Lost || d.Frames == 0 {
		t.Errorf("%s: intervals sum to %d frames, %d bytes, %d lost; the totals are %d, %d, %d", name, f, b, lost, d.Frames, d.Bytes, d.Lost)
	}
}

// TestIntervalsSumToTotals: --interval on send, bench and recv gives
// intervals[] whose frames, bytes (and, for recv, loss) add up to the
// report's totals; no capture file involved.
func TestIntervalsSumToTotals(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, args := range [][]string{
		{"send", "--backend", "null", "--duration", "1200ms", "--interval", "200ms", "--json"},
		{"bench", "--backend", "shm", "--size", "64KiB", "--duration", "1s", "--interval", "300ms", "--json"},
	} {
		out, errs, code := run(t, t.TempDir(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		checkIntervals(t, strings.Join(args[:3], " "), []byte(out), false)
	}
	// A pipe from wpg send into wpg recv --interval.
	send := exec.Command(wpg, "send", "--backend", "pipe", "--size", "1000", "--duration", "2500ms")
	recv := exec.Command(wpg, "recv", "--backend", "pipe", "--interval", "1s", "--json")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	send.Stdout, recv.Stdin = pw, pr
	var out, errb bytes.Buffer
	recv.Stdout, recv.Stderr = &out, &errb
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := send.Run(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := recv.Wait(); err != nil {
		t.Fatalf("recv: %v: %s", err, errb.String())
	}
	pr.Close()
	checkIntervals(t, "recv", out.Bytes(), true)
}

// TestHdrOut: --hdr-out writes HdrHistogram logs that hdrhistogram-go's
// own reader takes, with as many values as the run's report counts.
func TestHdrOut(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "lateness.hlog")
	out, errs, code := run(t, dir, "send", "--backend", "null", "--rate", "20kpps", "--duration", "500ms", "--hdr-out", log, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h := readHdr(t, log)
	var rep struct {
		P99 int64 `json:"p99_jitter"`
	}
	json.Unmarshal([]byte(out), &rep)
	if h.TotalCount() == 0 || rep.P99 == 0 {
		t.Fatalf("%d values in the log, p99 %d in the report", h.TotalCount(), rep.P99)
	}
	if _, errs, code := run(t, dir, "send", "--backend", "null", "--count", "10", "--hdr-out", log); code != 2 || !strings.Contains(errs, "--rate") {
		t.Errorf("--hdr-out flat out: exit %d, %s", code, errs)
	}
}

func readHdr(t *testing.T, path string) *hdrhistogram.Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := hdrhistogram.NewHistogramLogReader(f).NextIntervalHistogram()
	if err != nil || h == nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}

// TestBenchMatrixUnprivileged: without privileges the matrix runs the
// local paths (their receivers too) and lists the network rows as
// skipped, saying that they need root.
func TestBenchMatrixUnprivileged(t *testing.T) {
	testbed.RequireRoot(t) // to drop the privileges
	testbed.RequireTool(t, "setpriv", "util-linux")
	nobody := []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all"}
	out, errs, code := runAs(t, nobody, "bench", "--quick", "--repeat", "1", "--paths", "memcpy,shm,afpacket", "--sizes", "64", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d matrixDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(d.Tables) != 1 || len(d.Tables[0].Rows) != 3 {
		t.Fatalf("want memcpy and both shm rows: %+v", d.Tables)
	}
	skipped := 0
	for _, s := range d.Skipped {
		if strings.HasPrefix(s.Path, "afpacket") {
			skipped++
			if !strings.Contains(s.Reason, "root") {
				t.Errorf("%s skipped for %q", s.Path, s.Reason)
			}
		}
	}
	if skipped != 2 {
		t.Errorf("afpacket rows skipped: %d, want 2 (%+v)", skipped, d.Skipped)
	}
}
