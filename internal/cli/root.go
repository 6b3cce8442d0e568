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
	"strings"

	"github.com/spf13/cobra"
)

var builders []func() *cobra.Command

// register adds a subcommand builder; command files call it from init().
func register(b func() *cobra.Command) { builders = append(builders, b) }

// NewRoot builds the wpg root command with every registered subcommand.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "wpg",
		Short:         "wpg: Linux data-path generator and benchmark",
		Long:          "wpg builds frames (packets from templates, or payload frames) and pushes them through a data path\n(AF_PACKET, pcap files, pipes, shared memory, cross-process memory, …) flat out or at a precise rate,\nand reports throughput, rate accuracy and jitter.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "configuration file (default: $WPG_CONFIG, ./wpg.toml, $XDG_CONFIG_HOME/wpg/wpg.toml)")
	for _, b := range builders {
		root.AddCommand(b())
	}
	return root
}

// ExitError carries a process exit code through cobra.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Main runs the CLI with args and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "wpg: "+Explain(err))
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// Explain turns an error into a one-line message, adding the fix for
// common system errors that the error itself does not name.
func Explain(err error) string {
	msg := err.Error()
	if errors.Is(err, os.ErrPermission) && !containsAny(msg, "CAP_", "sudo", "ulimit") {
		msg += " (run as root or grant the capability, e.g. sudo setcap cap_net_raw,cap_net_admin,cap_ipc_lock+ep $(which wpg))"
	}
	return msg
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
