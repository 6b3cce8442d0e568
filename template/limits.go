package template

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/goccy/go-yaml/ast"

	"github.com/wpg-dev/wpg/internal/printable"
)

// Limits on a template, checked before anything is built from it, so that
// no file makes wpg use unbounded memory or time (docs/templates.md,
// "Limits"). They are fixed: the largest template wpg can use (65,535
// streams) fits well within them, and a template that exceeds one is not
// a template wpg could send.
const (
	// MaxTemplateBytes is the largest template file: 16 MiB.
	MaxTemplateBytes = 16 << 20
	// MaxTemplateTokens bounds the YAML items of a template (values, keys,
	// brackets, separators: what the YAML parser holds in memory, several
	// hundred bytes each): about 30 per stream at 65,535 streams.
	MaxTemplateTokens = 2_000_000
	// MaxTemplateDepth bounds the nesting of YAML lists and mappings (a
	// template needs about 6 levels).
	MaxTemplateDepth = 64
	// MaxTemplateValues bounds the YAML values of a template after
	// expanding its aliases (*name): every alias counts as the whole value
	// its anchor (&name) names, as wpg builds it once per use.
	MaxTemplateValues = 4_000_000
)

// Load reads and parses the template file at path. It is Parse plus
// os.ReadFile, refusing what is not a regular file (a FIFO, /dev/zero)
// and files above MaxTemplateBytes; the error of a missing file unwraps to
// fs.ErrNotExist.
func Load(path string) (*Spec, error) {
	// Stat before opening: opening a FIFO blocks until a writer comes.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		// The *PathError says "open PATH: why"; the Error names the file.
		why := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
		return nil, &Error{File: path, Msg: "cannot open the template: " + why, Remedy: "give the path of a *.wpg.yaml file (docs/templates.md)", Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	if !fi.Mode().IsRegular() { // replaced since the Stat
		return nil, notRegular(path, fi.Mode())
	}
	if fi.Size() > MaxTemplateBytes {
		return nil, tooBig(path, fi.Size())
	}
	// The size may change while reading: read at most one byte more,
	// into a buffer of the size (not one grown by doubling).
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, MaxTemplateBytes+1))
	data := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", path, err)
	}
	if len(data) > MaxTemplateBytes {
		return nil, tooBig(path, int64(len(data)))
	}
	return Parse(path, data)
}

func tooBig(path string, n int64) *Error {
	return &Error{File: path, Msg: fmt.Sprintf("template of %s exceeds the limit of %s on template files", sizeString(n), sizeString(MaxTemplateBytes)),
		Remedy: "the limit is fixed: the largest template wpg sends (65535 streams) fits in it; use fewer streams, or vary fields with ranges and lists instead of writing one stream per value"}
}

func notRegular(path string, m os.FileMode) *Error {
	return &Error{File: path, Msg: fmt.Sprintf("not a regular file (%s)", printable.FileKind(m)), Remedy: "give the path of a *.wpg.yaml file; to use a template from a pipe, save it to a file first"}
}

