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
	fmt.Fprintln(w, "Generated from the commands by `go test ./cmd/wpg/cli -run TestCLIReference -update`; do not edit by hand.")
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
	writeExitCodes(w)
	writeUnits(w)
}

// writeUnits documents, once, how every command reads sizes, counts and
// rates (package units, package pace).
func writeUnits(w io.Writer) {
	fmt.Fprint(w, `
## Units

Every size wpg reads (--size, --ring-bytes, --prerender-max-bytes, --pipe-size, membench --sizes and
--min-bytes, sizes in wpg.toml) follows one rule:

| written | means |
| --- | --- |
| 4096, 4096B | bytes |
| 1KB, 1kB, 1MB, 1GB, 1TB, 1PB | powers of 1000: 1KB = 1000 bytes, 1MB = 1,000,000 |
| 1KiB, 1MiB, 1GiB, 1TiB, 1PiB | powers of 1024: 1KiB = 1024 bytes, 1MiB = 1,048,576 |
| 1K, 1M, 1G, 1T, 1P | powers of 1024, as dd(1) reads them (1K = 1KiB) |
| 1.5MiB | a fraction is allowed when the result is a whole number of bytes |

The unit may follow a space ("16 MiB" in wpg.toml); the prefix letter may be lower case. A value beyond
what the setting takes is an error naming the largest (or smallest) value. Reports print sizes the same
way (16 MiB, 1 MB, 1000032 B), so a printed size can be pasted back as a flag value.

--size on a local or device path (pipe, shm, cma, unix, memcpy, xpmem) is the payload of each frame; the
frame adds a 32-byte wpg header unless --raw, so --size 1MB moves frames of 1,000,032 bytes; the report
shows both, the frame size on its frames line and the payload on its bytes line ("of payload"). On a
network backend --size is the frame size of the default template.

Rates and counts are decimal: --rate 1Mpps is 1,000,000 frames/s, 10Gbps is 10^10 bit/s, 250kpps is
250,000 frames/s; TRex's 1mpps and 10gbps, tc's 100mbit and iperf3's 10M mean what they mean there
(docs/rate.md lists every spelling). Durations take Go's units (500ms, 10s, 1m30s; a bare number is not
a duration: write 10s).

## Man pages and shell completion

`+"`wpg man DIR`"+` writes a section-1 man page for every command (wpg.1, wpg-send.1, …) from the same command
tree as this page: `+"`man -l DIR/wpg-send.1`"+`. `+"`wpg completion bash|zsh|fish|powershell`"+` prints a completion
script (`+"`source <(wpg completion bash)`"+`) that completes flag values as well as names: --backend with this
build's backends (recv: those that receive), -i and --rx-interface with the interfaces of the current network
namespace, --profile with the configuration file's profiles, --plan, --wait, --clock, --rate-layer,
--wake-boost, --xdp-mode, --tx-copy, --fill, --verify and --format with their words, --rate (ndr:
--max-rate, --min-rate) with example rates and what each means (1Mpps, 10Gbps, 1Gbit/s, 50%, …; no file
names), ndr's --router-shape with example bit rates (20Mbps, 100Mbps, 1Gbit/s), and a command's TEMPLATE
with YAML files (the example templates are examples/*.wpg.yaml). File names are offered only for values
that are paths (--config, -o, --hdr-out, --pcap, --payload-file, --fifo, --connect, recv's --listen,
--device, --netns, serve's --db and --token-file; --job-files, --dev-root and --sys-root: directories);
other flags complete their values or nothing.
`)
}

// writeCommand writes c's section, headed by its whole path (wpg dmabuf
// bench: a nested command's name alone is another command, or none), and
// its subcommands' after it.
func writeCommand(w io.Writer, c *cobra.Command) {
	parent := strings.TrimSuffix(c.CommandPath(), c.Name()) // "wpg dmabuf "
	fmt.Fprintf(w, "\n## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	fmt.Fprintln(w, "```")
	fmt.Fprintf(w, "%s%s\n", parent, c.Use)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	}
	fmt.Fprintln(w, "```")
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
	}
	for _, s := range flagSections(c) {
		fmt.Fprintf(w, "\n%s:\n\n```\n%s```\n", s.Title, s.Usages)
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden {
			writeCommand(w, sub)
		}
	}
}
