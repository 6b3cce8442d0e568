package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/bench"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/job"

	_ "github.com/wpg-dev/wpg/backend/all"
)

// TestQuickMatrixTableMatchesJSON runs a quick matrix of a few real paths
// (their receivers are the wpg binary) and checks that the printed tables
// and the JSON tell the same ranking: same sizes, same rows in the same
// order, ranks 1…n, medians non-increasing, ratios against the reference
// of the same table.
func TestQuickMatrixTableMatchesJSON(t *testing.T) {
	wpg := testbed.Wpg(t)
	env := job.Env{Launcher: func(sock string) (*exec.Cmd, error) {
		return exec.Command(wpg, "recv", "--listen", sock), nil
	}}
	cfg := bench.Config{Quick: true, Duration: 100 * time.Millisecond, Repeat: 2, Sizes: []int64{64, 64 << 10}, Only: []string{"null", "memcpy", "shm", "unix"}}
	res, err := bench.Run(context.Background(), cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res.WriteTable(&buf)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc bench.Result
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != bench.Schema || doc.Noise.Verdict == "" || doc.Noise.Summary == "" {
		t.Fatalf("schema %q, noise %+v", doc.Schema, doc.Noise)
	}
	printed := parseTables(t, buf.String())
	if len(printed) != len(doc.Tables) || len(doc.Tables) != 2 {
		t.Fatalf("%d printed tables, %d in the JSON, want 2:\n%s", len(printed), len(doc.Tables), buf.String())
	}
	for i, tb := range doc.Tables {
		// null carries packets: not at 64 KiB.
		want := map[int64]int{64: 5, 64 << 10: 4}[tb.Size] // "shm" names both of its rows
		if len(tb.Rows) != want {
			t.Errorf("size %d: %d rows, want %d", tb.Size, len(tb.Rows), want)
		}
		if got := strings.Join(printed[i], ","); got != paths(tb) {
			t.Errorf("size %d: printed order %s, JSON order %s", tb.Size, got, paths(tb))
		}
		var memcpy float64
		for _, r := range tb.Rows {
			if r.Backend == "memcpy" {
				memcpy = r.PPS
			}
		}
		for j, r := range tb.Rows {
			if r.Rank != j+1 {
				t.Errorf("size %d: row %s rank %d at %d", tb.Size, r.Path, r.Rank, j+1)
			}
			if j > 0 && r.PPS > tb.Rows[j-1].PPS {
				t.Errorf("size %d: %s (%.0f) ranked below %s (%.0f)", tb.Size, r.Path, r.PPS, tb.Rows[j-1].Path, tb.Rows[j-1].PPS)
			}
			if r.Error != "" || len(r.Runs) != 2 || r.PPS <= 0 || r.MinPPS > r.PPS || r.MaxPPS < r.PPS {
				t.Errorf("size %d: row %+v", tb.Size, r)
			}
			if r.Group == bench.Local {
				if got := r.PPS / memcpy; r.Reference != "memcpy" || !near(r.Ratio, got) {
					t.Errorf("size %d: %s ratio %v, want %v to memcpy", tb.Size, r.Path, r.Ratio, got)
				}
				for _, run := range r.Runs {
					if run.Verified != "ok" {
						t.Errorf("%s: receiver said %q", r.Path, run.Verified)
					}
				}
			}
		}
		if !strings.Contains(tb.Advice, "between two processes on this host") {
			t.Errorf("size %d: advice %q", tb.Size, tb.Advice)
		}
	}
	if !strings.Contains(buf.String(), "noise: "+doc.Noise.Summary) {
		t.Errorf("the table does not print the verdict %q", doc.Noise.Summary)
	}
}

func near(a, b float64) bool { return a > b*0.999999 && a < b*1.000001 }

func paths(t bench.Table) string {
	var s []string
	for _, r := range t.Rows {
		s = append(s, r.Path)
	}
	return strings.Join(s, ",")
}

// parseTables reads the path column of each printed table, checking the
// header and that ranks count 1…n.
func parseTables(t *testing.T, out string) [][]string {
	t.Helper()
	var tables [][]string
	sc := bufio.NewScanner(strings.NewReader(out))
	in := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "#":
			if strings.Join(f, " ") != strings.Join(bench.TableHeader, " ") {
				t.Errorf("header %q", line)
			}
			tables = append(tables, nil)
			in = true
		case in && len(f) > 1:
			n, err := strconv.Atoi(f[0])
			if err != nil {
				in = false
				continue
			}
			cur := &tables[len(tables)-1]
			if n != len(*cur)+1 {
				t.Errorf("rank %d after %d rows: %q", n, len(*cur), line)
			}
			// The path is the text up to the frame rate (paths hold spaces).
			cols := strings.SplitN(strings.TrimSpace(line[len(f[0]):]), "  ", 2)
			*cur = append(*cur, strings.TrimSpace(cols[0]))
		default:
			in = false
		}
	}
	return tables
}
