package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/job"
)

// startError maps an error of job.Start or job.Receive to the exit code:
// the Spec's problems are usage errors, shown as one line with the flags'
// names (the first problem; the others follow from the same input more
// often than not), anything else a runtime error.
func startError(cmd *cobra.Command, prefix string, o origins, err error) error {
	if ps := job.AsProblems(err); len(ps) > 0 {
		return &ExitError{Code: ExitUsage, Err: &flagMessage{msg: prefix + formatProblem(cmd, o, ps[0]), err: err}}
	}
	markStarted(cmd)
	return &ExitError{Code: ExitRuntime, Err: o.interfaceError(prefix, err)}
}

// interfaceError is err, or, when err is about an interface that came
// from wpg.toml (o), err named by its key and place, not as -i.
func (o origins) interfaceError(prefix string, err error) error {
	key, ok := o["interface"]
	ie := (*backend.InterfaceError)(nil)
	if !ok || !errors.As(err, &ie) || ie.Interface == "" {
		return err
	}
	file := key[strings.LastIndex(key, "(")+1:]
	file = file[:max(strings.LastIndex(file, ":"), 0)]
	msg := strings.Replace(err.Error(), " (-i IFACE)", "", 1)
	return &flagMessage{msg: prefix + key + ": " + msg + "; correct it in " + file + ", or give -i IFACE", err: err}
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
// ("add -o FILE.pcap"); a field whose value came from wpg.toml (o) as its
// key and place ("send.rate (wpg.toml:4)").
func formatProblem(cmd *cobra.Command, o origins, p *job.OptionError) string {
	head := func(field string) string {
		if key, ok := o[field]; ok {
			return key
		}
		if fl := fieldFlag(cmd, field); fl != nil {
			return flagName(fl)
		}
		return fieldFlagName(cmd, field)
	}
	mention := func(field string) string {
		if key, ok := o[field]; ok {
			return key
		}
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
