package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/peer"
	"github.com/wpg-dev/wpg/recv"
)

// localReport is the part of wpg's JSON report the local-path tests read.
type localReport struct {
	Frames       uint64          `json:"frames"`
	Stop         string          `json:"stop"`
	Error        string          `json:"error"`
	Backend      json.RawMessage `json:"backend"`
	Verification *recv.Result    `json:"verification"`
}

var localSizes = []struct {
	size  int
	count int
}{{64, 20000}, {4096, 5000}, {460800, 200}, {16 << 20, 6}}

func intact(t *testing.T, r *recv.Result, n uint64, frameLen int) {
	t.Helper()
	if r == nil {
		t.Fatal("no receiver report")
	}
	if r.Frames != n || r.Lost != 0 || r.Corrupted != 0 || r.Duplicated != 0 || r.Reordered != 0 || r.Unsigned != 0 || r.Bytes != n*uint64(frameLen) {
		t.Fatalf("receiver: frames=%d bytes=%d lost=%d corrupted=%d dup=%d reordered=%d unsigned=%d stop=%s; want %d intact frames of %d bytes",
			r.Frames, r.Bytes, r.Lost, r.Corrupted, r.Duplicated, r.Reordered, r.Unsigned, r.Stop, n, frameLen)
	}
}

// wpg send starts its own receiver process (shm, cma, unix) and reports
// what it verified.
func TestLocalSendStartsReceiver(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, b := range []string{"shm", "cma", "unix"} {
		for _, c := range localSizes {
			t.Run(fmt.Sprintf("%s/%d", b, c.size), func(t *testing.T) {
				cmd := exec.Command(wpg, "send", "--backend", b, "--size", strconv.Itoa(c.size), "--count", strconv.Itoa(c.count), "--json")
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("wpg send: %v\n%s", err, errb.String())
				}
				var rep localReport
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatalf("report: %v\n%s", err, out.String())
				}
				if rep.Frames != uint64(c.count) {
					t.Fatalf("sender sent %d frames, want %d", rep.Frames, c.count)
				}
				intact(t, rep.Verification, uint64(c.count), 32+c.size)
			})
		}
	}
}

// wpg send --backend pipe | wpg recv --backend pipe, and one read per
// 460,800-byte frame in the enlarged pipe.
func TestLocalPipeBetweenCommands(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, c := range localSizes {
		for _, vms := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/vmsplice=%v", c.size, vms), func(t *testing.T) {
				args := []string{"send", "--backend", "pipe", "--size", strconv.Itoa(c.size), "--count", strconv.Itoa(c.count)}
				if vms {
					args = append(args, "--vmsplice")
				}
				send := exec.Command(wpg, args...)
				rx := exec.Command(wpg, "recv", "--backend", "pipe", "--json")
				p, err := send.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				rx.Stdin = p
				var sendErr, out, rxErr bytes.Buffer
				send.Stderr, rx.Stdout, rx.Stderr = &sendErr, &out, &rxErr
				if err := send.Start(); err != nil {
					t.Fatal(err)
				}
				if err := rx.Start(); err != nil {
					t.Fatal(err)
				}
				if err := send.Wait(); err != nil {
					t.Fatalf("wpg send: %v\n%s", err, sendErr.String())
				}
				if err := rx.Wait(); err != nil {
					t.Fatalf("wpg recv: %v\n%s", err, rxErr.String())
				}
				var r recv.Result
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					t.Fatalf("recv report: %v\n%s", err, out.String())
				}
				intact(t, &r, uint64(c.count), 32+c.size)
				if r.Stop != "eof" {
					t.Errorf("receiver stop = %q, want eof", r.Stop)
				}
				if c.size == 460800 && r.Backend.Details["pipe_size"] == "1048576" {
					reads, _ := strconv.Atoi(r.Backend.Details["reads"])
					if reads > c.count {
						t.Errorf("%d reads for %d frames of 460,800 bytes: want at most one per frame", reads, c.count)
					}
				}
			})
		}
	}
}

// An independently started `wpg recv --listen` and `wpg send --connect`.
func TestLocalIndependentReceiver(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, b := range []string{"shm", "cma", "unix"} {
		t.Run(b, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "rx.sock")
			rx := exec.Command(wpg, "recv", "--backend", b, "--listen", sock, "--json")
			var out, rxErr bytes.Buffer
			rx.Stdout, rx.Stderr = &out, &rxErr
			if err := rx.Start(); err != nil {
				t.Fatal(err)
			}
			send := exec.Command(wpg, "send", "--backend", b, "--connect", sock, "--size", "4096", "--count", "3000", "--json")
			var sout, serr bytes.Buffer
			send.Stdout, send.Stderr = &sout, &serr
			if err := send.Run(); err != nil {
				rx.Process.Kill()
				t.Fatalf("wpg send: %v\n%s", err, serr.String())
			}
			if err := rx.Wait(); err != nil {
				t.Fatalf("wpg recv: %v\n%s", err, rxErr.String())
			}
			var r recv.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("recv report: %v\n%s", err, out.String())
			}
			intact(t, &r, 3000, 32+4096)
		})
	}
}

