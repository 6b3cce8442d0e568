package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStatusCodesDocumented fails when the server answers with a status
// code that docs/api.md's table of status codes does not list.
func TestStatusCodesDocumented(t *testing.T) {
	codes := map[string]int{
		"StatusOK": http.StatusOK, "StatusCreated": http.StatusCreated, "StatusAccepted": http.StatusAccepted,
		"StatusNoContent": http.StatusNoContent, "StatusSeeOther": http.StatusSeeOther, "StatusBadRequest": http.StatusBadRequest,
		"StatusUnauthorized": http.StatusUnauthorized, "StatusForbidden": http.StatusForbidden, "StatusTooManyRequests": http.StatusTooManyRequests,
		"StatusNotFound": http.StatusNotFound, "StatusMethodNotAllowed": http.StatusMethodNotAllowed, "StatusConflict": http.StatusConflict,
		"StatusRequestEntityTooLarge": http.StatusRequestEntityTooLarge, "StatusRequestTimeout": http.StatusRequestTimeout,
		"StatusInternalServerError": http.StatusInternalServerError,
		"StatusServiceUnavailable":  http.StatusServiceUnavailable,
	}
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	used := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "http" && strings.HasPrefix(sel.Sel.Name, "Status") {
					used[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	for name := range used {
		code, ok := codes[name]
		if !ok {
			t.Errorf("http.%s is used: add it to this test and to docs/api.md", name)
			continue
		}
		row := "| " + strconv.Itoa(code) + " " + http.StatusText(code) + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/api.md has no status row %q", row)
		}
	}
}
