package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	reporthtml "github.com/wpg-dev/wpg/report/html"
)

func init() { register(newReportCmd) }

// maxReportFile bounds one report read by wpg report merge.
const maxReportFile = 256 << 20

func newReportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "work with wpg's JSON reports: merge the reports of one job's segments, write one as an HTML page",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var out string
	merge := &cobra.Command{
		Use:   "merge REPORT.json REPORT.json...",
		Short: "merge the reports of one job's segments (or of several receivers) into one report of the same schema",
		Long: `merge reads the JSON reports (--json) of the segments of one job (wpg send --segment I/N) and writes one
report of the same schema, as if one sender had sent everything: frames, bytes and each stream's frames
summed, the rates over the union of the runs' time spans, the lateness percentiles from the merged
histograms (never averaged), the receivers' verifications merged, the workers of every segment listed
with their segment, and every report's backend, environment and provenance kept in inputs[]. It refuses
reports of different jobs (their job identity: template, count, duration, rate, workers, segments),
of other schema versions, and a segment given twice; it notes segments that are missing.

Reports of several wpg recv (their --json) merge the same way: counts summed, latency percentiles from
the merged histograms, the rates summed (the receivers of one job run at the same time).

Without -o the merged JSON goes to standard output; with -o FILE it goes to FILE and its table to
standard output. wpg plot draws a merged report like any other (docs/distributed.md).`,
		Example: `  wpg report merge seg-0.json seg-1.json seg-2.json -o merged.json
  wpg plot merged.json -o merged.svg`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMerge(cmd, args, out) },
	}
	merge.Flags().StringVarP(&out, "output", "o", "", "write the merged report's JSON to `FILE` (and its table to standard output); default: the JSON to standard output")
	cmd.AddCommand(merge, newReportHTMLCmd())
	return cmd
}

func newReportHTMLCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "html REPORT.json",
		Short: "write a report as one self-contained HTML page to hand over: summary, per-stream table, charts, environment",
		Long: `html reads the JSON of wpg send, bench (a run or the matrix), recv, ndr or report merge ("-" reads
standard input) and writes one HTML file: the summary, the notes, charts (the rate over time with the
target, loss, latency and lateness per interval where --interval gave them; the rate per stream; the
lateness and latency percentiles; a matrix's ranking per size), the per-stream table (a receiver's per
stream, a matrix's rows, ndr's sizes), the workers, the reports merged, the environment and the report's
JSON itself. Styles and charts (SVG) are inline: no script, font, image or stylesheet is fetched, and
the file holds no URL, so it opens anywhere, offline, as it was written.`,
		Example: `  wpg send examples/mixed.wpg.yaml --count 60000 --interval 1s --json > run.json && wpg report html run.json -o run.html
  wpg report merge seg-*.json -o merged.json && wpg report html merged.json -o merged.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReportHTML(cmd, args[0], out) },
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the page to `FILE` (default: standard output)")
	return cmd
}

func runReportHTML(cmd *cobra.Command, in, out string) error {
	b, err := readReport(cmd, in)
	if err != nil {
		return usageError(fmt.Errorf("report html: %w", err))
	}
	var buf bytes.Buffer
	if err := reporthtml.Render(&buf, b); err != nil {
		return usageError(fmt.Errorf("report html: %s: %w", in, err))
	}
	markStarted(cmd) // the input was good: what fails from here on is the writing
	if out == "" {
		_, err := cmd.OutOrStdout().Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report html: -o: %w", err)
	}
	return nil
}

// reportDoc is a report file read for a merge.
type reportDoc struct {
	name   string
	schema string
	raw    []byte
}

func runMerge(cmd *cobra.Command, files []string, out string) error {
	var docs []reportDoc
	seen := map[string]os.FileInfo{}
	for _, name := range files {
		if st, err := os.Stat(name); err == nil && name != "-" {
			for prev, pst := range seen {
				if os.SameFile(st, pst) {
					return usageError(fmt.Errorf("report merge: %s is %s again: give each report once (the same report twice counts its frames twice)", name, prev))
				}
			}
			seen[name] = st
		}
		b, err := readReport(cmd, name)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("report merge: %w", err)}
		}
		var head struct {
			Schema string `json:"schema"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return usageError(fmt.Errorf("report merge: %s: not a wpg JSON report: %v; give the JSON that wpg send or recv --json wrote", name, report.JSONError(b, err)))
		}
		if len(docs) > 0 && kind(head.Schema) != kind(docs[0].schema) {
			return usageError(fmt.Errorf("report merge: %s is a %s report and %s a %s report: merge the senders' reports (wpg send) or the receivers' (wpg recv), not both", name, head.Schema, docs[0].name, docs[0].schema))
		}
		docs = append(docs, reportDoc{name, head.Schema, b})
	}
	var merged any
	var table func(io.Writer)
	switch kind(docs[0].schema) {
	case "send":
		var in []report.Named
		for _, d := range docs {
			var r report.Report
			if err := json.Unmarshal(d.raw, &r); err != nil {
				return usageError(fmt.Errorf("report merge: %s: %v", d.name, report.JSONError(d.raw, err)))
			}
			in = append(in, report.Named{Name: d.name, Report: &r})
		}
		m, err := report.Merge(in...)
		if err != nil {
			return usageError(fmt.Errorf("report merge: %w", err))
		}
		prov := provenance()
		m.Provenance = &prov
		merged, table = m, m.WriteTable
	case "recv":
		m, err := mergeReceivers(docs)
		if err != nil {
			return usageError(fmt.Errorf("report merge: %w", err))
		}
		merged, table = m, m.Result.WriteTable
	default:
		return usageError(fmt.Errorf("report merge: %s: schema %q: merge takes the reports of wpg send and bench (%s) or wpg recv (%s)", docs[0].name, docs[0].schema, report.Schema, recv.Schema))
	}
	markStarted(cmd) // the input was good: what fails from here on is the writing
	if out == "" {
		return writeJSON(cmd.OutOrStdout(), merged)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, merged); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report merge: -o: %w", err)
	}
	table(cmd.OutOrStdout())
	return nil
}

