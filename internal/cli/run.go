package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
)

// runJob is what `wpg send` and `wpg bench` have in common: map the flags
// and wpg.toml onto a job.Spec, start the job, show progress, print the
// report and map the outcome to the exit code.
func runJob(cmd *cobra.Command, f *runFlags, command, templatePath string) error {
	spec, err := sendSpec(cmd, f, command, templatePath)
	if err != nil {
		return err
	}
	run, err := job.Start(cmd.Context(), spec, cliEnv(cmd))
	if err != nil {
		return startError(cmd, "", err)
	}
	markStarted(cmd) // the input is valid: what fails from here on is the run
	prog := report.StartProgress(cmd.ErrOrStderr(), 500*time.Millisecond, func() (uint64, uint64, time.Duration) {
		s := run.Snapshot()
		return s.Frames, s.Bytes, s.Elapsed
	})
	<-run.Done()
	prog.Stop()
	rep, runErr := run.Report(), run.Err()
	if rep == nil {
		// Nothing started (a backend could not open): the error is the whole story.
		return &ExitError{Code: ExitRuntime, Err: runErr}
	}

	// The report goes to stdout unless stdout carries the data (pipe).
	out := cmd.OutOrStdout()
	if job.DataOnStdout(spec) {
		out = cmd.ErrOrStderr()
	}
	if f.json {
		if err := rep.WriteJSON(out); err != nil {
			return err
		}
	} else {
		rep.WriteTable(out)
	}
	if runErr != nil {
		if rep.Frames == 0 {
			// Nothing ran: the error is the whole story.
			return &ExitError{Code: ExitRuntime, Err: runErr}
		}
		return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("run stopped by an error after %d frames: %w", rep.Frames, runErr)}
	}
	if rep.Failed != nil {
		return &ExitError{Code: ExitCheckFailed, Err: rep.Failed}
	}
	return nil
}

// sendSpec maps send's and bench's flags and wpg.toml onto a job.Spec. A
// flag that the applies-only-to rule covers goes into the Spec only when
// the user set it, so that defaults never trip the rule.
func sendSpec(cmd *cobra.Command, f *runFlags, command, templatePath string) (job.Spec, error) {
	cfg, err := applyConfig(cmd, f)
	if err != nil {
		return job.Spec{}, err
	}
	if err := checkPinFlags(cmd, f); err != nil {
		return job.Spec{}, err
	}
	set := func(name string) bool { return changed(cmd, name) != nil }
	s := job.Spec{
		Command:  command,
		Template: templatePath,
		Backend:  f.backend,

		Interface:   f.iface,
		NoTxRing:    f.noTxRing,
		QdiscBypass: f.qdiscBypass,
		BusyPoll:    f.busyPoll,
		Output:      f.output,
		Format:      f.format,
		FIFO:        f.fifo,
		Vmsplice:    f.vmsplice,
		Connect:     f.connect,
		RecvMode:    f.recvMode,
		BusyWait:    f.busyWait,
		Slots:       f.slots,
		// bench is one command: a local path starts its own receiver.
		StartReceiver: command == "bench",

		Rate:       f.rate,
		RateLayer:  f.rateLayer,
		Burst:      f.burst,
		RTPriority: f.rtPriority,
		Clock:      f.clock,

		Count:    f.count,
		Duration: f.duration,
		Workers:  f.workers,
		Batch:    f.batch,
		AutoPin:  f.autoPin,
		Cores:    f.pinCores,

		Size:        f.size,
		Raw:         f.raw,
		PayloadFile: f.payloadFile,

		Limits: job.Limits{
			RingBytes:           cfg.TX.RingBytes,
			PrerenderMaxBytes:   cfg.TX.PrerenderMaxBytes,
			PrerenderMaxPackets: cfg.TX.PrerenderMaxPackets,
		},
	}
	if f.pinCore >= 0 {
		s.Cores = strconv.Itoa(f.pinCore)
	}
	if set("ring-depth") {
		s.RingDepth = f.ringDepth
		if f.ringDepth < 1 {
			return s, fmt.Errorf("--ring-depth %d: must be at least 1", f.ringDepth)
		}
	}
	if set("ring-bytes") {
		s.RingBytes = cfg.TX.RingBytes
	}
	if set("prerender-max-bytes") {
		s.PrerenderMaxBytes = cfg.TX.PrerenderMaxBytes
	}
	if set("prerender-max-packets") {
		s.PrerenderMaxPackets = cfg.TX.PrerenderMaxPackets
	}
	if set("tx-copy") {
		s.TxCopy = f.txCopy
	}
	if set("queue") {
		s.Queue = &f.queue
	}
	if set("xdp-mode") {
		s.XDPMode = f.xdpMode
	}
	if set("wait") {
		s.Wait = f.wait
	}
	if set("wake-boost") {
		s.WakeBoost = f.wakeBoost
	}
	if set("fail-under") {
		s.FailUnder = &f.failUnder
	}
	if set("plan") {
		s.Plan = f.plan
	}
	if set("fill") {
		s.Fill = f.fill
	}
	if set("seed") {
		s.Seed = &f.seed
	}
	if set("verify") {
		s.Verify = f.verify
	}
	n, err := parsePipeSize(f.pipeSize)
	s.PipeSize = int64(n)
	return s, err
}

