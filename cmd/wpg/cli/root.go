// Package cli implements wpg's command line: one file per command, flag
// parsing with configuration precedence (defaults < wpg.toml < flags), and
// printing. It holds no data-path logic of its own.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/cmd/wpg/cli/config"
	"github.com/wpg-dev/wpg/internal/inputerr"
)

var builders []func() *cobra.Command

// register adds a subcommand builder; command files call it from init().
func register(b func() *cobra.Command) { builders = append(builders, b) }

// NewRoot builds the wpg root command with every registered subcommand.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "wpg",
		Short:         "wpg: Linux data-path generator and benchmark",
		Long:          "wpg builds frames (packets from templates, or payload frames) and pushes them through a data path\n(AF_PACKET, AF_XDP, DPDK, libpcap, pcap files, pipes, shared memory, cross-process memory, DMA buffers) flat out or at a precise rate,\nand reports throughput, rate accuracy and jitter.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // wpg --version prints what wpg version prints
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().String("config", "", "configuration file (default: $WPG_CONFIG, ./wpg.toml, $XDG_CONFIG_HOME/wpg/wpg.toml)")
	root.PersistentFlags().String("profile", "", "apply the configuration file's [profile.`NAME`] table over its keys (flags still go first; docs/config.md)")
	root.SetFlagErrorFunc(flagError)
	for _, b := range builders {
		root.AddCommand(b())
	}
	groupFlags(root) // flaggroups.go: send's flags in groups, in --help and docs/cli.md
	root.SetUsageTemplate(usageTemplate)
	explainArgs(root)
	addCompletions(root) // complete.go
	return root
}

// explainArgs makes every command's argument-count error show the usage
// line: "accepts at most 1 arg(s), received 2 (usage: wpg send
// [TEMPLATE.wpg.yaml] [flags])".
func explainArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return fmt.Errorf("%w (usage: %s; see %s --help)", err, cmd.UseLine(), cmd.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		explainArgs(sub)
	}
}

// Exit codes (docs/cli.md, "Exit codes").
const (
	// ExitRuntime: the run started and then failed (a backend could not
	// open, the path broke, a write failed).
	ExitRuntime = 1
	// ExitUsage: the input was rejected before anything ran: a bad or
	// unknown flag or flag value, a wrong argument count, a bad template
	// or configuration file.
	ExitUsage = 2
	// ExitCheckFailed: a check the user asked for failed: frames lost,
	// duplicated, corrupted or missing (recv --expect, a bench's own
	// receiver), or send --fail-under missed.
	ExitCheckFailed = 3
)

// writeExitCodes writes the "Exit codes" section of docs/cli.md.
func writeExitCodes(w io.Writer) {
	fmt.Fprintf(w, `
## Exit codes

Every command exits with one of these codes (as Go's flag package and POSIX tools do, a usage error is 2):

| code | meaning |
| --- | --- |
| 0 | success |
| %d | runtime error: the input was valid and the run started, then failed (a backend could not open, the path broke, a write failed); a report, when one was printed, says how far it got |
| %d | usage error, before anything ran: an unknown command or flag, a bad flag value or argument count, a flag that does not apply to the chosen backend or run, a bad template or wpg.toml |
| %d | a check failed: frames lost, duplicated, corrupted or missing (`+"`recv --expect`"+`, or the receiver that `+"`bench`"+` starts for a local path), or a paced run stayed under its `+"`--fail-under`"+` share of the target rate (send, bench) |

A flag set explicitly for a backend or run it does nothing for (`+"`--qdisc-bypass`"+` on null, `+"`--fill`"+` with a
template, `+"`--wait`"+` without `+"`--rate`"+`, `+"`--ring-depth`"+` with `+"`--no-tx-ring`"+`) is a usage error that names the
backends or the flag it applies to; defaults never are. Each backend declares the backend-specific flags it
reads (`+"`backend.Registration.Options`"+`).
`, ExitRuntime, ExitUsage, ExitCheckFailed)
}

// ExitError carries a process exit code through cobra.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// phaseKey is the context key of a command's *phase.
type phaseKey struct{}

// phase records whether a command got past validating its input: an error
// without an explicit ExitError code is a usage error (ExitUsage) before
// that point and a runtime error (ExitRuntime) after it.
type phase struct{ started bool }

// markStarted tells Main that cmd has validated its input and is about to
// touch the system (open a backend, start a peer, run a probe): errors
// from here on are runtime errors. Commands call it once, just before the
// first step that can fail for a reason other than bad input.
func markStarted(cmd *cobra.Command) {
	if p, ok := cmd.Context().Value(phaseKey{}).(*phase); ok {
		p.started = true
	}
}

// Main runs the CLI with args and returns the process exit code: 0, or
// ExitRuntime, ExitUsage or ExitCheckFailed.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ph := &phase{}
	err := root.ExecuteContext(context.WithValue(ctx, phaseKey{}, ph))
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "wpg: "+Explain(err))
	return exitCode(err, ph.started)
}

// exitCode maps an error to the process exit code: an ExitError's own
// code, else ExitUsage for an error before the command started (cobra's
// flag, argument and command errors included), else ExitRuntime.
func exitCode(err error, started bool) int {
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case started:
		return ExitRuntime
	}
	return ExitUsage
}

