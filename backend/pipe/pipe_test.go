//go:build linux

package pipe

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/peer/peertest"
)

func TestMain(m *testing.M) { peertest.Main(m) }

var sizes = []struct {
	size  int
	count uint64
}{{64, 20000}, {4096, 5000}, {460800, 200}, {16 << 20, 6}}

func run(t *testing.T, o backend.Options, pipeSize, size int, count uint64) (backend.Info, []byte) {
	t.Helper()
	o.MaxFrame = frame.PayloadHeaderLen + size
	o.Batch = 64
	o.Pipe.Size = pipeSize
	o.Env = peertest.Env()
	s, err := newSender(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := peertest.Send(s, size, count, 64, frame.VerifyOn)
	if err != nil {
		s.Close()
		t.Fatalf("sent %d: %v", sent, err)
	}
	if cerr := s.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return s.Info(), s.(backend.PeerReporter).PeerReport()
}

func TestFramesIntactBetweenProcesses(t *testing.T) {
	for _, vms := range []bool{false, true} {
		for _, c := range sizes {
			name := strconv.Itoa(c.size)
			if vms {
				name += "/vmsplice"
			}
			t.Run(name, func(t *testing.T) {
				info, rep := run(t, backend.Options{Peer: backend.Peer{Mode: backend.PeerOwn}, Pipe: backend.PipeOptions{Vmsplice: vms}}, 0, c.size, c.count)
				r := peertest.Report(t, rep)
				peertest.CheckIntact(t, r, c.count, frame.PayloadHeaderLen+c.size)
				if r.Stop != "eof" {
					t.Errorf("receiver stopped with %q, want eof", r.Stop)
				}
				if info.Details["frames"] != strconv.FormatUint(c.count, 10) {
					t.Errorf("sender counted %s frames", info.Details["frames"])
				}
			})
		}
	}
}

// One read(2) per 460,800-byte frame with the enlarged pipe, 8 with the
// default 64 KiB pipe. The first frame takes one more read (its size is
// not known before its header), and when the writer finds less than a
// frame of room it leaves part of a frame in the pipe, which costs the
// reader an extra read now and then (the C reference sees 1.03–1.05).
func TestReadsPerFrame(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		pipe     int
		min, max float64
	}{{0, 0.5, 1 + 1.0/n}, {64 << 10, 8, 8.1}} { // 1 + 1/n: the first frame's extra read
		_, rep := run(t, backend.Options{Peer: backend.Peer{Mode: backend.PeerOwn}}, c.pipe, 460800, n)
		r := peertest.Report(t, rep)
		peertest.CheckIntact(t, r, n, frame.PayloadHeaderLen+460800)
		d := r.Backend.Details
		reads, _ := strconv.ParseFloat(d["reads"], 64)
		per := reads / n
		if per < c.min || per > c.max {
			t.Errorf("pipe %s bytes: %.3f reads per frame, want %.2f … %.2f", d["pipe_size"], per, c.min, c.max)
		}
		t.Logf("pipe %s bytes: %s reads for %d frames", d["pipe_size"], d["reads"], n)
	}
}

func TestFIFOIndependentReceiver(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "frames.fifo")
	rx := peertest.ReceiverCommand(job.RecvSpec{Backend: "pipe", FIFO: fifo})
	var out strings.Builder
	rx.Stdout = &out
	rx.Stderr = os.Stderr
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := newSender(context.Background(), backend.Options{MaxFrame: frame.PayloadHeaderLen + 4096, Batch: 32, Pipe: backend.PipeOptions{FIFO: fifo}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := peertest.Send(s, 4096, 1000, 32, frame.VerifyOn); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := rx.Wait(); err != nil {
		t.Fatalf("receiver: %v", err)
	}
	peertest.CheckIntact(t, peertest.Report(t, []byte(out.String())), 1000, frame.PayloadHeaderLen+4096)
}

// A receiver that dies makes the sender stop with EPIPE and its count,
// also while the sender waits for room for a whole large frame.
func TestReceiverKilled(t *testing.T) {
	for _, size := range []int{4096, 460800} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "frames.fifo")
			rx := peertest.ReceiverCommand(job.RecvSpec{Backend: "pipe", FIFO: fifo})
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := rx.Start(); err != nil {
				t.Fatal(err)
			}
			s, err := newSender(context.Background(), backend.Options{MaxFrame: frame.PayloadHeaderLen + size, Batch: 32, Pipe: backend.PipeOptions{FIFO: fifo}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := peertest.Send(s, size, 10, 32, frame.VerifyOn); err != nil {
				t.Fatal(err)
			}
			rx.Process.Kill()
			rx.Wait()
			sent, err := peertest.Send(s, size, 1<<40, 32, frame.VerifyOn)
			if err == nil || !strings.Contains(err.Error(), "reader has gone") {
				t.Fatalf("after the receiver died: sent %d more, err = %v; want a 'reader has gone' error", sent, err)
			}
			t.Logf("sender stopped: %v (after %d more frames)", err, sent)
		})
	}
}

// A sender that dies leaves a receiver that reports what it got.
func TestSenderKilled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "frames.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rx := peertest.ReceiverCommand(job.RecvSpec{Backend: "pipe", FIFO: fifo})
	var out strings.Builder
	rx.Stdout = &out
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	// The "sender" is a child process that writes 10 frames then is killed.
	tx := peertest.SenderCommand("pipe", "--fifo", fifo, "--size", "4096", "--count", "10", "--hang")
	if err := peertest.StartWithLines(tx); err != nil {
		t.Fatal(err)
	}
	peertest.WaitForLine(t, tx)
	tx.Process.Kill()
	tx.Wait()
	if err := rx.Wait(); err != nil && !peertest.IsExit(err) {
		t.Fatal(err)
	}
	r := peertest.Report(t, []byte(out.String()))
	peertest.CheckIntact(t, r, 10, frame.PayloadHeaderLen+4096)
	if r.Stop != "eof" {
		t.Errorf("receiver stop = %q, want eof", r.Stop)
	}
}

// Asking for more than pipe-max-size without CAP_SYS_RESOURCE is refused
// (EPERM); the sender then takes the largest size allowed and says so.
func TestSizeFallsBackWithWarning(t *testing.T) {
	r, w, err := sys.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer sys.CloseFd(r)
	defer sys.CloseFd(w)
	max, err := sys.PipeMaxSize()
	if err != nil {
		t.Fatal(err)
	}
	got, warn, err := Size(w, 4*max)
	if err != nil {
		t.Fatal(err)
	}
	if got == 4*max {
		t.Logf("CAP_SYS_RESOURCE lets this process exceed pipe-max-size: got %d bytes", got)
		return
	}
	if got != max || !strings.Contains(warn, "EPERM") {
		t.Fatalf("Size(4 × pipe-max-size) = %d, %q; want %d and a warning naming EPERM", got, warn, max)
	}
	t.Logf("warning: %s", warn)
	// The default asks for pipe-max-size and gets it without a warning.
	got, warn, err = Size(w, 0)
	if err != nil || got != max || warn != "" {
		t.Fatalf("Size(default) = %d, %q, %v; want %d and no warning", got, warn, err, max)
	}
}
