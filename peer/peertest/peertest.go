//go:build linux

// Package peertest lets the tests of local backends run a real receiving
// process before (and independently of) the wpg binary: TestMain calls Main,
// which runs the test binary as a receiver when Launch (the launcher the
// helpers put into backend.Options.Env) re-executes it: the child runs
// job.Receive, the code path of `wpg recv` (the peer protocol included: a
// started child gets only its socket and takes the rest from the sender's
// request), and prints the JSON result, as `wpg recv --json` does.
package peertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/recv"
)

const (
	envChild  = "WPG_PEERTEST_CHILD"
	envSender = "WPG_PEERTEST_SENDER"
)

// Main runs the tests, or the receiver when this process is a child.
func Main(m *testing.M) {
	if spec := os.Getenv(envChild); spec != "" {
		os.Exit(child(spec))
	}
	if name := os.Getenv(envSender); name != "" {
		os.Exit(senderChild(name, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// Launch is the receiver launcher of the tests (backend.Env.Launcher): it
// re-executes the test binary as a receiver listening on sock, as
// peer.DefaultLauncher runs `wpg recv --listen SOCK`.
func Launch(sock string) (*exec.Cmd, error) {
	return ReceiverCommand(job.RecvSpec{Listen: sock}), nil
}

// Env is the backend environment of a test process: its own streams and
// Launch.
func Env() backend.Env {
	return backend.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Launcher: Launch}
}

// OpenSender opens backend name for one worker with o (its Env from Env()
// where unset) and returns that worker's sender; closing the sender closes
// the instance too.
func OpenSender(ctx context.Context, name string, o backend.Options) (backend.Sender, error) {
	inst, err := open(ctx, name, o)
	if err != nil {
		return nil, err
	}
	s, err := inst.NewSender(backend.Worker{MaxFrame: o.MaxFrame})
	if err != nil {
		inst.Close()
		return nil, err
	}
	return &instSender{s, inst}, nil
}

// OpenReceiver opens backend name's receiving side with o (its Env from
// Env() where unset); closing the receiver closes the instance too.
func OpenReceiver(ctx context.Context, name string, o backend.Options) (backend.Receiver, error) {
	inst, err := open(ctx, name, o)
	if err != nil {
		return nil, err
	}
	r, err := inst.NewReceiver()
	if err != nil {
		inst.Close()
		return nil, err
	}
	return &instReceiver{r, inst}, nil
}

// open opens backend name's instance with o, its Env from Env() where
// unset.
func open(ctx context.Context, name string, o backend.Options) (backend.Instance, error) {
	reg, err := backend.Lookup(name)
	if err != nil {
		return nil, err
	}
	if o.Env.Launcher == nil {
		o.Env = Env()
	}
	return reg.Open(ctx, o)
}

// instSender is a sender that closes its instance with itself.
type instSender struct {
	backend.Sender
	inst backend.Instance
}

func (s *instSender) Close() error { return closeWith(s.Sender, s.inst) }

// PeerReport is the sender's peer report (nil when it has none).
func (s *instSender) PeerReport() []byte {
	if pr, ok := s.Sender.(backend.PeerReporter); ok {
		return pr.PeerReport()
	}
	return nil
}

// closeWith closes c, then the instance it came from: the first error.
func closeWith(c io.Closer, inst backend.Instance) error {
	err := c.Close()
	if ierr := inst.Close(); err == nil {
		err = ierr
	}
	return err
}

// instReceiver is a receiver that closes its instance with itself.
type instReceiver struct {
	backend.Receiver
	inst backend.Instance
}

func (r *instReceiver) Close() error { return closeWith(r.Receiver, r.inst) }

// ReceiverCommand returns a command running a receiver with spec (as
// `wpg recv` maps its flags onto a job.RecvSpec) in a child process, for
// tests that start the receiver first.
func ReceiverCommand(spec job.RecvSpec) *exec.Cmd {
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envChild+"="+string(b))
	return cmd
}

// child runs the receiver of the RecvSpec in JSON, as `wpg recv --json`.
func child(specJSON string) int {
	var spec job.RecvSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "receiver spec:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if path := os.Getenv("WPG_PEERTEST_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	env := job.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Launcher: Launch}
	rcv, err := job.Receive(ctx, spec, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		return 2
	}
	res, err := rcv.Wait(nil, 0)
	json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "receive:", err)
		return 1
	}
	if !res.OK() {
		return 1
	}
	return 0
}

// Send renders count payload frames of size bytes through s in batches of
// batch and returns the frames the sender accepted and the first error.
func Send(s backend.Sender, size int, count uint64, batch int, verify frame.VerifyMode) (uint64, error) {
	src, err := frame.NewPayloadSource(frame.PayloadConfig{Size: size, Count: count, Verify: verify}, 0, 1)
	if err != nil {
		return 0, err
	}
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	var sent uint64
	for sent < count {
		want := int(min(uint64(batch), count-sent))
		n, err := s.Reserve(bufs[:want])
		if err != nil {
			return sent, err
		}
		if n == 0 {
			continue
		}
		m := src.Render(bufs[:n], lens[:n], time.Now().UnixNano())
		k, err := s.Commit(lens[:m])
		sent += uint64(k)
		if err != nil {
			return sent, err
		}
	}
	return sent, s.Flush()
}

