package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/config"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
)

func init() { register(newRecvCmd) }

// recvFlags are the flags of `wpg recv`. The network ones come first; the
// local-path ones map onto backend.Options the same way send's do.
type recvFlags struct {
	backend     string
	iface       string
	expect      uint64
	duration    time.Duration
	idleTimeout time.Duration
	json        bool
	batch       int
	ringBytes   string
	noRxRing    bool

	listen   string
	fifo     string
	recvMode string
	busyWait bool
	slots    int
	pipeSize string
	verify   string
	size     string
}

// exitVerifyFailed is the exit code of a run with --expect whose frames
// did not all arrive intact.
const exitVerifyFailed = 3

func newRecvCmd() *cobra.Command {
	var f recvFlags
	cmd := &cobra.Command{
		Use:   "recv",
		Short: "receive and verify frames: per-stream loss, duplicates, reordering, corruption, one-way latency",
		Long: `recv is the receiving side of a backend. On a network interface (-i IFACE, backend afpacket) it
captures every frame arriving there (not the host's own outgoing ones), and counts per stream the frames
carrying the wpg signature: received, lost (sequence gaps), duplicated, reordered, corrupted (the IPv4
header, UDP, TCP or ICMP checksum is wrong), and the one-way latency when the sender runs on the same
host (both sides use CLOCK_MONOTONIC). Frames without a signature are counted separately. For local
paths (--backend pipe|shm|cma|unix) it verifies payload frames (--verify on|sample|off).

It stops after --expect N frames, after --duration, when nothing arrived for --idle-timeout after the
first frame, when the sender goes away (local paths), or on Ctrl-C, and prints the report (--json for
the documented JSON). With --expect, the exit code is 3 when frames were lost, duplicated, corrupted or
missing.`,
		Example: "  wpg recv -i veth1 --expect 200000 --idle-timeout 2s\n  wpg recv --backend shm --listen /tmp/wpg.sock --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRecv(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", "", "data path to receive from (default: afpacket with -i)")
	fl.StringVarP(&f.iface, "interface", "i", "", "network interface to capture on (afpacket)")
	fl.Uint64Var(&f.expect, "expect", 0, "stop after this many distinct intact signed frames (corrupted frames and duplicates do not count)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (0: no limit)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "stop when nothing arrived for this long after the first frame (0: never)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.IntVar(&f.batch, "batch", 64, "frames taken from the backend per call")
	fl.StringVar(&f.ringBytes, "ring-bytes", "16MiB", "afpacket: RX ring size")
	fl.BoolVar(&f.noRxRing, "no-rx-ring", false, "afpacket: recvmmsg instead of the TPACKET_V3 RX ring (also the automatic fallback when the ring cannot be set up)")
	fl.StringVar(&f.listen, "listen", "", "local paths: rendezvous socket to listen on for the sender")
	fl.StringVar(&f.fifo, "fifo", "", "pipe: FIFO to read (default: standard input)")
	fl.StringVar(&f.recvMode, "recv-mode", "", "shm: inplace (default) or copy; cma: readv (default) or writev (the sender's choice wins)")
	fl.StringVar(&f.pipeSize, "pipe-size", "", "pipe: capacity to ask for, e.g. 64KiB (default /proc/sys/fs/pipe-max-size)")
	fl.BoolVar(&f.busyWait, "busy-wait", false, "shm: poll instead of sleeping when idle")
	fl.IntVar(&f.slots, "slots", 0, "shm: ring slots (0: the sender's)")
	fl.StringVar(&f.verify, "verify", "on", "payload frames: on, sample, off")
	fl.StringVar(&f.size, "size", "", "payload frame size, when the backend needs it before the sender says")
	return cmd
}

func runRecv(cmd *cobra.Command, f *recvFlags) error {
	spec := job.RecvSpec{
		Backend: f.backend, Interface: f.iface, Expect: f.expect, Duration: f.duration, IdleTimeout: f.idleTimeout,
		NoRxRing: f.noRxRing, Listen: f.listen, FIFO: f.fifo, RecvMode: f.recvMode,
		BusyWait: f.busyWait, Slots: f.slots,
	}
	if changed(cmd, "ring-bytes") != nil {
		n, err := config.ParseSize(f.ringBytes)
		if err != nil {
			return fmt.Errorf("recv: --ring-bytes: %w", err)
		}
		spec.RingBytes = n
	}
	if changed(cmd, "verify") != nil {
		spec.Verify = f.verify
	}
	if changed(cmd, "batch") != nil {
		spec.Batch = f.batch // else 64, or what a sender's request asks (--listen)
	}
	n, err := parsePipeSize(f.pipeSize)
	if err != nil {
		return fmt.Errorf("recv: %w", err)
	}
	spec.PipeSize = int64(n)
	if f.size != "" {
		n, err := config.ParseSize(f.size)
		if err != nil {
			return fmt.Errorf("recv: --size: %w", err)
		}
		spec.MaxFrame = n
	}

	rcv, err := job.Receive(cmd.Context(), spec, cliEnv(cmd))
	if err != nil {
		return startError(cmd, "recv: ", err)
	}
	markStarted(cmd) // the input is valid: what fails from here on is the run
	stderr := cmd.ErrOrStderr()
	if info := rcv.Info(); rcv.Kind() == backend.KindNetwork {
		// A line that scripts and tests wait for before starting the sender.
		mode := info.Mode
		if info.Reason != "" && info.Reason != "--no-rx-ring" {
			mode += ": " + info.Reason
		}
		fmt.Fprintf(stderr, "wpg recv: receiving on %s (%s, %s)\n", info.Interface, info.Backend, mode)
	}
	var progress func(recv.Progress)
	if report.IsTerminal(stderr) {
		progress = func(p recv.Progress) {
			fmt.Fprintf(stderr, "\r%8.1fs  %d frames  %d corrupted  %d without signature ", p.Elapsed.Seconds(), p.Frames, p.Corrupted, p.Unsigned)
		}
	}
	res, err := rcv.Wait(progress)
	if progress != nil {
		fmt.Fprintln(stderr)
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		res.WriteTable(out)
	}
	var failed *report.CheckFailure
	if errors.As(err, &failed) {
		return &ExitError{Code: exitVerifyFailed, Err: fmt.Errorf("recv: %w", failed)}
	}
	return err
}
