package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// pcapRecords reads every record of a pcap file and fails when the file
// does not end on a whole record.
func pcapRecords(t *testing.T, path string) []gopacket.CaptureInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not a pcap file: %v", path, err)
	}
	var out []gopacket.CaptureInfo
	for {
		_, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v (the file must end on a whole record)", path, len(out)+1, err)
		}
		out = append(out, ci)
	}
}

// sendReport is the part of the JSON report these tests read.
type sendReport struct {
	Frames  uint64 `json:"frames"`
	Stop    string `json:"stop"`
	Error   string `json:"error"`
	Workers []struct {
		Frames uint64 `json:"frames"`
	} `json:"workers"`
}

func parseReport(t *testing.T, stdout string) sendReport {
	t.Helper()
	var r sendReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	return r
}

// TestCountBelowWorkersStops: --workers 4 --count 3 sends exactly 3
// frames and stops (a worker whose share was 0 once ran unlimited).
func TestCountBelowWorkersStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbed.Wpg(t), "send", "--backend", "null", "--workers", "4", "--count", "3", "--json")
	cmd.Dir = t.TempDir()
	stdout, stderr, code := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatal("wpg send --workers 4 --count 3 did not stop by itself")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, stdout)
	if r.Frames != 3 || r.Stop != "count" || len(r.Workers) != 4 {
		t.Fatalf("frames %d stop %s workers %d, want 3 frames, stop count, 4 workers", r.Frames, r.Stop, len(r.Workers))
	}
}

// TestPcapfileFullDiskReportsWhatReachedTheFile: on a full 1 MiB tmpfs
// the report's frames are the records in the file, which ends on a whole
// record; the run fails with the reason.
func TestPcapfileFullDiskReportsWhatReachedTheFile(t *testing.T) {
	testbed.RequireRoot(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "wpg-e2e", dir).CombinedOutput(); err != nil {
		testbed.Skip(t, "mount a 1 MiB tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	pcap := filepath.Join(dir, "out.pcap")
	stdout, stderr, code := run(t, t.TempDir(), "send", "--backend", "pcapfile", "-o", pcap, "--count", "100000", "--json")
	if code == 0 {
		t.Fatalf("exit 0 on a full file system\n%s", stdout)
	}
	r := parseReport(t, stdout)
	recs := pcapRecords(t, pcap)
	if r.Frames != uint64(len(recs)) || len(recs) == 0 {
		t.Fatalf("report says %d frames, the file holds %d", r.Frames, len(recs))
	}
	if !strings.Contains(r.Error, "no space left") || !strings.Contains(stderr, "no space left") {
		t.Fatalf("error %q / stderr %q, want the reason", r.Error, stderr)
	}
}

// TestPcapfileDevFull: nothing reaches /dev/full, and wpg says so instead
// of reporting frames as written.
func TestPcapfileDevFull(t *testing.T) {
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		testbed.Skip(t, "needs the /dev/full device")
	}
	stdout, stderr, code := run(t, t.TempDir(), "send", "--backend", "pcapfile", "-o", "/dev/full", "--count", "100000", "--json")
	if code == 0 || !strings.Contains(stderr, "no space left") || !strings.Contains(stderr, "-o /dev/full") {
		t.Fatalf("exit %d, stderr %q, want a failure naming -o /dev/full and the reason", code, stderr)
	}
	if strings.Contains(stdout, `"frames"`) && !strings.Contains(stdout, `"frames": 0`) {
		t.Fatalf("a report claims frames written to /dev/full:\n%s", stdout)
	}
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/full is gone: wpg must never remove an output it could not write")
	}
}

// startPaced starts a 1 kpps send into pcap that would last a minute and
// waits until frames are flowing.
func startPaced(t *testing.T, pcap string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(testbed.Wpg(t), "send", "--backend", "pcapfile", "-o", pcap, "--rate", "1kpps", "--duration", "60s", "--json")
	cmd.Dir = t.TempDir()
	var out strings.Builder
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go io.Copy(io.Discard, bufio.NewReader(stderr))
	return cmd, &out
}