// usageError marks err as a usage error (ExitUsage) wherever it occurs.
func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// flagError is cobra's flag error function for every command: it turns
// pflag's parse errors ("invalid argument "-5" for "--count" flag:
// strconv.ParseUint: ...") into `flag --count: value "-5": reason; fix`.
func flagError(cmd *cobra.Command, err error) error {
	help := fmt.Sprintf("see %s --help", cmd.CommandPath())
	var inv *pflag.InvalidValueError
	var req *pflag.ValueRequiredError
	var nex *pflag.NotExistError
	switch {
	case errors.As(err, &inv):
		fl := inv.GetFlag()
		return usageError(fmt.Errorf("flag %s: value %q: %s", flagName(fl), inv.GetValue(), valueAdvice(fl, inv.GetValue(), inv.Unwrap())))
	case errors.As(err, &req):
		fl := req.GetFlag()
		return usageError(fmt.Errorf("flag %s needs a value: %s (%s)", flagName(fl), valueExample(fl), help))
	case errors.As(err, &nex):
		if hint := flagHint(cmd, nex.GetSpecifiedName()); hint != "" && nex.GetSpecifiedShortnames() == "" {
			return usageError(fmt.Errorf("%v: %s (%s)", err, hint, help))
		}
		return usageError(fmt.Errorf("%v (%s)", err, help))
	}
	return usageError(fmt.Errorf("%v (%s)", err, help))
}

// flagName is how the user may write fl: "--count", or "-n/--frames".
func flagName(fl *pflag.Flag) string {
	if fl.Shorthand != "" {
		return "-" + fl.Shorthand + "/--" + fl.Name
	}
	return "--" + fl.Name
}

// valueAdvice says what is wrong with value v of fl and how to write it.
func valueAdvice(fl *pflag.Flag, v string, cause error) string {
	var ne *strconv.NumError
	outOfRange := errors.As(cause, &ne) && errors.Is(ne.Err, strconv.ErrRange)
	switch fl.Value.Type() {
	case "uint", "uint8", "uint16", "uint32", "uint64":
		switch {
		case strings.HasPrefix(strings.TrimSpace(v), "-"):
			return "must not be negative; " + valueExample(fl)
		case outOfRange:
			return "too large: the largest is " + strconv.FormatUint(maxUint(fl.Value.Type()), 10) + "; " + valueExample(fl)
		}
		return "not a whole number; " + valueExample(fl)
	case "int", "int8", "int16", "int32", "int64":
		if outOfRange {
			m := maxUint(fl.Value.Type()) >> 1
			return fmt.Sprintf("out of range: give -%d to %d; %s", m+1, m, valueExample(fl))
		}
		return "not a whole number; " + valueExample(fl)
	case "float32", "float64":
		return "not a number; " + valueExample(fl)
	case "duration":
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return fmt.Sprintf("missing unit: write %ss (or %sms, %sus)", strings.TrimSpace(v), strings.TrimSpace(v), strings.TrimSpace(v))
		}
		return "not a duration; " + valueExample(fl)
	case "bool":
		return "write --" + fl.Name + " (true) or --" + fl.Name + "=false"
	}
	if cause != nil {
		return cause.Error()
	}
	return "invalid value (" + fl.Usage + ")"
}

// maxUint is the largest unsigned value of a flag type's width ("uint8",
// "int64", …; "int" and "uint" are the platform's).
func maxUint(typ string) uint64 {
	bits := strconv.IntSize
	if i := strings.IndexAny(typ, "0123456789"); i >= 0 {
		bits, _ = strconv.Atoi(typ[i:])
	}
	return 1<<bits - 1
}

// valueExample gives a valid way to write fl.
func valueExample(fl *pflag.Flag) string {
	switch fl.Value.Type() {
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "write a whole number of 0 or more, e.g. --" + fl.Name + " 1000"
	case "int", "int8", "int16", "int32", "int64":
		return "write a whole number, e.g. --" + fl.Name + " " + intExample(fl)
	case "float32", "float64":
		return "write a number, e.g. --" + fl.Name + " 0.95"
	case "duration":
		return "write a number with a unit (ns, us, ms, s, m, h), e.g. --" + fl.Name + " 500ms or 10s"
	case "bool":
		return "write --" + fl.Name + " or --" + fl.Name + "=false"
	}
	return "e.g. --" + fl.Name + " VALUE (" + fl.Usage + ")"
}

// intExample is the flag's default when it is a positive number, else 1.
func intExample(fl *pflag.Flag) string {
	if n, err := strconv.ParseInt(fl.DefValue, 10, 64); err == nil && n > 0 {
		return fl.DefValue
	}
	return "1"
}

// Explain turns an error into a one-line message, adding the fix for a
// refused permission when the error does not carry its own (an error that
// does implements inputerr.Fixer).
func Explain(err error) string {
	msg := err.Error()
	var fixed inputerr.Fixer
	if errors.Is(err, os.ErrPermission) && !errors.As(err, &fixed) {
		msg += " (run as root or grant the capability, e.g. sudo setcap cap_net_raw,cap_net_admin,cap_ipc_lock+ep $(which wpg))"
	}
	return msg
}

// loadConfig reads wpg.toml for a command: --config, else the locations
// config.Find names, with the environment variables read here (the config
// package reads no environment), and its --profile over the file's keys.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	profile, _ := cmd.Flags().GetString("profile")
	home, _ := os.UserHomeDir()
	return config.LoadProfile(path, profile, config.Env{
		WPGConfig:     os.Getenv("WPG_CONFIG"),
		XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"),
		Home:          home,
	})
}
