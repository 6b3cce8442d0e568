package template

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/units"
)

// Plans.
const (
	PlanAuto      = "auto"      // prerender the streams that fit the limits, stream the rest
	PlanPrerender = "prerender" // prerender every stream (an error if one does not fit)
	PlanStream    = "stream"    // patch every frame in place while sending
)

// Default prerender limits (wpg.toml tx.prerender_max_bytes / _packets).
const (
	DefaultPrerenderMaxBytes   int64 = 256 << 20
	DefaultPrerenderMaxPackets int64 = 100_000_000
)

// CompileOptions say which worker the Source is for and how to plan it.
type CompileOptions struct {
	// Worker i of Workers W renders the packets k ≡ i (mod W) of every stream.
	Worker, Workers int
	// Plan is PlanAuto (also ""), PlanPrerender or PlanStream.
	Plan string
	// PrerenderMaxBytes and PrerenderMaxPackets bound the frames prerendered
	// by all workers together (each worker gets 1/W); 0 means the default.
	PrerenderMaxBytes   int64
	PrerenderMaxPackets int64
	// Count is the run's frame limit (--count) over all workers, 0 for
	// none: worker i sends at most its share (the engine's split), so it
	// prerenders no more than that of any stream.
	Count uint64
	// MemAvailable is the memory the system can give (MemAvailable of
	// /proc/meminfo, read by the caller), 0 when unknown: prerendering
	// takes at most half of it over all workers.
	MemAvailable int64
	// CheckOnly plans and checks the limits but renders and prerenders
	// nothing: Compile then only reports whether the plan works (its
	// error); the Source must not be used.
	CheckOnly bool
}

// Source renders the frames of one worker. It implements engine.Source.
// It is not safe for concurrent use: each worker compiles its own.
type Source struct {
	streams   []*cstream
	active    []int // indexes of streams with frames left
	rr        swrr  // the interleaving of the active streams
	total     int64
	sched     []uint16 // one period of the interleaving, nil when computed live
	pos       int
	maxFrame  int
	mean      float64
	plan      string
	detail    string
	memo      *memo     // set by KeepFrames
	tl        *timeline // the streams' own schedules (timed.go), nil when shared
	fps       float64   // a timed source's frame rate (timed.go)
	timetable Schedule  // a timed source's timetable, for the report (timed.go)
	failed    bool      // a replay's capture could not be read: no more frames (replay.go)
}

// maxSched bounds the precomputed interleaving (sum of shares).
const maxSched = 1 << 16

// cstream is a compiled stream for one worker.
type cstream struct {
	L     *layout
	id    uint16
	share int64
	sig   bool

	k, w      uint64 // next packet index, stride (workers)
	seqTag    uint64 // frame.SeqWord(0, workers): the worker count in the signature
	left      uint64 // frames left for this worker
	unlimited bool

	// Streaming: image and varying fields.
	img     []byte
	sizes   []sizeEntry // one entry per distinct size
	sizeCur cursor      // index into sizes (when the size varies)
	sizeVar bool
	fields  []pfield
	lens    []lenField // length fields to patch when the size varies
	rck     []rtck     // the checksums patched per frame, innermost first (the others are in the image)
	sigCov  uint8      // the checksums of rck (bits: positions in rck) covering the signature
	preCk   []rtck     // prerendered: the checksums the signature changes, innermost first
	pre1    int        // prerendered: the one checksum the signature changes when nothing else does (the common case), else -1
	pre1udp bool
	many    bool           // more than two checksums per frame: the others are summed in rest
	rest    [maxCks]uint64 // their sums while a frame is rendered (positions 2 and up)
	c0      int            // the first checksum's field (rck[0]), -1 for none
	c0udp   bool
	c0bad   bool
	c0in1   bool // the second covers the first
	c1      int  // the second checksum's field (rck[1]), -1 for none
	c1udp   bool
	c1bad   bool

	// Prerendering.
	pre    bool
	arena  []byte
	frames []preFrame // per frame, when the size varies; nil for one size
	fixN   int        // the frame size when frames is nil
	fixOdd bool
	delta  *delta // instead of arena and frames, for large fixed-size frames
	npre   int    // frames prerendered
	pj     int

	memo *memo // the Source's, once KeepFrames was called

	run runPlan // the loop rendering a run of this stream's frames (fast.go)

	fr *fragger // the datagrams' fragments (fragment.go), nil for whole datagrams

	rp *replay // a capture replayed (replay.go), nil for a layer stack
	tm *stime  // the stream's own schedule (timed.go), nil when shared
}

type sizeEntry struct {
	n      int
	sums   [maxCks]uint64 // base sums, per checksum of the layout
	oddSig bool           // signature at an odd offset from the start of the checksummed data
}