// peerArgs returns the wpg recv and wpg send arguments of a 20 kpps stream
// of 4 KiB frames over backend b between two independently started
// processes meeting in dir (a FIFO for pipe, a listening socket for the
// others); txExtra is added to the sender's.
func peerArgs(b, dir string, txExtra ...string) (rx, tx []string) {
	rx = []string{"recv", "--backend", b, "--json"}
	tx = append([]string{"send", "--backend", b, "--size", "4096", "--rate", "20kpps", "--duration", "60s"}, txExtra...)
	if b == "pipe" {
		fifo := filepath.Join(dir, "f")
		return append(rx, "--fifo", fifo), append(tx, "--fifo", fifo)
	}
	sock := filepath.Join(dir, "rx.sock")
	return append(rx, "--listen", sock), append(tx, "--connect", sock)
}

// startPair starts `wpg recv` and then `wpg send` over backend b (peerArgs,
// txExtra added to the sender's); the sender's output is collected.
func startPair(t *testing.T, wpg, b string, txExtra ...string) (rx, send *exec.Cmd, sout, serr *bytes.Buffer) {
	t.Helper()
	rxArgs, txArgs := peerArgs(b, t.TempDir(), txExtra...)
	rx = exec.Command(wpg, rxArgs...)
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	send = exec.Command(wpg, txArgs...)
	sout, serr = &bytes.Buffer{}, &bytes.Buffer{}
	send.Stdout, send.Stderr = sout, serr
	if err := send.Start(); err != nil {
		rx.Process.Kill()
		rx.Wait()
		t.Fatal(err)
	}
	return rx, send, sout, serr
}

// A receiver that dies makes the sender stop with a clear error and its
// counts; a sender that dies leaves a receiver that reports what it got.
func TestLocalPeerDies(t *testing.T) {
	wpg := testbed.Wpg(t)
	for _, b := range []string{"shm", "cma", "unix", "pipe"} {
		t.Run(b+"/receiver-killed", func(t *testing.T) {
			rx, send, sout, serr := startPair(t, wpg, b, "--json")
			time.Sleep(700 * time.Millisecond)
			rx.Process.Kill()
			rx.Wait()
			done := make(chan error, 1)
			go func() { done <- send.Wait() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatalf("sender exited 0 after its receiver died\n%s", serr.String())
				}
			case <-time.After(20 * time.Second):
				send.Process.Kill()
				t.Fatal("sender still running 20 s after its receiver died")
			}
			var rep localReport
			if err := json.Unmarshal(sout.Bytes(), &rep); err != nil {
				t.Fatalf("report: %v\n%s\n%s", err, sout.String(), serr.String())
			}
			if !strings.Contains(rep.Error, "gone") || rep.Frames == 0 {
				t.Fatalf("report error %q after %d frames; want 'receiver … has gone' and the frames so far", rep.Error, rep.Frames)
			}
			t.Logf("sender: %s (frames %d)", rep.Error, rep.Frames)
		})
		t.Run(b+"/receiver-stalled", func(t *testing.T) {
			// A receiver that is there but reads nothing (SIGSTOP) does
			// not hold the run open: SIGTERM stops the sender, which
			// gives up on the receiver peer.StallGrace later and reports.
			rx, send, sout, serr := startPair(t, wpg, b, "--json", "--rate", "0")
			defer func() { rx.Process.Kill(); rx.Wait() }()
			time.Sleep(700 * time.Millisecond)
			rx.Process.Signal(syscall.SIGSTOP)
			time.Sleep(300 * time.Millisecond)
			send.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- send.Wait() }()
			select {
			case <-done:
			case <-time.After(peer.StallGrace + 10*time.Second):
				send.Process.Kill()
				t.Fatalf("sender still running %v after SIGTERM with its receiver stopped\n%s", peer.StallGrace+10*time.Second, serr.String())
			}
			var rep localReport
			if err := json.Unmarshal(sout.Bytes(), &rep); err != nil {
				t.Fatalf("report: %v\n%s\n%s", err, sout.String(), serr.String())
			}
			if rep.Frames == 0 || !strings.Contains(rep.Error, "after the run stopped") {
				t.Fatalf("report error %q after %d frames; want the stalled-receiver error and the frames so far", rep.Error, rep.Frames)
			}
			t.Logf("sender: %s (frames %d)", rep.Error, rep.Frames)
		})
		t.Run(b+"/sender-killed", func(t *testing.T) {
			rxArgs, txArgs := peerArgs(b, t.TempDir())
			rx := exec.Command(wpg, rxArgs...)
			var out bytes.Buffer
			rx.Stdout = &out
			if err := rx.Start(); err != nil {
				t.Fatal(err)
			}
			send := exec.Command(wpg, txArgs...)
			if err := send.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond)
			send.Process.Signal(syscall.SIGKILL)
			send.Wait()
			done := make(chan error, 1)
			go func() { done <- rx.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				rx.Process.Kill()
				t.Fatal("receiver still running 20 s after its sender died")
			}
			var r recv.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("recv report: %v\n%s", err, out.String())
			}
			if r.Frames == 0 || r.Corrupted != 0 || r.Lost != 0 || r.Stop != "eof" {
				t.Fatalf("receiver after its sender died: frames=%d corrupted=%d lost=%d stop=%q; want frames, none corrupted or lost, stop eof",
					r.Frames, r.Corrupted, r.Lost, r.Stop)
			}
			t.Logf("receiver got %d frames before the sender died", r.Frames)
		})
	}
}