// prescan reads data once, byte by byte and building nothing, and
// refuses a template with more than MaxTemplateTokens YAML items or nested
// deeper than MaxTemplateDepth before the YAML parser (which holds every
// token and node, several hundred bytes each) sees it. It counts the
// separators of YAML items (, : - [ ] { } & * and line ends) outside
// quotes and comments, an upper bound of about the number of tokens, and
// the nesting of brackets and of block indentation. Syntax errors are
// left to the parser.
func (p *parser0) prescan(data []byte) *Error {
	n := 0
	flow := 0      // open [ and {
	var cols []int // block collections: the column of each open level
	line, lineStart := 1, 0
	bol := true // at the start of a line's content (after the indentation)
	push := func(col int) {
		for len(cols) > 0 && cols[len(cols)-1] > col {
			cols = cols[:len(cols)-1]
		}
		if len(cols) == 0 || cols[len(cols)-1] < col {
			cols = append(cols, col)
		}
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		col := i - lineStart + 1
		if bol {
			if c == ' ' || c == '\t' {
				continue
			}
			bol = false
			if flow == 0 && c != '\n' && c != '#' {
				push(col)
			}
		}
		switch c {
		case '\n':
			n++
			line, lineStart, bol = line+1, i+1, true
			continue
		case '#':
			if i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n' {
				for i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
			}
			continue
		case '"', '\'':
			// A quoted scalar: skip to its closing quote (a backslash
			// escapes in double quotes, '' is a quote in single ones).
			for i++; i < len(data) && data[i] != c; i++ {
				if data[i] == '\\' && c == '"' {
					i++
				} else if data[i] == '\n' {
					line, lineStart = line+1, i+1
				}
			}
			continue
		case '[', '{':
			flow++
			n++
		case ']', '}':
			flow = max(flow-1, 0)
			n++
		case '-':
			n++
			// A block sequence entry "- " opens a level at its column.
			if flow == 0 && (i+1 == len(data) || data[i+1] == ' ' || data[i+1] == '\n') && onlySpaceOrDashes(data[lineStart:i]) {
				push(col + 1)
			}
		case ',', ':', '&', '*':
			n++
		}
		if n > MaxTemplateTokens {
			return &Error{File: p.file, Line: line, Col: col,
				Msg:    fmt.Sprintf("more than %d YAML items (values, keys, brackets; the limit on a template's size in items)", MaxTemplateTokens),
				Remedy: "the limit is fixed and holds 65535 streams; use fewer streams, or ranges and lists instead of one stream per value"}
		}
		if d := flow + len(cols); d > MaxTemplateDepth {
			return &Error{File: p.file, Line: line, Col: col,
				Msg:    fmt.Sprintf("lists and mappings nested more than %d deep (the limit on a template's nesting)", MaxTemplateDepth),
				Remedy: "a template needs about 6 levels (streams, a stream, a layer, a field, a range): check the brackets and the indentation"}
		}
	}
	return nil
}

// onlySpaceOrDashes reports whether b (a line up to a dash) holds only
// indentation and earlier "- " entries.
func onlySpaceOrDashes(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '-' && c != '\t' {
			return false
		}
	}
	return true
}

// checkExpansion counts the values of the document as wpg will build
// them, every alias counting as its anchor's whole value, and refuses more
// than MaxTemplateValues (go-yaml's tree; yscan counts as it reads).
func (p *parser0) checkExpansion(root ast.Node) *Error {
	total, at, _ := countValues(root, p.maxValues, nil)
	if total <= p.maxValues {
		return nil
	}
	e := p.expansionErr()
	if tk := at.GetToken(); tk != nil {
		e.Line, e.Col = tk.Position.Line, tk.Position.Column
	}
	return e
}

func (p *parser0) expansionErr() *Error {
	return &Error{File: p.file, Msg: fmt.Sprintf("more than %d values once its aliases (*name) are expanded (the limit on a template's values)", MaxTemplateValues),
		Remedy: "use fewer aliases of large anchors (&name), or shorter lists"}
}

// countValues counts the values under root as checkExpansion does (at
// most max+1), the first node whose own count is above max, and the count
// of the node want.
func countValues(root ast.Node, max int64, want ast.Node) (total int64, at ast.Node, wanted int64) {
	anchors := map[string]int64{}
	var count func(n ast.Node) int64
	count = func(n ast.Node) int64 {
		if n == nil {
			return 0
		}
		var c int64 = 1
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, mv := range n.Values {
				c += count(mv)
			}
		case *ast.MappingValueNode:
			c += count(n.Key) + count(n.Value)
		case *ast.MappingKeyNode:
			c += count(n.Value)
		case *ast.SequenceNode:
			for _, v := range n.Values {
				c += count(v)
			}
		case *ast.TagNode:
			c += count(n.Value)
		case *ast.AnchorNode:
			v := count(n.Value)
			if n.Name != nil {
				anchors[n.Name.GetToken().Value] = v
			}
			c += v
		case *ast.AliasNode:
			if n.Value != nil {
				c += anchors[n.Value.GetToken().Value]
			}
		}
		if c > max && at == nil {
			at = n
		}
		c = min(c, max+1) // no overflow, however many aliases
		if n == want {
			wanted = c
		}
		return c
	}
	return count(root), at, wanted
}

// checkStreamCount refuses more than 65535 streams before any is decoded.
func (p *parser0) checkStreamCount() *Error {
	seq := p.lookup("streams")
	if seq == nil || seq.kind != ySequence || seq.flags&yAnchored != 0 || int(seq.n) <= maxStreams {
		return nil
	}
	return p.errAt(seq, "streams", fmt.Sprintf("%d streams; the signature's stream id is 16 bits", seq.n), fmt.Sprintf("use at most %d streams", maxStreams))
}

// maxStreams is the most streams a template may have (16-bit stream ids).
const maxStreams = 65535