// Report parses a receiver's result: a peer report (PeerReport) or the
// JSON of `wpg recv --json`.
func Report(t testing.TB, b []byte) recv.Result {
	t.Helper()
	r, err := recv.UnmarshalPeer(b)
	if err != nil {
		t.Fatalf("receiver report %q: %v", b, err)
	}
	return r
}

// CheckIntact fails unless r shows exactly n intact frames of frameLen.
func CheckIntact(t testing.TB, r recv.Result, n uint64, frameLen int) {
	t.Helper()
	if r.Frames != n || r.Lost != 0 || r.Corrupted != 0 || r.Duplicated != 0 || r.Reordered != 0 || r.Unsigned != 0 || r.Bytes != n*uint64(frameLen) {
		t.Fatalf("receiver saw frames=%d bytes=%d lost=%d corrupted=%d dup=%d reordered=%d unsigned=%d stop=%s; want %d intact frames of %d bytes",
			r.Frames, r.Bytes, r.Lost, r.Corrupted, r.Duplicated, r.Reordered, r.Unsigned, r.Stop, n, frameLen)
	}
}

// IsExit reports whether err is a process exit error.
func IsExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// SenderCommand returns a command running a sender for backendName in a
// child process, with flags --fifo, --connect, --size, --count, --vmsplice
// and --hang (stay alive after sending, to be killed). It prints
// "sent N" on its standard output after sending (read it with
// WaitForLine).
func SenderCommand(backendName string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envSender+"="+backendName)
	cmd.Stderr = os.Stderr
	return cmd
}

// WaitForLine starts reading cmd's standard output (call before Start is
// not needed: it must be called after StdoutPipe was set up by
// SenderCommand's caller or here) and returns the first line.
func WaitForLine(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	r, ok := cmd.Stdout.(*lineWaiter)
	if !ok {
		t.Fatal("WaitForLine: start the command with StartWithLines")
	}
	select {
	case l := <-r.ch:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("child printed nothing within 30 s")
	}
	return ""
}

type lineWaiter struct {
	buf []byte
	ch  chan string
}

func (w *lineWaiter) Write(b []byte) (int, error) {
	for _, c := range b {
		if c == '\n' {
			select {
			case w.ch <- string(w.buf):
			default:
			}
			w.buf = w.buf[:0]
			continue
		}
		w.buf = append(w.buf, c)
	}
	return len(b), nil
}

// StartWithLines starts cmd with its standard output collected line by line
// for WaitForLine.
func StartWithLines(cmd *exec.Cmd) error {
	cmd.Stdout = &lineWaiter{ch: make(chan string, 16)}
	return cmd.Start()
}

func senderChild(name string, args []string) int {
	var o backend.Options
	size, count, hang := 4096, uint64(10), false
	for i := 0; i < len(args); i++ {
		val := func() string {
			i++
			if i < len(args) {
				return args[i]
			}
			return ""
		}
		switch args[i] {
		case "--fifo":
			o.Pipe.FIFO = val()
		case "--connect":
			o.Peer = backend.Peer{Mode: backend.PeerConnect, Sock: val()}
		case "--size":
			size, _ = strconv.Atoi(val())
		case "--count":
			count, _ = strconv.ParseUint(val(), 10, 64)
		case "--vmsplice":
			o.Pipe.Vmsplice = true
		case "--hang":
			hang = true
		}
	}
	o.MaxFrame = frame.PayloadHeaderLen + size
	o.Batch = 16
	s, err := OpenSender(context.Background(), name, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sender:", err)
		return 2
	}
	n, err := Send(s, size, count, 16, frame.VerifyOn)
	fmt.Printf("sent %d\n", n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "send:", err)
		return 1
	}
	if hang {
		select {}
	}
	s.Close()
	return 0
}

// Size is one case of the standard matrix: count frames of size bytes.
type Size struct {
	Size  int
	Count uint64
}

// Sizes is the standard matrix of the local backends' tests.
var Sizes = []Size{{64, 20000}, {4096, 5000}, {460800, 200}, {16 << 20, 6}}

// Matrix sends every case of sizes through backend name with a receiver
// child the sender starts itself (backend.PeerOwn), and checks that every
// frame arrived intact.
func Matrix(t *testing.T, name string, o backend.Options, sizes []Size) {
	for _, c := range sizes {
		t.Run(strconv.Itoa(c.Size), func(t *testing.T) {
			s := openOwn(t, name, o, c.Size, 64)
			sent, err := Send(s, c.Size, c.Count, 64, frame.VerifyOn)
			if err != nil {
				s.Close()
				t.Fatalf("sent %d: %v", sent, err)
			}
			r := closeReport(t, s)
			CheckIntact(t, r, c.Count, frame.PayloadHeaderLen+c.Size)
			if r.Stop != "eof" {
				t.Errorf("receiver stopped with %q, want eof", r.Stop)
			}
		})
	}
}

