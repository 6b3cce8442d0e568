package pace

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// docTable returns the rows of the Markdown table in doc whose header
// starts with head, each row's cells without their outer blanks.
func docTable(t *testing.T, doc, head string) [][]string {
	t.Helper()
	i := strings.Index(doc, "\n"+head)
	if i < 0 {
		t.Fatalf("docs/rate.md has no table headed %q", head)
	}
	var rows [][]string
	for n, line := range strings.Split(doc[i+1:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if n < 2 { // the header and its rule
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("docs/rate.md: the table headed %q has no rows", head)
	}
	return rows
}

// TestRateDocTable keeps docs/rate.md's table of spellings true: each
// row's example parses and reads as the row says, and each refused
// spelling is refused.
func TestRateDocTable(t *testing.T) {
	b, err := os.ReadFile("../docs/rate.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, row := range docTable(t, doc, "| unit | example | reads as |") {
		ex, want := strings.Trim(row[1], "`"), strings.Trim(row[2], "`")
		r, err := ParseRate(ex)
		switch {
		case err != nil:
			t.Errorf("docs/rate.md: %s: %v", ex, err)
		case want == "(flat out)":
			if !r.Unlimited() {
				t.Errorf("docs/rate.md: %s reads as %q, not flat out", ex, r)
			}
		case r.String() != want:
			t.Errorf("docs/rate.md: %s reads as %q, the table says %q", ex, r, want)
		}
	}
	for _, row := range docTable(t, doc, "| you write | why | write instead |") {
		for _, ex := range strings.Split(row[0], ", ") {
			ex = strings.Trim(ex, "`")
			if r, err := ParseRate(ex); !errors.Is(err, ErrBadRate) {
				t.Errorf("docs/rate.md refuses %s, ParseRate reads %q, %v", ex, r, err)
			}
		}
	}
}
