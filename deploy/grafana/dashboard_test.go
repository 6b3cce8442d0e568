package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/metrics"
)

// exported reads the names and label names of wpg's metric descriptors
// (package metrics: what wpg serve's /metrics and --metrics-listen
// register), from each descriptor's String (client_golang has no getter).
func exported(t *testing.T) map[string][]string {
	t.Helper()
	descs := append(append([]*prometheus.Desc{metrics.JobsRunning}, metrics.RunDescs...), metrics.ReceiverDescs...)
	re := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	out := map[string][]string{}
	for _, d := range descs {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the descriptor %s", d)
		}
		var labels []string
		if m[2] != "" {
			labels = strings.Split(m[2], ",")
		}
		out[m[1]] = labels
	}
	if len(out) < 20 {
		t.Fatalf("read %d metrics of package metrics", len(out))
	}
	return out
}

// promql reads the metric names and the label names of a PromQL
// expression: an identifier followed by "(", by or without is a function
// or an aggregation (after by/without/on/ignoring, parentheses hold labels),
// one inside {…} before a matcher is a label, one in […] a duration, and
// any other identifier that is no keyword a metric.
func promql(expr string) (names, labels []string) {
	tok := regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Za-z_:][A-Za-z0-9_:]*|(?:[0-9]+(?:ms|[smhdwy]))+|[0-9.]+(?:e[+-]?[0-9]+)?|=~|!~|!=|==|[{}()\[\],=<>*/+-^%]`)
	toks := tok.FindAllString(expr, -1)
	keywords := []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
	labelList := false // inside by (…) and the like
	inBraces, inBrackets := false, false
	for i, s := range toks {
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case s == "{":
			inBraces = true
		case s == "}":
			inBraces = false
		case s == "[":
			inBrackets = true
		case s == "]":
			inBrackets = false
		case s == ")":
			labelList = false
		case inBrackets || strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "$"):
		case !regexp.MustCompile(`^[A-Za-z_:]`).MatchString(s):
		case inBraces || labelList:
			labels = append(labels, s)
		case slices.Contains(keywords, s):
			if next == "(" && s != "bool" {
				labelList = true
			}
		case next == "(" || next == "by" || next == "without":
			// a function or an aggregation (sum by (job) (…))
		default:
			names = append(names, s)
		}
	}
	return names, labels
}

// queries are the PromQL expressions of the dashboard: its panels'
// targets, and the metrics its variables read (label_values(METRIC, LABEL)
// as METRIC and a label).
func queries(t *testing.T, dash map[string]any) (exprs []string, varLabels []string) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				exprs = append(exprs, e)
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(dash["panels"])
	lv := regexp.MustCompile(`^label_values\((.+), *([A-Za-z_]+)\)$`)
	for _, v := range dash["templating"].(map[string]any)["list"].([]any) {
		q, ok := v.(map[string]any)["definition"].(string)
		if !ok {
			continue
		}
		m := lv.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable query %q: want label_values(METRIC, LABEL)", q)
			continue
		}
		exprs = append(exprs, m[1])
		varLabels = append(varLabels, m[2])
	}
	return exprs, varLabels
}

// TestDashboardQueriesWhatWpgExports (issue #28): every metric the
// dashboard queries is one wpg exports, every label one of its labels (or
// segment, which a segmented run's endpoint adds, or a histogram's le),
// and the dashboard covers rate, lateness and latency percentiles, loss and
// segments.
func TestDashboardQueriesWhatWpgExports(t *testing.T) {
	data, err := os.ReadFile("wpg.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("wpg.json: %v", err)
	}
	known := exported(t)
	exprs, varLabels := queries(t, dash)
	if len(exprs) < 15 {
		t.Fatalf("the dashboard has %d queries", len(exprs))
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names, labels := promql(e)
		if len(names) == 0 {
			t.Errorf("%q: queries no metric", e)
		}
		allowed := []string{"segment"}
		for _, n := range names {
			base := n
			if _, ok := known[n]; !ok {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suf); ok {
						if _, isHist := known[b]; isHist && strings.HasSuffix(b, "_seconds") {
							base = b
							if suf == "_bucket" {
								allowed = append(allowed, "le")
							}
						}
					}
				}
			}
			l, ok := known[base]
			if !ok {
				t.Errorf("%q queries %s, which wpg does not export", e, n)
				continue
			}
			used[base] = true
			allowed = append(allowed, l...)
		}
		for _, l := range labels {
			if !slices.Contains(allowed, l) {
				t.Errorf("%q uses the label %s, which none of its metrics has (they have %v)", e, l, allowed)
			}
		}
	}
	for _, l := range varLabels {
		if l != "job" && l != "segment" {
			t.Errorf("a variable reads the label %s", l)
		}
	}
	for _, want := range []string{"wpg_job_frames_total", "wpg_job_bytes_total", "wpg_job_lateness_seconds", "wpg_job_grant_lateness_seconds",
		"wpg_job_receiver_latency_seconds", "wpg_job_receiver_one_way_latency_seconds", "wpg_job_receiver_lost"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if !strings.Contains(string(data), `by (job, segment)`) || !slices.Contains(varLabels, "segment") {
		t.Error("the dashboard shows no series per segment")
	}

	// Where promtool is installed (Debian's prometheus), every expression
	// parses: as the expressions of recording rules, with Grafana's
	// variables given values.
	promtool := testbed.RequireTool(t, "promtool", "prometheus")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: wpg-dashboard\n    rules:\n")
	r := strings.NewReplacer("$__rate_interval", "1m", "$job", ".*", "$segment", ".*")
	for i, e := range exprs {
		q, _ := json.Marshal(r.Replace(e))
		fmt.Fprintf(&rules, "      - record: wpg:dashboard_query_%d\n        expr: %s\n", i, q)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules (the dashboard's expressions): %v\n%s", err, out)
	}
}

// TestPromQLReader: the reader tells metrics from functions, labels and
// durations.
func TestPromQLReader(t *testing.T) {
	names, labels := promql(`histogram_quantile(0.99, sum by (le, job) (rate(wpg_x_bucket{job=~"$job", stat!="a b"}[$__rate_interval]))) / clamp_min(sum(wpg_y) + wpg_z offset 5m, 1)`)
	if !slices.Equal(names, []string{"wpg_x_bucket", "wpg_y", "wpg_z"}) || !slices.Equal(labels, []string{"le", "job", "job", "stat"}) {
		t.Errorf("names %q, labels %q", names, labels)
	}
}
