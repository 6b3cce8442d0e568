package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wpg-dev/wpg/backend"
)

// One rule for flags that do nothing in the run the user asked for: a flag
// set explicitly (Flags().Changed) where it does not apply is a usage
// error that says where it applies. Defaults never trip it.
//
// Backend-specific flags (backend.SpecificFlags) apply to the backends
// whose Registration.Flags name them; the flag classes below apply to a
// kind of run.
var (
	// payloadFlags shape payload frames (local and device paths).
	payloadFlags = []string{"raw", "fill", "payload-file", "seed", "verify"}
	// packetFlags shape how packet templates are rendered (network and
	// reference paths).
	packetFlags = []string{"plan", "prerender-max-bytes", "prerender-max-packets"}
	// pacedFlags tune rate control, so they need --rate.
	pacedFlags = []string{"burst", "wait", "wake-boost", "rt-priority", "fail-under"}
	// txRingFlags tune the afpacket TX ring, which --no-tx-ring turns off.
	txRingFlags = []string{"ring-depth", "tx-copy"}
	// plannedFor names the backends a flag is for that this build does not
	// have yet (docs/architecture.md, "What comes next").
	plannedFor = map[string]string{"queue": "afxdp and dpdk", "xdp-mode": "afxdp", "busy-poll": "afxdp"}
)

// changed returns the flag named name if cmd has it and the user set it.
func changed(cmd *cobra.Command, name string) *pflag.Flag {
	fl := cmd.Flags().Lookup(name)
	if fl == nil || !fl.Changed {
		return nil
	}
	return fl
}

// checkBackendFlags rejects every backend-specific flag the user set that
// backend reg does not read.
func checkBackendFlags(cmd *cobra.Command, reg backend.Registration) error {
	for _, name := range backend.SpecificFlags {
		fl := changed(cmd, name)
		if fl == nil || reg.Reads(name) {
			continue
		}
		names := backend.Reading(name)
		switch {
		case len(names) == 0 && plannedFor[name] != "":
			return fmt.Errorf("%s applies to backend %s, which this build does not have: drop %s", flagName(fl), plannedFor[name], flagName(fl))
		case len(names) == 0:
			return fmt.Errorf("%s applies to no backend of this build: drop it", flagName(fl))
		case len(names) == 1:
			return fmt.Errorf("%s applies to backend %s, not to %s: drop %s, or use --backend %s", flagName(fl), names[0], reg.Name, flagName(fl), names[0])
		}
		return fmt.Errorf("%s applies to backends %s, not to %s: drop %s, or use one of those backends", flagName(fl), strings.Join(names, ", "), reg.Name, flagName(fl))
	}
	if fl := changed(cmd, "verify"); fl != nil && !reg.Payload {
		return fmt.Errorf("%s checks payload frames (backends %s), not the packets of %s: drop %s (packets carry their own checksums)", flagName(fl), strings.Join(backendsWhere(true), ", "), reg.Name, flagName(fl))
	}
	return nil
}

// checkRunFlags applies the rule to send's and bench's flags: the
// backend-specific ones, the payload and template ones, the paced ones
// (paced: whether --rate gives a rate), the TX-ring ones and the pinning
// ones. templatePath is the template argument ("" = none).
func checkRunFlags(cmd *cobra.Command, f *runFlags, reg backend.Registration, templatePath string, paced bool) error {
	if err := checkBackendFlags(cmd, reg); err != nil {
		return err
	}
	if reg.Payload {
		if templatePath != "" {
			return fmt.Errorf("backend %s carries payload frames (--size, --fill), not packet templates: drop %s, or use one of the backends %s", reg.Name, templatePath, strings.Join(backendsWhere(false), ", "))
		}
		for _, name := range packetFlags {
			if fl := changed(cmd, name); fl != nil {
				return fmt.Errorf("%s applies to packet templates (backends %s), not to the payload frames of %s: drop %s", flagName(fl), strings.Join(backendsWhere(false), ", "), reg.Name, flagName(fl))
			}
		}
		if fl := changed(cmd, "seed"); fl != nil && f.fill != "random" {
			return fmt.Errorf("%s seeds --fill random, but the fill is %q: add --fill random, or drop %s", flagName(fl), f.fill, flagName(fl))
		}
	} else {
		for _, name := range payloadFlags {
			if fl := changed(cmd, name); fl != nil {
				what := "the embedded default template"
				if templatePath != "" {
					what = "template " + templatePath
				}
				return fmt.Errorf("%s applies to payload frames (backends %s), not to %s on %s: drop %s", flagName(fl), strings.Join(backendsWhere(true), ", "), what, reg.Name, flagName(fl))
			}
		}
	}
	if !paced {
		for _, name := range pacedFlags {
			if fl := changed(cmd, name); fl != nil {
				return fmt.Errorf("%s tunes rate control, and this run is flat out: add --rate (e.g. --rate 1Mpps), or drop %s", flagName(fl), flagName(fl))
			}
		}
	}
	if f.noTxRing {
		for _, name := range txRingFlags {
			if fl := changed(cmd, name); fl != nil {
				return fmt.Errorf("%s tunes the TX ring, which --no-tx-ring turns off (sendmmsg): drop one of them", flagName(fl))
			}
		}
	}
	var pins []string
	for _, name := range []string{"pin-core", "pin-cores", "auto-pin"} {
		if changed(cmd, name) != nil {
			pins = append(pins, "--"+name)
		}
	}
	if len(pins) > 1 {
		return fmt.Errorf("%s each choose the workers' CPUs: give only one of them", strings.Join(pins, " and "))
	}
	return nil
}

// backendsWhere lists the sending backends that carry payload frames
// (payload true) or packet templates (false).
func backendsWhere(payload bool) []string {
	var names []string
	for _, r := range backend.All() {
		if r.Payload == payload && r.NewSender != nil {
			names = append(names, r.Name)
		}
	}
	return names
}

// checkRecvFlags applies the rule to recv's flags and checks the numbers
// the backends would otherwise take as they are.
func checkRecvFlags(cmd *cobra.Command, reg backend.Registration) error {
	if err := checkBackendFlags(cmd, reg); err != nil {
		return err
	}
	if n, err := cmd.Flags().GetInt("slots"); err == nil && n < 0 {
		return fmt.Errorf("recv: --slots %d: give a number of ring slots of 1 or more, or 0 for the sender's", n)
	}
	return nil
}

// checkOptions lets the backend check the values only it knows
// (Registration.Check) before anything runs.
func checkOptions(reg backend.Registration, o backend.Options) error {
	if reg.Check == nil {
		return nil
	}
	return reg.Check(o)
}
