package template

import (
	"reflect"
	"strconv"
	"strings"
)

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
