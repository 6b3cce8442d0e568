package template

// The windows: go-yaml reads a window of a large template (its text with
// the streams items blanked but those it needs, each where it was) around
// each item the scanner does not take, and around what it does not take
// outside the items. yread.go reads the template stream by stream and
// calls on them.

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxWindows bounds the windows go-yaml reads of a large template: a
// stream item the scanner does not take costs a copy of the template's
// text and go-yaml's reading of the item.
const maxWindows = 64

// windowPast is how far past where the scanner stopped outside the items
// go-yaml reads, to find the error there.
const windowPast = 64 << 10

// window is the template's text with the streams items blanked but those
// in keep (ascending; the last of them the last item written unless
// tail), their lines and columns where they were: what follows the items
// when tail, else the brackets that close the items' flow collections.
func (r *nativeRun) window(keep []int, tail bool) string {
	var b strings.Builder
	b.Grow(len(r.src))
	n := len(r.starts)
	if n == 0 {
		b.WriteString(r.src)
		return b.String()
	}
	b.WriteString(r.src[:r.starts[0]])
	last := n - 1
	if !tail && len(keep) > 0 {
		last = keep[len(keep)-1]
	}
	ki := 0
	for j := 0; j <= last; j++ {
		end := r.ends[j]
		if j < n-1 && (j < last || tail) {
			end = r.starts[j+1]
		}
		if ki < len(keep) && keep[ki] == j {
			r.keptAt = b.Len()
			b.WriteString(r.src[r.starts[j]:end])
			ki++
		} else {
			blank(&b, r.src[r.starts[j]:end])
		}
	}
	switch {
	case tail:
		b.WriteString(r.src[r.ends[n-1]:])
	case r.sc.seqFlow:
		b.WriteByte(']')
		if r.sc.topFlow {
			b.WriteByte('}')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// blank writes text blanked: its line feeds, and a blank for each
// character after the last (what follows on that line keeps its column;
// the blanks that end a line are left out).
func blank(b *strings.Builder, text string) {
	last := strings.LastIndexByte(text, '\n')
	for range strings.Count(text, "\n") {
		b.WriteByte('\n')
	}
	for range utf8.RuneCountInString(text[last+1:]) {
		b.WriteByte(' ')
	}
}

var itemIndex = regexp.MustCompile(`streams\[(\d+)\]`)

// renumber makes the item indices of a window's error (its place in the
// window) the template's.
func renumber(e *Error, keep []int) *Error {
	if e == nil || len(keep) == 0 {
		return e
	}
	f := func(s string) string {
		return itemIndex.ReplaceAllStringFunc(s, func(m string) string {
			i, err := strconv.Atoi(m[len("streams[") : len(m)-1])
			if err != nil || i >= len(keep) {
				return m
			}
			return itemPath(keep[i])
		})
	}
	e.Path, e.Msg, e.Remedy = f(e.Path), f(e.Msg), f(e.Remedy)
	return e
}

// windowItem has go-yaml read an item the scanner or the decoder did not
// take, in a window of the template that holds it and the items that
// define anchors: its raw values, its node, its count of values, or the
// error go-yaml's reading finds, with its category.
func (r *nativeRun) windowItem(it *yitem) (*rawStream, *ynode, int64, int, *Error) {
	p := r.p
	if r.windows >= p.maxWindows {
		return nil, nil, 0, catSyntax, r.tooMany(it)
	}
	r.windows++
	// The items with anchors before it; only those it names when they
	// are many (go-yaml holds some 200 bytes per byte it reads).
	var keep []int
	for _, j := range r.anchorItems {
		if j < it.k {
			keep = append(keep, j)
		}
	}
	if r.kept(keep, false) > p.keptMax {
		keep = slices.DeleteFunc(keep, func(j int) bool { return !slices.Contains(it.deps, j) })
	}
	keep = append(keep, it.k)
	text := r.window(keep, false)
	cutLine := 0
	if it.end-it.start > p.keptMax {
		// An item longer than go-yaml may read (an unclosed bracket
		// makes the rest of the file one): as far as it may.
		cut := r.keptAt + r.lineEnd(it.start+p.keptMax) - it.start
		cutLine = 1 + strings.Count(text[:cut], "\n")
		text = text[:cut]
	}
	wp := newParser(p.file, []byte(text))
	wp.maxValues = p.maxValues
	raw, cat, e := wp.referenceRaw()
	if cutLine > 0 && (e == nil || e.Line == 0 || e.Line >= cutLine) {
		return nil, nil, 0, catSyntax, r.tooLong(it)
	}
	if e != nil {
		return nil, nil, 0, cat, renumber(e, keep)
	}
	idx := len(keep) - 1
	seq := wp.lookup("streams")
	if len(raw.Streams) != len(keep) || !seq.is(ySequence) {
		return nil, nil, 0, catSyntax, r.notTaken(it.unsup, it)
	}
	wp.streamsSeq = nil
	n := wp.lookup(itemPath(idx))
	var count int64
	if seq, ok := lookupAST(wp.ast, "streams"); ok && idx < len(seq.Values) {
		_, _, count = countValues(wp.ast, p.maxValues, seq.Values[idx])
	}
	return &raw.Streams[idx], n, count, 0, nil
}

// kept is how many bytes of the template a window keeps as written: the
// text before the items, the items in keep, what follows them if tail.
func (r *nativeRun) kept(keep []int, tail bool) int {
	if len(r.starts) == 0 {
		return len(r.src)
	}
	n := r.starts[0]
	for _, j := range keep {
		n += r.ends[j] - r.starts[j]
	}
	if tail {
		n += len(r.src) - r.ends[len(r.ends)-1]
	}
	return n
}

// lineEnd is the offset after the line feed that ends the line of
// offset i (or the end).
func (r *nativeRun) lineEnd(i int) int {
	if i >= len(r.src) {
		return len(r.src)
	}
	if j := strings.IndexByte(r.src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(r.src)
}

// windowRoot has go-yaml read the template but the items the scanner took
// (what the scanner or the decoder did not take is outside them, or, when
// u, at u): the error it finds.
func (r *nativeRun) windowRoot(u *yunsup) error {
	p := r.p
	keep := slices.Clone(r.anchorItems)
	for _, k := range r.goItems {
		if !slices.Contains(keep, k) {
			keep = append(keep, k)
		}
	}
	if u != nil {
		// The items just before where the scanner stopped, as written:
		// what it could not read may be part of them for go-yaml.
		for j := len(r.ends) - 1; j >= 0 && r.ends[j] > u.pos-windowPast; j-- {
			if !slices.Contains(keep, j) {
				keep = append(keep, j)
			}
		}
	}
	slices.Sort(keep)
	stopped := u != nil && !r.sc.seqDone
	if !stopped && r.kept(keep, true) > p.keptMax {
		// More than go-yaml may read: what the scanner found stands.
		if err := r.first(); err != nil {
			return err
		}
		return r.notTaken(u, nil)
	}
	text := r.window(keep, true)
	if stopped {
		// Stopped before the items or among them: the text to some way
		// past where it stopped (go-yaml's first error is there, unless
		// the cut makes one), the items kept before it no more than go-yaml
		// may read.
		for len(keep) > 0 && r.kept(keep, false) > p.keptMax {
			keep = keep[1:]
		}
		text = r.window(keep, true)
		// u is in what follows the items, kept as written at the end.
		end := r.lineEnd(u.pos + windowPast)
		if n := len(r.ends); n > 0 {
			end += len(text) - (len(r.src) - r.ends[n-1]) - r.ends[n-1]
		}
		text = text[:min(max(end, 0), len(text))]
	}
	wp := newParser(p.file, []byte(text))
	wp.maxValues = p.maxValues
	if _, cat, e := wp.referenceRaw(); e != nil {
		e = renumber(e, keep)
		if cat == catDecode {
			r.errs[catDecode] = e // go-yaml's first, with the root and the items it read
		} else {
			r.note(cat, e)
		}
		return r.first()
	}
	if u == nil {
		for _, e := range r.errs[:catDecode] {
			if e != nil {
				return e
			}
		}
	}
	// go-yaml takes what the scanner stopped at, maybe as part of the
	// items before it: what the scanner made of them may not stand.
	return r.notTaken(u, nil)
}

// errNotTaken is what the error for YAML wpg reads only in small
// templates unwraps to.
var errNotTaken = errors.New("YAML wpg reads only in small templates")

// notTaken is the error for YAML go-yaml takes in a window of a large
// template but the scanner does not.
func (r *nativeRun) notTaken(u *yunsup, it *yitem) *Error {
	e := &Error{File: r.p.file, Err: errNotTaken, Msg: fmt.Sprintf("YAML wpg's template reader takes only in templates of up to %s (this one is %s)", sizeString(int64(r.p.wholeMax)), sizeString(int64(len(r.src)))),
		Remedy: "write it in the common YAML shapes (block or flow mappings and lists, scalars on one line, no tags), or split the template"}
	if u != nil {
		e.Msg = u.why + ": " + e.Msg
		e.Line, e.Col = u.line, r.colOf(u.pos)
	}
	if it != nil {
		e.Path = itemPath(it.k)
	}
	return e
}

// tooLong is the error for an item longer than go-yaml may read in a
// window, of YAML the scanner does not take.
func (r *nativeRun) tooLong(it *yitem) *Error {
	e := r.notTaken(it.unsup, it)
	e.Msg = fmt.Sprintf("a stream of more than %s of YAML wpg's template reader leaves to the YAML library, in a template of %s", sizeString(int64(r.p.keptMax)), sizeString(int64(len(r.src))))
	if it.unsup != nil {
		e.Msg += " (here: " + it.unsup.why + ")"
	}
	return e
}

// tooMany is the error for a large template with more than maxWindows
// items the scanner does not take.
func (r *nativeRun) tooMany(it *yitem) *Error {
	e := r.notTaken(it.unsup, it)
	e.Msg = fmt.Sprintf("more than %d streams of a template of %s in YAML wpg's template reader leaves to the YAML library", r.p.maxWindows, sizeString(int64(len(r.src))))
	if it.unsup != nil {
		e.Msg += " (here: " + it.unsup.why + ")"
	}
	return e
}

// colOf is the column of offset pos.
func (r *nativeRun) colOf(pos int) int {
	ls := strings.LastIndexByte(r.src[:pos], '\n') + 1
	return utf8.RuneCountInString(r.src[ls:pos]) + 1
}
