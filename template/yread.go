package template

import (
	"errors"
	"fmt"
	"reflect"
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

// native reads the template with yscan, stream by stream: each streams
// item is checked, decoded and made into its Stream as soon as it is
// read, and its nodes reused for the next. done is false when go-yaml is
// to read the whole template instead: a small one (wholeMax) with
// anything the scanner or the decoder does not take. A large one never
// goes to go-yaml whole: go-yaml reads a window of it around each item the
// scanner does not take (window), and around what it does not take
// outside the items.
//
// Errors come out as the reference gives them: the first of the first of
// the categories (catSyntax…catSpec) the template has.
func (p *parser0) native() (*Spec, error, bool) {
	r := &nativeRun{p: p, small: len(p.data) <= p.wholeMax}
	s, err := r.run()
	if r.stop {
		p.streaming, p.cur, p.streamsSeq, p.itemNull = false, nil, nil, nil
		return nil, nil, false
	}
	return s, err, true
}

// nativeRun is one native reading.
type nativeRun struct {
	p     *parser0
	sc    *yscan
	src   string
	small bool
	stop  bool // go-yaml reads the template whole

	errs   [ncat]error // the first error of each category
	spec   *Spec
	shares []node // the streams' share: values (checkTimed)
	seeded bool   // the seed is known (or not in the template before the streams)
	early  bool   // the template gives its seed before its streams

	dec         rawDecoder
	rs          rawStream // the item being read (reused)
	starts      []int     // the items' first bytes
	ends        []int     // and their ends
	anchorItems []int     // the items that define anchors
	goItems     []int     // the items go-yaml read (the scanner did not take them)
	windows     int
	keptAt      int // where in the last window its last item kept starts
}

func (r *nativeRun) note(cat int, err error) {
	if e, ok := err.(*Error); ok && e == nil || err == nil {
		return // a nil *Error: no error
	}
	if r.errs[cat] == nil || cat < catDecode && before(err, r.errs[cat]) {
		r.errs[cat] = err
	}
}

// before reports whether error a is earlier in the template than b (a
// window's error may be of an item before the one read last).
func before(a, b error) bool {
	x, y := asError(a), asError(b)
	return x != nil && y != nil && x.Line > 0 && (x.Line < y.Line || x.Line == y.Line && x.Col < y.Col)
}

// first is the first error of the first category that has one.
func (r *nativeRun) first() error {
	for _, e := range r.errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (r *nativeRun) run() (*Spec, error) {
	p := r.p
	r.src = string(p.data)
	r.sc = newYscan(r.src, &arena{})
	r.sc.maxValues = p.maxValues
	r.sc.item = r.item
	p.streaming = true
	root, u, stopped := r.sc.run()
	switch {
	case r.stop:
		return nil, nil
	case stopped:
		return nil, r.first()
	case u != nil:
		if r.small {
			r.stop = true
			return nil, nil
		}
		return nil, r.windowRoot(u)
	}
	if r.errs[catSyntax] != nil {
		return nil, r.errs[catSyntax]
	}
	p.root = root
	if r.sc.seq == nil {
		return r.whole()
	}
	p.streamsSeq = r.sc.seq
	r.note(catCount, p.checkStreamCount())
	if r.sc.over {
		r.note(catExpand, r.expansionErr())
	}
	p.itemNull = asError(r.errs[catNull])
	r.errs[catNull] = nil
	r.note(catNull, p.checkNulls(root, ""))
	var raw rawFile
	rootOK := r.dec.decode(reflect.ValueOf(&raw).Elem(), root, p.streamsSeq)
	if !rootOK && r.small {
		r.stop = true
		return nil, nil
	}
	if !rootOK || r.errs[catDecode] != nil {
		// go-yaml's decoder on the root and the items it read: its
		// order of decoding errors is its own, and keys the decoder
		// does not take may be ones go-yaml takes.
		return nil, r.windowRoot(nil)
	}
	if err := r.first(); err != nil {
		return nil, err
	}
	if raw.Seed.set() && !r.early {
		// The seed comes after the streams, made with the default
		// seed: again, with the seed.
		s, err := p.specSeed(raw.Seed)
		if err != nil {
			return nil, err
		}
		if s.Seed != 1 {
			q := newParser(p.file, p.data)
			q.maxValues, q.wholeMax, q.keptMax, q.maxWindows, q.preset = p.maxValues, p.wholeMax, p.keptMax, p.maxWindows, &s.Seed
			*p = *q
			return r.rerun()
		}
	}
	if err := p.specCount(r.sc.nitems); err != nil {
		return nil, err
	}
	if err := p.checkTimed(r.shares, r.spec); err != nil {
		return nil, err
	}
	if err := p.portPair(&raw, r.spec); err != nil { // mirror_parse.go
		return nil, err
	}
	return r.spec, nil
}

// rerun reads the template again with p (its seed preset).
func (r *nativeRun) rerun() (*Spec, error) {
	q := &nativeRun{p: r.p, small: r.small}
	s, err := q.run()
	r.stop = q.stop
	return s, err
}

// whole goes on where the streams were not streamed (not a plain
// sequence, or anchored): the tree is whole, as the reference's.
func (r *nativeRun) whole() (*Spec, error) {
	p := r.p
	p.streaming = false
	if e := p.checkStreamCount(); e != nil {
		return nil, e
	}
	if r.sc.over {
		return nil, r.expansionErr()
	}
	if e := p.checkNulls(p.root, ""); e != nil {
		return nil, e
	}
	var raw rawFile
	if !r.dec.decode(reflect.ValueOf(&raw).Elem(), p.root, nil) {
		if r.small {
			r.stop = true
			return nil, nil
		}
		return nil, r.windowRoot(nil)
	}
	return p.spec(&raw)
}

func (r *nativeRun) expansionErr() *Error {
	e := r.p.expansionErr()
	e.Line, e.Col = r.sc.overLine, r.sc.overCol
	return e
}

func asError(err error) *Error {
	e, _ := err.(*Error)
	return e
}

// item takes one streams item from the scanner: checks it, decodes it,
// makes it a Stream. It returns false to stop the scan.
func (r *nativeRun) item(it *yitem) bool {
	p := r.p
	k := it.k
	p.root, p.streamsSeq = r.sc.top, r.sc.seq
	r.starts = append(r.starts, it.start)
	r.ends = append(r.ends, it.end)
	if it.anchors {
		r.anchorItems = append(r.anchorItems, k)
	}
	if it.unsup != nil {
		r.goItems = append(r.goItems, k)
	}
	if !r.seeded {
		r.seed()
		if r.spec != nil {
			r.spec.Streams = make([]Stream, 0, r.guessItems(it))
		}
	}
	var rs *rawStream
	if it.unsup == nil {
		p.cur, p.curK = it.n, k
		if r.errs[catNull] == nil {
			if e := p.checkNulls(it.n, itemPath(k)); e != nil {
				r.note(catNull, e)
			}
		}
		r.dec.reuse()
		r.rs = rawStream{}
		if r.dec.decode(reflect.ValueOf(&r.rs).Elem(), it.n, nil) {
			rs = &r.rs
		}
	}
	if rs == nil {
		if r.small {
			r.stop = true
			return false
		}
		if it.unsup == nil {
			r.goItems = append(r.goItems, k)
		}
		var n *ynode
		var cat int
		var e *Error
		rs, n, it.count, cat, e = r.windowItem(it)
		if e != nil {
			r.note(cat, e)
			return cat != catSyntax // nothing after a syntax error matters
		}
		p.cur, p.curK = n, k
	}
	p.itemAt = append(p.itemAt, [2]int32{p.cur.line, p.cur.col})
	if r.errs == [ncat]error{} && r.spec != nil {
		if err := p.specStream(r.spec, rs, k); err != nil {
			r.note(catSpec, err)
		} else {
			var share node
			if rs.Share.set() {
				c := *rs.Share.n // the item's nodes are reused
				share.n = &c
			}
			r.shares = append(r.shares, share)
		}
	}
	p.cur = nil
	return true
}

// seed reads the seed, before the first item: preset, or written before
// the streams.
func (r *nativeRun) seed() {
	p := r.p
	r.seeded = true
	var seed node
	switch {
	case p.preset != nil:
		r.spec = &Spec{File: p.file, Seed: *p.preset}
		p.seed = *p.preset
		r.early = true
		return
	case r.sc.top != nil && r.sc.top.kind == yMapping:
		for k, v := range r.sc.top.pairs() {
			if k.text == "seed" {
				r.early = true
				if v.flags&yNull == 0 || v.kind != yScalar {
					seed.n = v
				}
			}
		}
	}
	s, err := p.specSeed(seed)
	if err != nil {
		r.note(catSpec, err)
		return
	}
	r.spec = s
}

// guessItems guesses how many items the streams sequence has from its
// first: in a block sequence, the lines that start with a dash at its
// column (a Stream is some 600 bytes: the Streams are allocated once,
// not grown a quarter at a time).
func (r *nativeRun) guessItems(first *yitem) int {
	if r.sc.seqFlow {
		return 1
	}
	ls := strings.LastIndexByte(r.src[:first.start], '\n') + 1
	pat := "\n" + r.src[ls:first.start] + "-"
	if strings.Trim(r.src[ls:first.start], " ") != "" {
		return 1 // a compact sequence ("- - x"): no guess
	}
	n := 1
	for t := r.src[first.start:]; n <= maxStreams; n++ {
		i := strings.Index(t, pat)
		if i < 0 {
			break
		}
		t = t[i+len(pat):]
	}
	return n
}

func itemPath(k int) string { return "streams[" + strconv.Itoa(k) + "]" }

// Windows.

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
