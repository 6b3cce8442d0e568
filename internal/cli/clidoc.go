package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// WriteCLIReference writes the Markdown CLI reference (docs/cli.md) from the
// commands themselves, so the document cannot drift from the flags.
func WriteCLIReference(w io.Writer) {
	root := NewRoot()
	fmt.Fprintln(w, "# CLI reference")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated from the commands by `go test ./internal/cli -run TestCLIReference -update`; do not edit by hand.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "```")
	fmt.Fprint(w, root.Long+"\n")
	fmt.Fprintln(w, "```")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Global flags:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "```")
	fmt.Fprint(w, root.PersistentFlags().FlagUsages())
	fmt.Fprintln(w, "```")
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		writeCommand(w, c)
	}
}

func writeCommand(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "\n## wpg %s\n\n%s\n\n", c.Name(), c.Short)
	fmt.Fprintln(w, "```")
	fmt.Fprintf(w, "wpg %s\n", c.Use)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	}
	fmt.Fprintln(w, "```")
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
	}
	if fl := c.LocalFlags().FlagUsages(); fl != "" {
		fmt.Fprintf(w, "\nFlags:\n\n```\n%s```\n", fl)
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			writeCommand(w, sub)
		}
	}
}