// rtck is a checksum finished per frame: checksum i of the layout. In
// cstream.rck, into and the fields' coverage are by position in rck (the
// first two are summed in registers); in preCk, by layout index.
type rtck struct {
	i        int
	field    int
	into     uint8 // the checksums covering this one's field
	udp, bad bool
	c        *cksum
}

type preFrame struct {
	off int
	n   uint16
	odd bool
}

// preFrameSize is the memory a preFrame takes (an int, a uint16 and a bool,
// padded to 16 bytes on 64-bit machines), counted against the prerender
// byte limit.
const preFrameSize = 16

// pfield is a varying field being patched.
type pfield struct {
	base       uint64 // the slot's bits around the field, from the image
	rmw        bool   // the slot overlaps an earlier varying field's: OR into the frame
	off, width int
	shift      uint
	mask       uint64
	cov        uint8
	c          cursor
}

// cursor walks a Value for one worker: packet k, k+W, k+2W, …
type cursor struct {
	v    *Value
	kind Kind
	idx  uint64 // k mod period for periodic kinds
	adv  uint64 // W mod period
	n    uint64 // period
	k, w uint64 // for Random
	// Increment/Decrement
	base, step uint64
	neg        bool
	list       []uint64
}

// kindDiv is the cursor kind of a tuple field (Value.Div > 1): computed
// in next, off the inlined fast path.
const kindDiv Kind = 255

func newCursor(v *Value, k, w uint64) cursor {
	c := cursor{v: v, kind: v.Kind, k: k, w: w}
	if v.Div > 1 {
		c.kind = kindDiv
	}
	if p := v.Period(); p > 0 {
		c.n = p
		c.idx = k % p
		c.adv = w % p
	}
	switch v.Kind {
	case Increment:
		c.base, c.step = v.From, v.Step
	case Decrement:
		c.base, c.step, c.neg = v.To, v.Step, true
	case List, Weighted:
		c.list = v.List
	}
	return c
}

// next returns the value of the current packet and advances by W packets.
func (c *cursor) next() uint64 {
	var x uint64
	switch c.kind {
	case Increment:
		x = c.base + c.idx*c.step
	case Decrement:
		x = c.base - c.idx*c.step
	case List, Weighted:
		x = c.list[c.idx]
	case Random:
		x = c.v.At(c.k)
		c.k += c.w
		return x
	case kindDiv:
		x = c.v.at(c.idx / c.v.Div)
	default:
		return c.v.From
	}
	c.idx += c.adv
	if c.idx >= c.n {
		c.idx -= c.n
	}
	return x
}

// Compile builds the Source of worker o.Worker of o.Workers for spec.
func Compile(spec *Spec, o CompileOptions) (*Source, error) {
	return CompileContext(context.Background(), spec, o)
}