// kind is "send" for a sender's report schema, "recv" for a receiver's.
func kind(schema string) string {
	switch {
	case strings.HasPrefix(schema, "wpg.report/"):
		return "send"
	case strings.HasPrefix(schema, "wpg.recv/"):
		return "recv"
	}
	return schema
}

// readReport reads one report ("-": standard input), bounded.
func readReport(cmd *cobra.Command, name string) ([]byte, error) {
	r, err := openInput(cmd, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxReportFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxReportFile {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a wpg report", name, maxReportFile>>20)
	}
	return b, nil
}

// openInput opens the file name for reading, or standard input for "-"
// (which closing leaves open).
func openInput(cmd *cobra.Command, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(cmd.InOrStdin()), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}

// mergedRecv is the merged report of several receivers: the form of wpg
// recv --json, with the inputs' provenance.
type mergedRecv struct {
	recv.Result
	Job              string             `json:"job,omitempty"`
	LatencyHistogram json.RawMessage    `json:"latency_histogram,omitempty"`
	Provenance       *report.Provenance `json:"provenance,omitempty"`
	Inputs           []recvInput        `json:"inputs"`
}

// recvInput is one receiver's report in a merge.
type recvInput struct {
	File       string             `json:"file"`
	Frames     uint64             `json:"frames"`
	Seconds    float64            `json:"seconds"`
	Backend    any                `json:"backend,omitempty"`
	Provenance *report.Provenance `json:"provenance,omitempty"`
}

// mergeReceivers merges wpg recv --json reports with recv.Merge,
// refusing one whose latency lacks the histogram behind it.
func mergeReceivers(docs []reportDoc) (*mergedRecv, error) {
	var rs []recv.Result
	m := &mergedRecv{}
	for _, d := range docs {
		if d.schema != recv.Schema {
			return nil, fmt.Errorf("%s: schema %q, not %s; merge the reports of this wpg's recv", d.name, d.schema, recv.Schema)
		}
		r, err := recv.UnmarshalPeer(d.raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.name, report.JSONError(d.raw, err))
		}
		if r.Latency != nil && !r.HasHistogram() {
			return nil, errors.New(d.name + ": has a latency but no latency_histogram (an older wpg recv): its percentiles cannot be merged exactly; run the receiver again with this wpg")
		}
		var extra struct {
			Job        string             `json:"job"`
			Provenance *report.Provenance `json:"provenance"`
			Inputs     []recvInput        `json:"inputs"`
		}
		_ = json.Unmarshal(d.raw, &extra)
		if len(extra.Inputs) > 0 {
			files := make([]string, len(extra.Inputs))
			for i, x := range extra.Inputs {
				files[i] = x.File
			}
			return nil, fmt.Errorf("%s: is a merged report (of %s): its receivers would count again beside their own reports; merge the receivers' own reports (wpg recv --json) all at once: wpg report merge %s …", d.name, strings.Join(files, ", "), strings.Join(files, " "))
		}
		if len(m.Inputs) == 0 {
			m.Job = extra.Job
		} else if extra.Job != m.Job {
			return nil, fmt.Errorf("%s is of job %q, and %s of job %q: merge the receivers of one job (wpg recv --job)", d.name, extra.Job, docs[0].name, m.Job)
		}
		m.Inputs = append(m.Inputs, recvInput{File: d.name, Frames: r.Frames, Seconds: r.Seconds, Backend: r.Backend, Provenance: extra.Provenance})
		rs = append(rs, r)
	}
	m.Result = recv.Merge(rs...)
	if b, err := m.Result.MarshalPeer(); err == nil {
		var peer struct {
			Hist json.RawMessage `json:"latency_histogram"`
		}
		if json.Unmarshal(b, &peer) == nil {
			m.LatencyHistogram = peer.Hist
		}
	}
	prov := provenance()
	m.Provenance = &prov
	return m, nil
}
