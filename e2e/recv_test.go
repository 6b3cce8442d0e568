//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/recv"
)

// receiver is a `wpg recv` running inside a test namespace.
type receiver struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	errb bytes.Buffer
	done chan error
}

// startRecv starts `wpg recv --json args…` in v's namespace on v.Inner
// and waits until it says it is receiving.
func startRecv(t *testing.T, v *testbed.Veth, args ...string) *receiver {
	t.Helper()
	return startRecvWith(t, v, testbed.Wpg(t), "wpg recv", append([]string{"recv", "-i", v.Inner, "--json"}, args...))
}

// startRecvWith starts bin with args in v's namespace and waits (up to
// 30 s) until it says it is receiving; what names it in the failure.
func startRecvWith(t *testing.T, v *testbed.Veth, bin, what string, args []string) *receiver {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	r := &receiver{done: make(chan error, 1)}
	r.cmd = v.Command(ctx, bin, args...)
	r.cmd.Stdout = &r.out
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			r.errb.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), "receiving on") {
				signalled = true
				close(ready)
			}
		}
		if !signalled {
			close(ready)
		}
		r.done <- r.cmd.Wait()
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s", what)
	}
	return r
}

// wait waits for the receiver and decodes its report.
func (r *receiver) wait(t *testing.T) (recv.Result, int) {
	t.Helper()
	err := <-r.done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res recv.Result
	if jerr := json.Unmarshal(r.out.Bytes(), &res); jerr != nil {
		t.Fatalf("wpg recv: exit %d, report %q: %v\nstderr: %s", code, r.out.String(), jerr, r.errb.String())
	}
	return res, code
}

// mixedShares are the streams of examples/mixed.wpg.yaml and their shares
// (sum 10): frames are interleaved in exact proportion.
var mixedShares = []uint64{4, 2, 1, 1, 1, 1}

const mixedFrames = 200000

func sendMixed(t *testing.T, v *testbed.Veth, extra ...string) map[string]any {
	t.Helper()
	args := append([]string{"send", repoFile(t, "examples/mixed.wpg.yaml"), "-i", v.Outer, "--count", "200000", "--json"}, extra...)
	out, errs, code := run(t, t.TempDir(), args...)
	if code != 0 {
		t.Fatalf("wpg send: exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("send report %q: %v", out, err)
	}
	if rep["frames"].(float64) != mixedFrames {
		t.Fatalf("sent %v frames, want %d", rep["frames"], mixedFrames)
	}
	return rep
}

// TestSendRecvMixedOverVeth: 200,000 frames of the mixed template at a
// fixed rate over a veth pair into `wpg recv` in the namespace arrive
// exactly once each, intact, with exact per-stream counts.
func TestSendRecvMixedOverVeth(t *testing.T) {
	for _, c := range []struct {
		name    string
		extra   []string
		rxExtra []string
	}{
		{"ring", nil, nil},
		{"ring-2-workers", []string{"--workers", "2"}, nil},
		{"sendmmsg-qdisc-bypass", []string{"--no-tx-ring", "--qdisc-bypass"}, nil},
		{"recvmmsg", nil, []string{"--no-rx-ring"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := testbed.NewVeth(t)
			r := startRecv(t, v, append([]string{"--expect", "200000", "--idle-timeout", "5s"}, c.rxExtra...)...)
			sendMixed(t, v, append([]string{"--rate", "100kpps"}, c.extra...)...)
			res, code := r.wait(t)
			if code != 0 || res.Frames != mixedFrames || res.Lost != 0 || res.Duplicated != 0 || res.Corrupted != 0 || res.Missing != 0 || res.Stop != "expect" {
				t.Fatalf("exit %d, report %+v\nreceiver %+v\nstderr: %s", code, res, res.Backend, r.errb.String())
			}
			if len(res.Streams) != len(mixedShares) {
				t.Fatalf("streams %+v", res.Streams)
			}
			if mode := res.Backend.Mode; (c.rxExtra != nil) != (mode == "recvmmsg") {
				t.Errorf("receiver mode %q with %v", mode, c.rxExtra)
			}
			for i, s := range res.Streams {
				want := mixedFrames / 10 * mixedShares[i]
				// With 2 workers each stream's frames come from both, so
				// they may interleave out of order; none may be missing.
				if s.Stream != uint16(i) || s.Frames != want || s.NextSeq != want || s.Lost != 0 {
					t.Errorf("stream %d: %+v, want %d frames", i, s, want)
				}
			}
			// Every frame gives a latency sample, except those the kernel
			// stamped "before" the sender did: the VM's CLOCK_REALTIME
			// (kernel stamps) moves against CLOCK_MONOTONIC by up to ~0.1 ms.
			if res.Latency == nil || res.Latency.Samples+res.NegativeLatency != mixedFrames || res.Latency.Samples < mixedFrames*9/10 {
				t.Errorf("latency %+v, %d negative", res.Latency, res.NegativeLatency)
			}
		})
	}
}

// TestLateReceiverCountsWhatItMissed: a receiver that starts after the
// sender reports as lost exactly the frames sent before it started.
func TestLateReceiverCountsWhatItMissed(t *testing.T) {
	v := testbed.NewVeth(t)
	v.SetMTU(t, 9000)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		sendMixed(t, v, "--rate", "50kpps") // 4 s
	}()
	time.Sleep(1500 * time.Millisecond)
	r := startRecv(t, v, "--idle-timeout", "3s")
	<-sent
	res, code := r.wait(t)
	if code != 0 || res.Stop != "idle" || res.Duplicated != 0 || res.Corrupted != 0 {
		t.Fatalf("exit %d, report %+v", code, res)
	}
	if res.Lost == 0 || res.Frames == 0 || res.Frames+res.Lost != mixedFrames {
		t.Fatalf("received %d + lost %d, want %d in total with some lost", res.Frames, res.Lost, mixedFrames)
	}
	for i, s := range res.Streams {
		want := mixedFrames / 10 * mixedShares[i]
		// Everything after the receiver started arrived: the loss is
		// exactly the head of each stream.
		if s.Frames+s.Lost != want || s.NextSeq != want || s.Lost == 0 {
			t.Errorf("stream %d: %+v: frames+lost should be %d", i, s, want)
		}
	}
}

// TestRecvInterruptPrintsReport: Ctrl-C (SIGINT) ends `wpg recv` with its
// report of what arrived so far; frames without the signature are
// counted apart and never crash it.
func TestRecvInterruptPrintsReport(t *testing.T) {
	v := testbed.NewVeth(t)
	r := startRecv(t, v)
	out, errs, code := run(t, t.TempDir(), "send", "-i", v.Outer, "--count", "1000", "--rate", "100kpps")
	if code != 0 {
		t.Fatalf("send: exit %d: %s %s", code, out, errs)
	}
	// Frames that are not wpg's: three Ethernet frames without a signature.
	snd, err := afpacket.NewSender(context.Background(), backend.Options{MaxFrame: 60, Net: backend.NetOptions{Interface: v.Outer, NoTxRing: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	bufs := make([][]byte, 3)
	if n, err := snd.Reserve(bufs); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	for _, b := range bufs {
		clear(b)
		copy(b, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 9, 0x88, 0xb5})
	}
	if n, err := snd.Commit([]int{60, 60, 60}); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	res, code := r.wait(t)
	if code != 0 || res.Stop != "interrupted" || res.Frames != 1000 || res.Unsigned != 3 || res.Corrupted != 0 {
		t.Fatalf("exit %d, %+v", code, res)
	}
}