// TestPcapfileSIGHUPGivesReportAndFile: SIGHUP stops a run like SIGTERM:
// the report is printed and the file holds every frame it counts.
func TestPcapfileSIGHUPGivesReportAndFile(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "hup.pcap")
	cmd, out := startPaced(t, pcap)
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("after SIGHUP: %v (want a clean stop)\n%s", err, out.String())
	}
	r := parseReport(t, out.String())
	recs := pcapRecords(t, pcap)
	if r.Stop != "signal" || r.Frames == 0 || r.Frames != uint64(len(recs)) {
		t.Fatalf("stop %s, report %d frames, file %d records; want signal and equal counts", r.Stop, r.Frames, len(recs))
	}
}

// TestPcapfileKill9LeavesReadableFile: a crash after about 3 s at 1 kpps
// leaves a readable file with most of the frames (records are flushed at
// least once a second, on record boundaries).
func TestPcapfileKill9LeavesReadableFile(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "kill.pcap")
	cmd, _ := startPaced(t, pcap)
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	recs := pcapRecords(t, pcap)
	// About 3000 frames were sent; at most about a second's are lost.
	// The bound is generous: a loaded host runs the sender late.
	if len(recs) < 1000 {
		t.Fatalf("the file holds %d records after 3 s at 1 kpps, want most of them", len(recs))
	}
	t.Logf("%d records survived kill -9", len(recs))
}

// TestPcapfilePacedTimestamps: each record of a paced run carries its own
// (scheduled) time: at 1 kpps the gaps are about 1 ms, never 0.
func TestPcapfilePacedTimestamps(t *testing.T) {
	for _, rate := range []string{"1kpps", ""} {
		pcap := filepath.Join(t.TempDir(), "ts.pcap")
		args := []string{"send", "--backend", "pcapfile", "-o", pcap, "--count", "200"}
		if rate != "" {
			args = append(args, "--rate", rate)
		}
		if _, stderr, code := run(t, t.TempDir(), args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		recs := pcapRecords(t, pcap)
		if len(recs) != 200 {
			t.Fatalf("rate %q: %d records, want 200", rate, len(recs))
		}
		var gaps []time.Duration
		zero := 0
		for k := 1; k < len(recs); k++ {
			g := recs[k].Timestamp.Sub(recs[k-1].Timestamp)
			if g <= 0 {
				zero++
			}
			gaps = append(gaps, g)
		}
		slices.Sort(gaps)
		med := gaps[len(gaps)/2]
		if zero > 2 {
			t.Errorf("rate %q: %d of %d gaps are 0 or negative: records share a timestamp", rate, zero, len(gaps))
		}
		if rate != "" && (med < 500*time.Microsecond || med > 2*time.Millisecond) {
			t.Errorf("rate %s: median gap %v, want about 1ms", rate, med)
		}
		t.Logf("rate %q: median gap %v, %s zero", rate, med, strconv.Itoa(zero))
	}
}

// TestSIGHUPStopsRecvAndBenchCleanly: SIGHUP (a closed terminal or SSH
// session) stops recv and bench as SIGTERM does: report, exit 0. It once
// killed them with nothing printed.
func TestSIGHUPStopsRecvAndBenchCleanly(t *testing.T) {
	// recv on a pipe whose writer stays open: it waits for frames.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	recvCmd := exec.Command(testbed.Wpg(t), "recv", "--backend", "pipe", "--json")
	recvCmd.Stdin = pr
	benchCmd := exec.Command(testbed.Wpg(t), "bench", "--backend", "null", "--duration", "60s", "--json")
	for _, c := range []struct {
		name   string
		cmd    *exec.Cmd
		schema string
	}{{"recv", recvCmd, `"schema": "wpg.recv/v1"`}, {"bench", benchCmd, `"stop": "signal"`}} {
		var out strings.Builder
		c.cmd.Stdout = &out
		c.cmd.Dir = t.TempDir()
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.cmd.Process.Kill() })
		time.Sleep(1500 * time.Millisecond) // past start-up, while it runs
		if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("%s after SIGHUP: %v, want a clean stop\n%s", c.name, err, out.String())
			continue
		}
		if !strings.Contains(out.String(), c.schema) {
			t.Errorf("%s after SIGHUP: report lacks %s:\n%s", c.name, c.schema, out.String())
		}
	}
	pr.Close()
}
