package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/membench"
)

func init() { register(newMembenchCmd) }

func newMembenchCmd() *cobra.Command {
	var (
		sizes, methods, minBytes, reader, copyImpl string
		iters                                      int
		pin, thp, asJSON, peer                     bool
	)
	names := make([]string, len(membench.AllMethods()))
	for i, m := range membench.AllMethods() {
		names[i] = string(m)
	}
	// Every reader wpg has, not only those this CPU runs: the help (and
	// docs/cli.md) must not depend on the machine. The report and wpg
	// sysinfo say which this CPU can run.
	readers := append([]string{"auto"}, memread.Names()...)
	cmd := &cobra.Command{
		Use:   "membench [flags]",
		Short: "two-process bandwidth matrix: sizes × (memcpy, shm copy/in place, CMA, xpmem, pipe), cold and warm",
		Long: `membench measures how fast a buffer moves between two processes on this machine, as the
matrix of the xpmem benchmark wpg grew from: for every size, every method, cold (iteration 1, first
touch of fresh buffers) and warm (mean of iterations 2..N), plus the best iteration.

Methods: LOCAL-cpy (copy within one process, the memory-bandwidth reference), SHM-cpy (the exporter's
memfd mapped and copied out), SHM-dir (the memfd read in place), CMA-cpy (process_vm_readv, the
stock-kernel analogue of XPMEM-cpy), XPMEM-cpy and XPMEM-dir (where /dev/xpmem exists), PIPE (write
into a pipe enlarged to /proc/sys/fs/pipe-max-size, read out). wpg starts the exporting process itself
(no privileges needed). Every run is verified: the importer's read or copy yields a checksum that must
equal the exporter's, so nothing can be optimised away; a mismatch fails the command.`,
		Example: `  wpg membench
  wpg membench --sizes 4KiB,1MiB,64MiB --methods SHM-dir,CMA-cpy --iters 10
  wpg membench --json > membench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if peer {
				markStarted(cmd)
				return membench.ServePeer()
			}
			if iters < 1 {
				return fmt.Errorf("--iters %d: want at least 1 (the first iteration is the cold one)", iters)
			}
			cfg := membench.Config{Iters: iters, Pin: pin, HugePages: thp, Reader: reader, Copy: copyImpl}
			var err error
			if cfg.Sizes, err = membench.ParseSizes(sizes); err != nil {
				return fmt.Errorf("--sizes: %w", err)
			}
			if cfg.Methods, err = membench.ParseMethods(methods); err != nil {
				return fmt.Errorf("--methods: %w", err)
			}
			switch minBytes {
			case "0", "off", "1op":
				cfg.MinBytes = -1
			default:
				if cfg.MinBytes, err = membench.ParseSize(minBytes); err != nil {
					return fmt.Errorf("--min-bytes: %w", err)
				}
			}
			if _, err := memread.Lookup(reader); err != nil {
				return fmt.Errorf("--reader: %w", err)
			}
			if _, err := memread.LookupCopy(copyImpl); err != nil {
				return fmt.Errorf("--copy: %w", err)
			}
			markStarted(cmd) // input checked: what fails from here is a runtime error
			stderr := cmd.ErrOrStderr()
			if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				cfg.Progress = func(r membench.Result) {
					fmt.Fprintf(stderr, "\r\033[K%-9s %7s  warm %7.2f GB/s  cold %7.2f GB/s", r.Method, membench.FormatSize(r.Size), r.WarmGBps, r.ColdGBps)
				}
				defer fmt.Fprint(stderr, "\r\033[K")
			}
			markStarted(cmd) // the input is valid: what fails from here on is the run
			rep, runErr := membench.Run(cmd.Context(), cfg)
			if rep == nil {
				return runErr
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := rep.WriteJSON(out); err != nil {
					return err
				}
			} else {
				rep.WriteTable(out)
			}
			if runErr == nil && len(rep.Results) == 0 {
				var why []string
				for _, m := range rep.Methods {
					why = append(why, fmt.Sprintf("%s: %s", m.Name, m.Reason))
				}
				return fmt.Errorf("membench: none of the chosen methods can run on this machine (%s)", strings.Join(why, "; "))
			}
			if runErr != nil {
				if rep.Interrupted && errors.Is(runErr, context.Canceled) {
					return &ExitError{Code: ExitRuntime, Err: errors.New("membench interrupted (a stop signal: Ctrl-C or SIGTERM): the tables hold the cells that finished")}
				}
				if errors.Is(runErr, membench.ErrVerification) {
					return &ExitError{Code: ExitCheckFailed, Err: runErr}
				}
				return runErr
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sizes, "sizes", "4KiB,64KiB,1MiB,16MiB,64MiB,256MiB,512MiB,1GiB", "buffer sizes, comma-separated (KiB = K = 1024 bytes, KB = 1000: see Units)")
	fl.StringVar(&methods, "methods", "all", "methods, comma-separated: "+strings.Join(names, ", "))
	fl.IntVar(&iters, "iters", 5, "timed iterations per cell; the first is cold, the rest warm")
	fl.StringVar(&minBytes, "min-bytes", "64MiB", "each warm iteration repeats the operation until this much has moved, at most 1048576 times (0 = one operation per iteration, as the seed benchmark timed)")
	fl.BoolVar(&pin, "pin", false, "pin the importer and the exporter to different CPUs")
	fl.BoolVar(&thp, "thp", false, "transparent huge pages (MADV_HUGEPAGE) for the private buffers: fewer page faults in the cold iteration")
	fl.StringVar(&reader, "reader", "auto", "in-place reader: "+strings.Join(readers, ", ")+" (auto: the best this CPU runs; wpg sysinfo and the report list them)")
	fl.StringVar(&copyImpl, "copy", "auto", "copy of the -cpy methods: auto (AVX-512 assembly where the CPU has it) or go (the runtime's copy())")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON (schema "+membench.Schema+")")
	fl.BoolVar(&peer, "peer", false, "internal: run as the exporting process started by membench")
	_ = fl.MarkHidden("peer")
	return cmd
}
