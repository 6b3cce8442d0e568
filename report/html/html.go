// Package html renders wpg's JSON reports as one self-contained HTML page
// to hand to a colleague (`wpg report html`, and wpg serve's job page):
// the summary, the per-stream table, charts drawn as inline SVG, the
// workers, the environment and the report itself, with its styles inline
// and no script, font, image or stylesheet to fetch, so that the file
// opens anywhere, offline, as it was written. It reads every report wpg
// writes: wpg send and bench (wpg.report/v1 and v2, merged ones too),
// wpg recv (wpg.recv/v1, merged ones too), the bench matrix
// (wpg.bench/v1) and wpg ndr (wpg.ndr/1). It prints nothing and reads
// no file: the caller hands it the document.
package html

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/ndr"
	"github.com/wpg-dev/wpg/recv"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// MaxInput bounds the report Render reads (report.MaxDocument).
const MaxInput = report.MaxDocument

// Render writes the JSON report doc as an HTML page to w. A document that
// is not a wpg report is an error that says what it is instead.
func Render(w io.Writer, doc []byte) error {
	p, err := build(doc)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return err
	}
	_, err = w.Write(noURLs(buf.Bytes()))
	return err
}

// schemeRE finds what would read as a URL: a scheme and "://".
var schemeRE = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*):(//)`)

// noURLs writes the colon of anything that reads as a URL in the
// report's own text (a command line, a note) as a character reference:
// the page shows it as it was, and the file holds no URL, to fetch or
// otherwise (the page's own markup has none).
func noURLs(b []byte) []byte {
	return schemeRE.ReplaceAll(b, []byte("$1&#58;$2"))
}

// page is what the template draws.
type page struct {
	Title    string
	Subtitle string
	Summary  []kv
	Notes    []string
	Charts   []template.HTML
	Tables   []table
	Env      []kv
	Raw      string
}

// kv is one row of a key/value list.
type kv struct{ K, V string }

// table is one table of the page; ID names it (streams: the per-stream
// table).
type table struct {
	ID, Title string
	Head      []string
	Rows      [][]string
	// Text marks the columns that are text (left-aligned); the others
	// are figures.
	Text map[int]bool
}

// build reads doc's schema and lays out its page.
func build(doc []byte) (*page, error) {
	schema, err := report.ReadSchema(doc, "wpg send, bench, recv, ndr or report merge")
	if err != nil {
		return nil, err
	}
	var p *page
	switch schema {
	case report.Schema, "wpg.report/v1":
		var r report.Report
		if err = json.Unmarshal(doc, &r); err == nil {
			p = sendPage(&r)
		}
	case recv.Schema:
		var r recvDoc
		if err = json.Unmarshal(doc, &r); err == nil {
			p = recvPage(&r)
		}
	case bench.Schema:
		var r bench.Result
		if err = json.Unmarshal(doc, &r); err == nil {
			p = matrixPage(&r)
		}
	case ndr.Schema:
		var r ndr.Report
		if err = json.Unmarshal(doc, &r); err == nil {
			p = ndrPage(&r)
		}
	case "":
		return nil, errors.New(`no "schema" field: give the JSON of wpg send, bench, recv, ndr or report merge`)
	default:
		return nil, fmt.Errorf("schema %q: wpg report html reads %s, %s, %s and %s", schema, report.Schema, recv.Schema, bench.Schema, ndr.Schema)
	}
	if err != nil {
		return nil, fmt.Errorf("%s report: %w", schema, report.JSONError(doc, err))
	}
	var raw bytes.Buffer
	if json.Indent(&raw, doc, "", "  ") == nil {
		p.Raw = raw.String()
	}
	return p, nil
}

// timeline draws a run's intervals: the frame rate (with the target as
// a dashed line), the loss, the latency p99 and the lateness p99, each
// where the intervals carry it.
func timeline(ivs []report.Interval, target float64) []template.HTML {
	if n := len(ivs); n > 1 {
		// As wpg plot: a last interval shorter than a quarter of the one
		// before (the run ended just after a sample) is left out of the
		// picture, its few frames no rate; they stay in the report.
		last, prev := ivs[n-1], ivs[n-2]
		if last.End-last.Start < (prev.End-prev.Start)/4 {
			ivs = ivs[:n-1]
		}
	}
	if len(ivs) == 0 {
		return nil
	}
	var rate, lost, lat, late series
	rate.Name, lost.Name, lat.Name, late.Name = "frames/s", "lost", "latency p99", "lateness p99"
	var anyLost, anyLat, anyLate bool
	for _, in := range ivs {
		rate.Steps = append(rate.Steps, step{in.Start, in.End, in.PPS})
		if in.Lost != nil {
			anyLost = true
			lost.Steps = append(lost.Steps, step{in.Start, in.End, float64(max(*in.Lost, 0))})
		}
		if in.LatencyP99Ns > 0 {
			anyLat = true
		}
		// An interval without a measured latency (nothing arrived) is a
		// gap, not 0 ns.
		lat.Steps = append(lat.Steps, step{in.Start, in.End, cmp.Or(float64(in.LatencyP99Ns), math.NaN())})
		if in.LatenessP99Ns > 0 {
			anyLate = true
		}
		late.Steps = append(late.Steps, step{in.Start, in.End, float64(in.LatenessP99Ns)})
	}
	out := []template.HTML{stepChart("frame rate over time", "pps", []series{rate}, target, "target")}
	if anyLost {
		out = append(out, stepChart("frames lost per interval", "", []series{lost}, 0, ""))
	}
	if anyLat {
		out = append(out, stepChart("one-way latency p99 per interval", "ns", []series{lat}, 0, ""))
	}
	if anyLate {
		out = append(out, stepChart("lateness p99 per interval", "ns", []series{late}, 0, ""))
	}
	return out
}

// latencyChart draws a receiver's latency summary.
func latencyChart(l *recv.Latency) template.HTML {
	return barChart("one-way latency", "ns", []bar{{Label: "min", Value: float64(l.MinNs)}, {Label: "p50", Value: float64(l.P50Ns)},
		{Label: "p99", Value: float64(l.P99Ns)}, {Label: "p99.9", Value: float64(l.P999Ns)}, {Label: "max", Value: float64(l.MaxNs)}})
}

// receiverLine summarises a sender's own receiver's result.
func receiverLine(v *recv.Result) string {
	s := fmt.Sprintf("%s frames received, %s lost, %s duplicated, %s reordered, %s corrupted", count(v.Frames), count(v.Lost), count(v.Duplicated), count(v.Reordered), count(v.Corrupted))
	if l := v.Latency; l != nil {
		s += fmt.Sprintf("; latency p50 %s, p99 %s, max %s", ns(l.P50Ns), ns(l.P99Ns), ns(l.MaxNs))
	}
	if v.JitterNs > 0 {
		s += "; jitter " + ns(v.JitterNs)
	}
	return s
}

// subtitle says which schema, job and segment, and when and where.
func subtitle(schema, job, segment string, prov *report.Provenance) string {
	parts := []string{schema}
	if job != "" {
		parts = append(parts, "job "+job)
	}
	if segment != "" {
		parts = append(parts, "segment "+segment)
	}
	if prov != nil {
		parts = append(parts, prov.Start+" on "+prov.Host, prov.Version)
	}
	return strings.Join(parts, " · ")
}

// environment flattens the report's environment (wpg sysinfo's record,
// decoded as JSON values) into dotted keys, and the provenance's command
// line.
func environment(env any, prov *report.Provenance) []kv {
	var out []kv
	if prov != nil {
		out = append(out, kv{"command line", strings.Join(prov.CommandLine, " ")}, kv{"host", prov.Host}, kv{"start", prov.Start}, kv{"version", prov.Version})
	}
	if env == nil {
		return out
	}
	b, err := json.Marshal(env)
	if err != nil {
		return out
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return out
	}
	var flat []kv
	flatten("", v, &flat)
	sort.SliceStable(flat, func(i, j int) bool { return flat[i].K < flat[j].K })
	return append(out, flat...)
}

// flatten appends v's leaves under dotted keys.
func flatten(key string, v any, out *[]kv) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(strings.TrimPrefix(key+"."+k, "."), e, out)
		}
	case []any:
		if len(x) > 0 && isScalar(x[0]) {
			var parts []string
			for _, e := range x {
				parts = append(parts, scalar(e))
			}
			*out = append(*out, kv{key, strings.Join(parts, ", ")})
			return
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", key, i), e, out)
		}
	case nil:
	default:
		*out = append(*out, kv{key, scalar(x)})
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func scalar(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// count writes n with thin spaces between thousands (1 234 567).
func count(n uint64) string { return units.FormatCount(n, "\u202f") }

// ns writes a nanosecond count as a duration.
func ns(v int64) string { return time.Duration(v).String() }

// paren is s in parentheses, or nothing.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// pageTemplate is the page: styles inline, no script, charts inline.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"text": func(t table, i int) bool { return t.Text[i] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; margin: 0 0 .2em; }
h2 { font-size: 1.15em; margin: 1.6em 0 .5em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
.sub { color: #666; margin: 0 0 1em; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1.2em; margin: 0; }
dl.kv dt { color: #555; }
dl.kv dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
ul.notes { padding-left: 1.2em; }
ul.notes li { margin: .3em 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; margin: .4em 0 1em; }
th, td { padding: .25em .6em; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { background: #f5f5f5; font-weight: 600; }
td.t, th.t { text-align: left; white-space: normal; }
.charts svg.chart { width: 100%; height: auto; display: block; margin: .5em 0 1em; }
svg .title { font: 600 13px system-ui, sans-serif; text-anchor: middle; fill: #222; }
svg .tick, svg .legend, svg .label, svg .value { font: 11px system-ui, sans-serif; fill: #444; }
svg .grid { stroke: #e6e6e6; }
svg .axis { stroke: #888; }
details pre { background: #f7f7f7; padding: 1em; overflow: auto; max-height: 40em; font-size: 12px; }
@media print { details { display: none; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">{{.Subtitle}}</p>
<h2>Summary</h2>
<dl class="kv" id="summary">
{{range .Summary}}<dt>{{.K}}</dt><dd>{{.V}}</dd>
{{end}}</dl>
{{if .Notes}}<h2>Notes</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Charts}}<h2>Charts</h2>
<div class="charts">{{range .Charts}}{{.}}
{{end}}</div>{{end}}
{{range $t := .Tables}}<h2>{{$t.Title}}</h2>
<div class="scroll"><table id="{{$t.ID}}">
<thead><tr>{{range $i, $h := $t.Head}}<th{{if text $t $i}} class="t"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range $t.Rows}}<tr>{{range $i, $c := .}}<td{{if text $t $i}} class="t"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}
{{if .Env}}<h2>Environment</h2>
<dl class="kv" id="environment">
{{range .Env}}<dt>{{.K}}</dt><dd>{{.V}}</dd>
{{end}}</dl>{{end}}
{{if .Raw}}<h2>The report</h2>
<details><summary>its JSON, as wpg wrote it</summary>
<pre>{{.Raw}}</pre>
</details>{{end}}
</body>
</html>
`))