// CompileContext is Compile that gives up when ctx is done: prerendering
// a large stream checks ctx every few thousand frames and returns
// ctx.Err() (a SIGTERM during a long prerender ends it at once).
func CompileContext(ctx context.Context, spec *Spec, o CompileOptions) (*Source, error) {
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.Worker < 0 || o.Worker >= o.Workers {
		return nil, fmt.Errorf("template: worker %d out of range 0..%d", o.Worker, o.Workers-1)
	}
	switch o.Plan {
	case "":
		o.Plan = PlanAuto
	case PlanAuto, PlanPrerender, PlanStream:
	default:
		return nil, fmt.Errorf("template: unknown plan %q: use auto, prerender or stream (--plan)", o.Plan)
	}
	if o.PrerenderMaxBytes <= 0 {
		o.PrerenderMaxBytes = DefaultPrerenderMaxBytes
	}
	if o.PrerenderMaxPackets <= 0 {
		o.PrerenderMaxPackets = DefaultPrerenderMaxPackets
	}
	if len(spec.Streams) == 0 {
		return nil, fmt.Errorf("template %s: no streams", printable.Escape(spec.File))
	}
	W := uint64(o.Workers)
	maxBytes, bytesLimit := o.PrerenderMaxBytes, "--prerender-max-bytes / tx.prerender_max_bytes"
	if half := o.MemAvailable / 2; o.MemAvailable > 0 && half < maxBytes {
		maxBytes = half
		bytesLimit = fmt.Sprintf("half of the %s MemAvailable: prerendering stays within half the memory available, whatever --prerender-max-bytes (%s) allows; free memory or prerender less", sizeString(o.MemAvailable), sizeString(o.PrerenderMaxBytes))
	}
	budgetBytes := maxBytes / int64(o.Workers)
	budgetPkts := o.PrerenderMaxPackets / int64(o.Workers)
	// The run's --count bounds what this worker sends (the engine gives
	// worker i the frames i, i+W, … of the count).
	countShare, counted := uint64(0), o.Count > 0
	if counted {
		countShare = o.Count / W
		if uint64(o.Worker) < o.Count%W {
			countShare++
		}
	}
	s := &Source{}
	perWorker := ""
	if o.Workers > 1 {
		perWorker = fmt.Sprintf("; each of the %d workers gets 1/%d of it", o.Workers, o.Workers)
	}
	var details []streamDetail
	npre, nstream := 0, 0
	var shares float64
	for i := range spec.Streams {
		st := &spec.Streams[i]
		if st.Replay != nil { // replay.go
			why, err := s.compileReplay(st, i, o)
			if err != nil {
				s.closeReplays()
				return nil, err
			}
			details = append(details, streamDetail{i, st.Name, why})
			continue
		}
		L := newLayout(st, uint16(i))
		cs := &cstream{L: L, id: uint16(i), share: int64(st.Share), sig: st.Signature, k: uint64(o.Worker), w: W, seqTag: frame.SeqWord(0, o.Workers)}
		if st.Count == 0 {
			cs.unlimited = true
		} else if st.Count > uint64(o.Worker) {
			cs.left = (st.Count - uint64(o.Worker) + W - 1) / W
		}
		// A fragmented stream counts datagrams; it sends count fragments
		// of each (fragment.go), always streamed.
		frag := newFragger(st)
		if frag != nil {
			cs.left *= uint64(frag.g.count)
		}
		maxN := int(st.Size.Max())
		if frag != nil {
			maxN = frag.g.frameLen(0) // the datagram is rendered into the fragger's buffer
		}
		s.maxFrame = max(s.maxFrame, maxN)
		mean := meanOf(&st.Size)
		if frag != nil {
			mean = frag.g.mean()
		}
		s.mean += mean * float64(st.Share)
		shares += float64(st.Share)

		// How many distinct frames this worker sends before repeating.
		period := streamPeriod(st)
		need := uint64(0)
		finite := true
		switch {
		case !cs.unlimited && period > 0:
			need = min(cs.left, period/gcd(period, W))
		case !cs.unlimited:
			need = cs.left
		case period > 0:
			need = period / gcd(period, W)
		default:
			finite = false
		}
		byCount := false
		if counted && (!finite || need > countShare) {
			need, finite, byCount = countShare, true, true
		}
		var why string
		pre := false
		if o.Plan != PlanStream && finite && need > 0 && frag == nil {
			// cost adds the per-frame index of varying sizes to the frames.
			var bytes, cost int64
			if need <= uint64(max(budgetPkts, 0)) {
				// Exact only when it may fit (it walks the sizes of need frames).
				bytes = int64(need) * int64(st.Size.Min())
				if bytes <= budgetBytes {
					var err error
					if bytes, err = prerenderBytes(ctx, st, uint64(o.Worker), W, need); err != nil {
						return nil, err
					}
				}
				cost = bytes
				if st.Size.Kind != Fixed {
					cost += int64(need) * preFrameSize
				}
			}
			switch {
			case need > uint64(max(budgetPkts, 0)):
				why = fmt.Sprintf("%d frames exceed the %d left of the prerender limit of %d packets (--prerender-max-packets / tx.prerender_max_packets%s)", need, budgetPkts, o.PrerenderMaxPackets, perWorker)
			case cost > budgetBytes:
				why = fmt.Sprintf("%s exceeds the %s left of the prerender limit of %s (%s%s)", sizeString(cost), sizeString(budgetBytes), sizeString(maxBytes), bytesLimit, perWorker)
			default:
				pre = true
				budgetPkts -= int64(need)
				budgetBytes -= cost
				why = fmt.Sprintf("prerendered %d %s (%s)", need, plural(need, "frame", "frames"), sizeString(bytes))
				switch {
				case byCount:
					why += ", what --count leaves this worker"
				case !cs.unlimited && need == cs.left:
					why += ", the whole count"
				default:
					why += ", one period of its fields, replayed"
				}
			}
		} else if frag != nil {
			why = "streamed: fragments are cut from each datagram as it is rendered"
		} else if o.Plan == PlanStream {
			why = "streamed (--plan stream)"
		} else if !finite {
			why = "streamed: random fields and no count, nothing finite to prerender"
		} else {
			why = "no frames for this worker"
		}
		if o.Plan == PlanPrerender && !pre && need > 0 {
			return nil, fmt.Errorf("template %s: stream %d (%s) cannot be prerendered: %s; raise the limit, set a count, or use --plan auto", printable.Escape(spec.File), i, printable.Escape(st.Name), strings.TrimPrefix(why, "streamed: "))
		}
		if o.CheckOnly {
			continue
		}
		if pre {
			note, err := cs.prerender(ctx, need)
			if err != nil {
				return nil, err
			}
			why += note
			npre++
		} else {
			if !strings.HasPrefix(why, "streamed") && why != "no frames for this worker" {
				why = "streamed: " + why
			}
			cs.compileStream()
			cs.fr = frag
			nstream++
		}
		details = append(details, streamDetail{i, st.Name, why})
		s.streams = append(s.streams, cs)
		if cs.unlimited || cs.left > 0 {
			s.active = append(s.active, i)
			s.total += cs.share
		}
	}
	if shares > 0 {
		s.mean /= shares
	}
	s.rr = newSWRR(s.active, func(i int) int64 { return s.streams[i].share })
	// Smooth weighted round-robin repeats after sum(shares) picks (every
	// stream picked share times, the state back at zero): precompute one
	// period when it is short.
	if len(s.active) > 1 && s.total <= maxSched {
		s.sched = make([]uint16, 0, s.total)
		for range s.total {
			s.sched = append(s.sched, uint16(s.rr.next()))
		}
	}
	switch {
	case nstream == 0:
		s.plan = PlanPrerender
	case npre == 0:
		s.plan = PlanStream
	default:
		s.plan = fmt.Sprintf("prerender %d/stream %d", npre, nstream)
	}
	s.finish(spec) // timed.go
	for _, cs := range s.streams {
		cs.planRun() // fast.go
	}
	s.detail = joinDetails(details)
	return s, nil
}