// checkPinFlags checks what only the flags can get wrong: --pin-core,
// --pin-cores and --auto-pin are three ways to say job.Spec's Cores and
// AutoPin.
func checkPinFlags(cmd *cobra.Command, f *runFlags) error {
	var pins []string
	for _, name := range []string{"pin-core", "pin-cores", "auto-pin"} {
		if changed(cmd, name) != nil {
			pins = append(pins, "--"+name)
		}
	}
	switch {
	case len(pins) > 1:
		return fmt.Errorf("%s each choose the workers' CPUs: give only one of them", strings.Join(pins, " and "))
	case f.pinCore < -1:
		return fmt.Errorf("--pin-core %d: give a CPU number (0 or more), or leave it out for no pinning", f.pinCore)
	case f.pinCore >= 0 && f.workers != 1:
		return fmt.Errorf("--pin-core pins one worker, got --workers %d: use --pin-cores or --auto-pin", f.workers)
	}
	return nil
}

// cliEnv is the job environment of a command: the process's streams
// where cobra's are files (a test's buffers are not).
func cliEnv(cmd *cobra.Command) job.Env {
	var env job.Env
	if f, ok := cmd.InOrStdin().(*os.File); ok {
		env.Stdin = f
	}
	if f, ok := cmd.OutOrStdout().(*os.File); ok {
		env.Stdout = f
	}
	if f, ok := cmd.ErrOrStderr().(*os.File); ok {
		env.Stderr = f
	}
	return env
}

// startError maps an error of job.Start or job.Receive to the exit code:
// the Spec's problems are usage errors, shown as one line with the flags'
// names (the first problem; the others follow from the same input more
// often than not), anything else a runtime error.
func startError(cmd *cobra.Command, prefix string, err error) error {
	if ps := job.AsProblems(err); len(ps) > 0 {
		return &ExitError{Code: ExitUsage, Err: &flagMessage{msg: prefix + formatProblem(cmd, ps[0]), err: err}}
	}
	markStarted(cmd)
	return &ExitError{Code: ExitRuntime, Err: err}
}

// flagMessage is a job error told in the command line's words.
type flagMessage struct {
	msg string
	err error
}

func (m *flagMessage) Error() string { return m.msg }
func (m *flagMessage) Unwrap() error { return m.err }

// specFlags maps the job.Spec and job.RecvSpec fields whose flag is not
// the field's name with dashes; "" is a field with no flag (the template
// argument).
var specFlags = map[string]string{
	"cores":          "pin-cores",
	"template":       "",
	"template_text":  "",
	"start_receiver": "",
	"max_frame":      "size",
}

// formatProblem tells p in cmd's words: the field at fault as the flag
// ("-o/--output", "--rate"), fields named in the text in their short form
// ("add -o FILE.pcap").
func formatProblem(cmd *cobra.Command, p *job.OptionError) string {
	head := func(field string) string {
		if fl := fieldFlag(cmd, field); fl != nil {
			return flagName(fl)
		}
		return fieldFlagName(cmd, field)
	}
	mention := func(field string) string {
		fl := fieldFlag(cmd, field)
		switch {
		case fl == nil:
			return fieldFlagName(cmd, field)
		case fl.Shorthand != "":
			return "-" + fl.Shorthand
		}
		return "--" + fl.Name
	}
	return p.Format(head, mention)
}

// fieldFlagName is the name of field's flag on cmd (without dashes), or
// "" when the field has none.
func fieldFlagName(cmd *cobra.Command, field string) string {
	name, ok := specFlags[field]
	if !ok {
		name = strings.ReplaceAll(field, "_", "-")
	}
	if field == "cores" && changed(cmd, "pin-core") != nil {
		name = "pin-core"
	}
	return name
}

// fieldFlag is field's flag on cmd, or nil.
func fieldFlag(cmd *cobra.Command, field string) *pflag.Flag {
	name := fieldFlagName(cmd, field)
	if name == "" {
		return nil
	}
	return cmd.Flags().Lookup(name)
}
