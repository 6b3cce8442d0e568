package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The rule that a flag set where it does not apply is a usage error lives
// in package job (an OptionError on the Spec field): the CLI puts such a
// flag into the Spec only when the user set it (Flags().Changed), so that
// defaults never trip it, and names the field by its flag (fieldFlag).

// changed returns the flag named name if cmd has it and the user set it.
func changed(cmd *cobra.Command, name string) *pflag.Flag {
	fl := cmd.Flags().Lookup(name)
	if fl == nil || !fl.Changed {
		return nil
	}
	return fl
}