// streamDetail is what the plan did with one stream, for the detail.
type streamDetail struct {
	i          int
	name, what string
}

// maxDetailGroups bounds the plan detail: a template may hold 65,535
// streams, and one clause each made a report line of megabytes.
const maxDetailGroups = 16

// joinDetails writes the plan detail: one clause per stream, consecutive
// streams that got the same plan in one clause ("streams 2-9999 (s2 …
// s9999), each: prerendered …"), and after maxDetailGroups clauses a
// count of the streams left out (the plan's prerender N/stream M counts
// them all).
func joinDetails(ds []streamDetail) string {
	var b strings.Builder
	groups := 0
	for j := 0; j < len(ds); {
		k := j + 1
		for k < len(ds) && ds[k].what == ds[j].what {
			k++
		}
		if groups == maxDetailGroups {
			fmt.Fprintf(&b, "; and %d more streams (%d-%d)", len(ds)-j, ds[j].i, ds[len(ds)-1].i)
			break
		}
		if groups > 0 {
			b.WriteString("; ")
		}
		groups++
		switch n := k - j; {
		case n == 1:
			fmt.Fprintf(&b, "stream %d (%s): %s", ds[j].i, ds[j].name, ds[j].what)
		case n == 2:
			fmt.Fprintf(&b, "streams %d (%s) and %d (%s), each: %s", ds[j].i, ds[j].name, ds[k-1].i, ds[k-1].name, ds[j].what)
		default:
			fmt.Fprintf(&b, "streams %d-%d (%s … %s), each: %s", ds[j].i, ds[k-1].i, ds[j].name, ds[k-1].name, ds[j].what)
		}
		j = k
	}
	return b.String()
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// streamPeriod is the number of packets after which every field and the
// size repeat; 0 when a field is random or the period is astronomically long.
func streamPeriod(st *Stream) uint64 {
	p := uint64(1)
	lcm := func(v *Value) {
		q := v.Period()
		if q == 0 || p == 0 {
			p = 0
			return
		}
		g := gcd(p, q)
		hi, lo := bits.Mul64(p/g, q)
		if hi != 0 || lo > 1<<48 {
			p = 0
			return
		}
		p = lo
	}
	lcm(&st.Size)
	for _, sl := range newLayout(st, 0).slots {
		v := sl.v
		lcm(&v)
	}
	return p
}

func meanOf(v *Value) float64 {
	switch v.Kind {
	case List, Weighted:
		var s float64
		for _, x := range v.List {
			s += float64(x)
		}
		return s / float64(len(v.List))
	case Increment, Decrement:
		n := v.n()
		return float64(v.From) + float64(n-1)*float64(v.Step)/2
	case Random:
		if len(v.List) > 0 {
			var s float64
			for _, x := range v.List {
				s += float64(x)
			}
			return s / float64(len(v.List))
		}
		return (float64(v.From) + float64(v.To)) / 2
	}
	return float64(v.From)
}

// checkEvery is how many frames prerendering renders between looks at
// its context: a few hundred microseconds of work.
const checkEvery = 4096

func prerenderBytes(ctx context.Context, st *Stream, k, w, need uint64) (int64, error) {
	if st.Size.Kind == Fixed {
		return int64(need) * int64(st.Size.From), nil
	}
	c := newCursor(&st.Size, k, w)
	var total int64
	for j := range need {
		if j%(16*checkEvery) == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		total += int64(c.next())
	}
	return total, nil
}

// sizeString formats n bytes in binary units (1.0 GiB).
func sizeString(n int64) string { return units.FormatSizeApprox(n) }

// compileStream prepares the frame image, the per-size base sums and the
// varying-field patchers.
func (cs *cstream) compileStream() {
	L, st := cs.L, cs.L.st
	maxN := int(st.Size.Max())
	cs.img = make([]byte, maxN)
	L.write(cs.img, maxN, 0, 0, true)
	scratch := make([]byte, maxN)
	var distinct []uint64
	if st.Size.Kind == Fixed {
		distinct = []uint64{st.Size.From}
	} else {
		cs.sizeVar = true
		distinct = distinctSizes(&st.Size)
	}
	index := map[uint64]uint64{}
	for i, n := range distinct {
		// Every checksummed region starts at an even offset: the
		// signature's parity from it is the frame's.
		cs.sizes = append(cs.sizes, sizeEntry{n: int(n), sums: L.baseSums(scratch, int(n)), oddSig: (int(n)-frame.SignatureLen)&1 == 1})
		index[n] = uint64(i)
	}
	if cs.sizeVar {
		// A Value over size-table indexes with the same sequence as Size.
		iv := st.Size
		switch iv.Kind {
		case Increment, Decrement:
			// Map through a list of one period.
			list := make([]uint64, iv.n())
			for j := range list {
				list[j] = index[iv.At(uint64(j))]
			}
			iv = Value{Kind: List, List: list}
		case List, Weighted:
			list := make([]uint64, len(iv.List))
			for j, x := range iv.List {
				list[j] = index[x]
			}
			iv.List = list
		case Random:
			if len(iv.List) > 0 {
				list := make([]uint64, len(iv.List))
				for j, x := range iv.List {
					list[j] = index[x]
				}
				iv.List = list
			} else {
				iv.From, iv.To = 0, iv.To-iv.From // distinct sizes are From..To in order
			}
		}
		cs.sizeCur = newCursor(&iv, cs.k, cs.w)
		cs.lens = L.lens
	}
	// A checksum changes only with a varying field it covers, the size,
	// the signature or a checksum inside it that changes; otherwise it is
	// final in the image (and in the base sums of those covering it).
	var varying uint8
	for i := range L.slots {
		if L.slots[i].v.Kind != Fixed {
			varying |= L.slots[i].cov
		}
	}
	if cs.sig {
		varying |= L.tail
	}
	for i := range L.cks {
		c := &L.cks[i]
		if cs.sizeVar || varying&(1<<i) != 0 {
			cs.rck = append(cs.rck, rtck{i: i, field: c.field, into: L.into[i], udp: c.udp, bad: c.bad, c: c})
			varying |= L.into[i]
			continue
		}
		x := c.finish(cs.sizes[0].sums[i])
		binary.BigEndian.PutUint16(cs.img[c.field:], x)
		for m := L.into[i]; m != 0; m &= m - 1 {
			cs.sizes[0].sums[bits.TrailingZeros8(m)] += uint64(x)
		}
	}
	// From here on, checksums are known by their position in rck.
	remap := func(m uint8) uint8 {
		var out uint8
		for k := range cs.rck {
			if m&(1<<cs.rck[k].i) != 0 {
				out |= 1 << k
			}
		}
		return out
	}
	for k := range cs.rck {
		cs.rck[k].into = remap(cs.rck[k].into)
	}
	for j := range cs.sizes {
		var rs [maxCks]uint64
		for k := range cs.rck {
			rs[k] = cs.sizes[j].sums[cs.rck[k].i]
		}
		cs.sizes[j].sums = rs
	}
	if cs.sig {
		cs.sigCov = remap(L.tail)
	}
	cs.many = len(cs.rck) > 2
	cs.c0 = -1
	if len(cs.rck) > 0 {
		r := &cs.rck[0]
		cs.c0, cs.c0udp, cs.c0bad, cs.c0in1 = r.field, r.udp, r.bad, r.into&2 != 0
	}
	cs.c1 = -1
	if len(cs.rck) > 1 {
		r := &cs.rck[1]
		cs.c1, cs.c1udp, cs.c1bad = r.field, r.udp, r.bad
	}
	for i := range L.slots {
		sl := &L.slots[i]
		if sl.v.Kind == Fixed {
			continue
		}
		rmw := false
		for _, g := range cs.fields {
			if sl.off < g.off+g.width && g.off < sl.off+sl.width {
				rmw = true
			}
		}
		cs.fields = append(cs.fields, pfield{rmw: rmw, base: loadSlot(cs.img, sl.off, sl.width) &^ sl.mask, off: sl.off, width: sl.width, shift: sl.shift, mask: sl.mask, cov: remap(sl.cov), c: newCursor(&sl.v, cs.k, cs.w)})
	}
}

// distinctSizes lists the sizes a varying size takes, ascending; for a
// range they are From..To (every value, so a random pick maps by offset).
func distinctSizes(v *Value) []uint64 {
	if len(v.List) > 0 {
		seen := map[uint64]bool{}
		var out []uint64
		for _, x := range v.List {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
		return out
	}
	out := make([]uint64, 0, v.To-v.From+1)
	for x := v.From; x <= v.To; x++ {
		out = append(out, x)
	}
	return out
}

// prerender renders this worker's next need frames into one arena, or,
// for large fixed-size frames that differ in few bytes, as one image and
// the differing bytes of every frame (see newDelta). It returns a note for
// the plan detail. It stops with ctx.Err() when ctx is done.
func (cs *cstream) prerender(ctx context.Context, need uint64) (string, error) {
	L, st := cs.L, cs.L.st
	cs.pre = true
	cs.npre = int(need)
	if cs.sig {
		// The checksums the signature changes: those running to the end
		// of the frame, and those covering a checksum that changes.
		hit := L.tail
		for i := range L.cks {
			if hit&(1<<i) != 0 {
				c := &L.cks[i]
				cs.preCk = append(cs.preCk, rtck{i: i, field: c.field, into: L.into[i], udp: c.udp, bad: c.bad, c: c})
				hit |= L.into[i]
			}
		}
	}
	cs.pre1 = -1
	if len(cs.preCk) == 1 && !cs.preCk[0].bad {
		cs.pre1, cs.pre1udp = cs.preCk[0].field, cs.preCk[0].udp
	}
	d, err := newDelta(ctx, cs, need)
	if err != nil {
		return "", err
	}
	if d != nil {
		cs.delta = d
		return fmt.Sprintf(", kept as one %d-byte image and the %d bytes that vary per frame (%s in all)", d.n, d.rec, sizeString(int64(d.n+len(d.data)))), nil
	}
	total, err := prerenderBytes(ctx, st, cs.k, cs.w, need)
	if err != nil {
		return "", err
	}
	cs.arena = make([]byte, total)
	fixed := st.Size.Kind == Fixed
	if fixed {
		// One size: frame j is at j*n, no index.
		cs.fixN = int(st.Size.From)
		cs.fixOdd = (cs.fixN-frame.SignatureLen)&1 == 1
	} else {
		cs.frames = make([]preFrame, need)
	}
	sc := newCursor(&st.Size, cs.k, cs.w)
	off := 0
	k := cs.k
	for j := range need {
		if j%checkEvery == 0 && ctx.Err() != nil {
			cs.arena, cs.frames = nil, nil
			return "", ctx.Err()
		}
		n := int(sc.next())
		L.write(cs.arena[off:], n, k, 0, false)
		if !fixed {
			cs.frames[j] = preFrame{off: off, n: uint16(n), odd: (n-frame.SignatureLen)&1 == 1}
		}
		off += n
		k += cs.w
	}
	return "", nil
}

// sigSum is the checksum contribution of a signature's seq and time
// (tsSum = header.Word64Sum(time), computed once per batch).
func sigSum(seq uint64, tsSum uint64, odd bool) uint64 {
	s := header.Word64Sum(seq) + tsSum
	if odd {
		return uint64(header.Swap16(header.Fold(s)))
	}
	return s
}

// renderOne writes the stream's next frame into b and returns its length.
func (cs *cstream) renderOne(b []byte, now, nowSum uint64) int {
	if cs.rp != nil {
		return cs.renderReplay(b, now) // replay.go
	}
	if cs.fr != nil && !cs.fr.inside {
		return cs.renderFragment(b, now, nowSum) // fragment.go
	}
	seq := cs.k | cs.seqTag
	cs.k += cs.w
	if cs.pre {
		j := cs.pj
		cs.pj++
		if cs.pj == cs.npre {
			cs.pj = 0
		}
		var n int
		var odd bool
		if d := cs.delta; d != nil {
			n, odd = d.n, d.odd
			if cs.memo == nil || !cs.memo.primed(b, deltaTag(cs.id)) {
				copy(b[:n], d.base)
			}
			d.apply(b, j)
		} else {
			var off int
			if cs.frames == nil {
				n, odd, off = cs.fixN, cs.fixOdd, j*cs.fixN
			} else {
				f := cs.frames[j]
				n, odd, off = int(f.n), f.odd, f.off
			}
			if cs.memo != nil && n >= KeepMin {
				cs.keepArena(b, j, off, n) // keep.go
			} else {
				if n == 64 && len(b) >= 64 {
					*(*[64]byte)(b) = *(*[64]byte)(cs.arena[off:])
				} else {
					copy(b[:n], cs.arena[off:off+n])
				}
				if cs.memo != nil {
					cs.memo.forget(b)
				}
			}
		}
		if cs.sig {
			sig := b[n-frame.SignatureLen:]
			binary.BigEndian.PutUint64(sig[4:], seq)
			binary.BigEndian.PutUint64(sig[12:], now)
			if c := cs.pre1; c >= 0 {
				// One right checksum covers the signature, and no other
				// checksum covers it: adjust it from the frame's value.
				old := binary.BigEndian.Uint16(b[c:])
				x := ^header.Fold(uint64(^old) + sigSum(seq, nowSum, odd))
				if x == 0 && cs.pre1udp {
					x = 0xffff
				}
				binary.BigEndian.PutUint16(b[c:], x)
			} else if len(cs.preCk) > 0 {
				// Adjust the checksums from the frame's own values: the
				// signature's change, and that of every checksum inside.
				var d [maxCks]uint64
				ss := sigSum(seq, nowSum, odd)
				for k := range cs.preCk {
					r := &cs.preCk[k]
					c := r.c
					old := binary.BigEndian.Uint16(b[r.field:])
					right := old
					if c.bad {
						right = goodSum(old, c.udp)
					}
					sum := uint64(^right) + d[r.i&(maxCks-1)]
					if L := cs.L; L.tail&(1<<r.i) != 0 {
						sum += ss
					}
					x := c.finish(sum)
					binary.BigEndian.PutUint16(b[r.field:], x)
					for m := r.into; m != 0; m &= m - 1 {
						d[bits.TrailingZeros8(m)&(maxCks-1)] += uint64(^old) + uint64(x)
					}
				}
			}
		}
		return n
	}
	var se *sizeEntry
	si := uint64(0)
	if cs.sizeVar {
		si = cs.sizeCur.next()
	}
	se = &cs.sizes[si]
	n := se.n
	if cs.memo != nil && cs.memo.primed(b, streamTag(cs.id, int(si))) {
		// b holds this image from an earlier lap: every byte that
		// differs between frames is written below.
	} else if n == 64 && len(cs.img) >= 64 && len(b) >= 64 {
		// The classic size: a fixed-size array copy the compiler inlines.
		*(*[64]byte)(b) = *(*[64]byte)(cs.img)
	} else {
		copy(b[:n], cs.img[:n])
	}
	// The first two checksums in registers, the rest (tunnels) in cs.rest.
	s0, s1 := se.sums[0], se.sums[1]
	if cs.many {
		cs.rest = se.sums
	}
	for _, f := range cs.lens { // only when the size varies
		binary.BigEndian.PutUint16(b[f.off:], uint16(n-f.sub))
	}
	for i := range cs.fields {
		f := &cs.fields[i]
		var x uint64
		if c := &f.c; c.kind == Increment { // the common case, inline
			x = c.base + c.idx*c.step
			c.idx += c.adv
			if c.idx >= c.n {
				c.idx -= c.n
			}
		} else {
			x = c.next()
		}
		v := (x << f.shift) & f.mask
		switch {
		case f.rmw:
			// The slot is shared with another varying field: keep its
			// bits, replace this field's (zeros in the image, the
			// previous lap's value in a kept buffer).
			storeSlot(b, f.off, f.width, loadSlot(b, f.off, f.width)&^f.mask|v)
		case f.width == 2:
			binary.BigEndian.PutUint16(b[f.off:], uint16(f.base|v))
		case f.width == 4:
			binary.BigEndian.PutUint32(b[f.off:], uint32(f.base|v))
		default:
			storeSlot(b, f.off, f.width, f.base|v)
		}
		s := header.Word64Sum(v)
		if f.cov&1 != 0 {
			s0 += s
		}
		if f.cov&2 != 0 {
			s1 += s
		}
		if f.cov > 3 {
			for m := f.cov &^ 3; m != 0; m &= m - 1 {
				cs.rest[bits.TrailingZeros8(m)&(maxCks-1)] += s
			}
		}
	}
	if cs.sig {
		sig := b[n-frame.SignatureLen:]
		if cs.sizeVar { // the image holds the signature header at the largest size only
			binary.BigEndian.PutUint16(sig[0:], frame.SignatureMagic)
			binary.BigEndian.PutUint16(sig[2:], cs.id)
		}
		binary.BigEndian.PutUint64(sig[4:], seq)
		binary.BigEndian.PutUint64(sig[12:], now)
		ss := sigSum(seq, nowSum, se.oddSig)
		if cs.sigCov&1 != 0 {
			s0 += ss
		}
		if cs.sigCov&2 != 0 {
			s1 += ss
		}
		if cs.many {
			cs.addRest(cs.sigCov, ss)
		}
	}
	// Innermost first: an outer checksum adds the inner ones' values. The
	// first (the L4 checksum, as a rule) is finished by hand here.
	if c := cs.c0; c >= 0 {
		x := ^header.Fold(s0)
		if x == 0 && cs.c0udp {
			x = 0xffff
		}
		if cs.c0bad {
			x = badSum(x, cs.c0udp)
		}
		binary.BigEndian.PutUint16(b[c:], x)
		if c1 := cs.c1; c1 >= 0 { // the second (an IPv4 header, as a rule)
			if cs.c0in1 {
				s1 += uint64(x)
			}
			y := ^header.Fold(s1)
			if y == 0 && cs.c1udp {
				y = 0xffff
			}
			if cs.c1bad {
				y = badSum(y, cs.c1udp)
			}
			binary.BigEndian.PutUint16(b[c1:], y)
			if cs.many {
				cs.finishRest(b, x, y)
			}
		}
	}
	return n
}

// finishRest finishes the checksums after the first two, given their
// values x0 and x1.
func (cs *cstream) finishRest(b []byte, x0, x1 uint16) {
	cs.addRest(cs.rck[0].into, uint64(x0))
	cs.addRest(cs.rck[1].into, uint64(x1))
	for k := 2; k < len(cs.rck); k++ {
		r := &cs.rck[k]
		x := r.final(cs.rest[k&(maxCks-1)])
		binary.BigEndian.PutUint16(b[r.field:], x)
		cs.addRest(r.into, uint64(x))
	}
}

// final turns the sum of checksum r into the value written.
func (r *rtck) final(sum uint64) uint16 {
	x := ^header.Fold(sum)
	if x == 0 && r.udp {
		x = 0xffff
	}
	if r.bad {
		x = badSum(x, r.udp)
	}
	return x
}

// addRest adds x to the sums of the checksums from the third on in m.
func (cs *cstream) addRest(m uint8, x uint64) {
	for m &^= 3; m != 0; m &= m - 1 {
		cs.rest[bits.TrailingZeros8(m)&(maxCks-1)] += x
	}
}

// Render implements engine.Source: it writes up to len(bufs) frames and
// returns how many; fewer means every stream reached its count.
func (s *Source) Render(bufs [][]byte, lens []int, nowNs int64) int {
	if s.tl != nil || s.failed {
		return s.renderTimed(bufs, lens, nowNs) // timed.go
	}
	now := uint64(nowNs)
	nowSum := header.Word64Sum(now)
	n := 0
	for n < len(bufs) && len(s.active) > 0 {
		if len(s.active) == 1 {
			cs := s.streams[s.active[0]]
			m := len(bufs) - n
			if !cs.unlimited && uint64(m) > cs.left {
				m = int(cs.left)
			}
			cs.renderRun(bufs[n:n+m], lens[n:n+m], now, nowSum) // fast.go
			n += m
			if !cs.unlimited {
				cs.left -= uint64(m)
				if cs.left == 0 {
					s.active = s.active[:0]
				}
			}
			continue
		}
		// Smooth weighted round-robin over the active streams: from the
		// precomputed period while the set of streams is unchanged.
		var best int
		if s.sched != nil {
			best = int(s.sched[s.pos])
			if s.pos++; s.pos == len(s.sched) {
				s.pos = 0
			}
		} else {
			best = s.rr.next()
		}
		cs := s.streams[best]
		lens[n] = cs.renderOne(bufs[n], now, nowSum)
		n++
		if !cs.unlimited {
			cs.left--
			if cs.left == 0 {
				s.remove(best)
			}
		}
	}
	return n
}

func (s *Source) remove(i int) {
	for j, a := range s.active {
		if a == i {
			s.active = append(s.active[:j], s.active[j+1:]...)
			break
		}
	}
	s.total -= s.streams[i].share
	// Restart the round-robin state of the remaining streams, computed live
	// from now on.
	s.rr.remove(i, s.streams[i].share)
	s.sched = nil
}

// MaxFrame is the largest frame the source produces.
func (s *Source) MaxFrame() int { return s.maxFrame }

// MeanFrame is the share-weighted mean frame length.
func (s *Source) MeanFrame() float64 { return s.mean }

// Plan reports "prerender", "stream" or "prerender N/stream M", and per
// stream what was chosen and why.
func (s *Source) Plan() (plan, detail string) { return s.plan, s.detail }

// plural returns one when n is 1, else many.
func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