// openOwn opens backend name's sender of payload frames of size bytes,
// batch at a time, to a receiver child it starts itself (backend.PeerOwn).
func openOwn(t testing.TB, name string, o backend.Options, size, batch int) backend.Sender {
	t.Helper()
	o.Peer = backend.Peer{Mode: backend.PeerOwn}
	o.MaxFrame = frame.PayloadHeaderLen + size
	o.Batch = batch
	s, err := OpenSender(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// closeReport closes a sender of openOwn and returns its receiver's
// result.
func closeReport(t testing.TB, s backend.Sender) recv.Result {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return Report(t, s.(backend.PeerReporter).PeerReport())
}

// KilledReceiver starts an independent receiver listening on a socket,
// connects a sender, kills the receiver and checks that the sender fails
// with an error saying the receiver has gone.
func KilledReceiver(t *testing.T, name string, o backend.Options) {
	sock := t.TempDir() + "/rx.sock"
	rx := ReceiverCommand(job.RecvSpec{Backend: name, Listen: sock})
	rx.Stderr = os.Stderr
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { rx.Process.Kill(); rx.Wait() }()
	o.Peer = backend.Peer{Mode: backend.PeerConnect, Sock: sock}
	o.MaxFrame = frame.PayloadHeaderLen + 4096
	o.Batch = 16
	s, err := OpenSender(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Send(s, 4096, 100, 16, frame.VerifyOn); err != nil {
		t.Fatal(err)
	}
	rx.Process.Kill()
	rx.Wait()
	done := make(chan error, 1)
	var more uint64
	go func() {
		var err error
		more, err = Send(s, 4096, 1<<40, 16, frame.VerifyOn)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "gone") {
			t.Fatalf("after the receiver died: err = %v; want a 'receiver has gone' error", err)
		}
		t.Logf("sender stopped after %d more frames: %v", more, err)
	case <-time.After(20 * time.Second):
		t.Fatal("sender still sending 20 s after its receiver died")
	}
}

// KilledSender starts an independent receiver, a sender child that sends
// 10 frames and hangs, kills the sender and checks that the receiver
// reports the 10 frames and an end of stream.
func KilledSender(t *testing.T, name string) {
	sock := t.TempDir() + "/rx.sock"
	rx := ReceiverCommand(job.RecvSpec{Backend: name, Listen: sock})
	var out strings.Builder
	rx.Stdout = &out
	rx.Stderr = os.Stderr
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	tx := SenderCommand(name, "--connect", sock, "--size", "4096", "--count", "10", "--hang")
	if err := StartWithLines(tx); err != nil {
		t.Fatal(err)
	}
	if l := WaitForLine(t, tx); l != "sent 10" {
		t.Fatalf("sender child said %q", l)
	}
	tx.Process.Kill()
	tx.Wait()
	werr := make(chan error, 1)
	go func() { werr <- rx.Wait() }()
	select {
	case err := <-werr:
		if err != nil && !IsExit(err) {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		rx.Process.Kill()
		t.Fatal("receiver did not finish 20 s after its sender died")
	}
	r := Report(t, []byte(out.String()))
	CheckIntact(t, r, 10, frame.PayloadHeaderLen+4096)
	if r.Stop != "eof" {
		t.Errorf("receiver stop = %q, want eof", r.Stop)
	}
}

// BenchSizes runs Bench for backend name at each size, with verification
// on and off, as sub-benchmarks named "<size>/verify-<mode>".
func BenchSizes(b *testing.B, name string, o backend.Options, sizes ...int) {
	for _, size := range sizes {
		for _, v := range []frame.VerifyMode{frame.VerifyOn, frame.VerifyOff} {
			b.Run(SizeName(size)+"/verify-"+v.String(), func(b *testing.B) {
				Bench(b, name, o, size, v)
			})
		}
	}
}

// Bench measures backend name sending b.N frames of size bytes to a
// receiver child it starts itself, as `wpg bench` does: the time covers
// rendering, the transfer and the receiver's verification (verify), up to
// the receiver having taken the last frame (Flush). It reports frames/s
// and the receiver's counts.
func Bench(b *testing.B, name string, o backend.Options, size int, verify frame.VerifyMode) {
	s := openOwn(b, name, o, size, 256)
	b.SetBytes(int64(frame.PayloadHeaderLen + size))
	b.ResetTimer()
	start := time.Now()
	sent, err := Send(s, size, uint64(b.N), 256, verify)
	el := time.Since(start)
	b.StopTimer()
	if err != nil {
		s.Close()
		b.Fatalf("sent %d: %v", sent, err)
	}
	r := closeReport(b, s)
	if r.Frames != uint64(b.N) || r.Corrupted != 0 {
		b.Fatalf("receiver: %d frames, %d corrupted; want %d intact", r.Frames, r.Corrupted, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "frames/s")
}

// SizeName names a size for sub-test names: 64B, 450KiB, 1MiB.
func SizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
