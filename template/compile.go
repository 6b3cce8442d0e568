package template

import (
	"context"
	"fmt"
	"math/bits"
	"strings"

	"github.com/wpg-dev/wpg/frame"
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
	// StreamBase is added to every stream's index for its signature's
	// stream id: a port pair's mirror streams (--bidir) sign themselves
	// apart from the forward ones. Index + base must stay within 16 bits
	// (Compile checks).
	StreamBase uint16
	// Segment and Segments: the source is worker Worker of segment
	// Segment of Segments of one job (wpg send --segment I/N; 0 or 1
	// Segments: the whole job): it renders the packets k ≡ Worker +
	// Workers·Segment (mod Workers·Segments) of every stream, and with a
	// Count its share of each stream's packets, so that the segments
	// together render one unsegmented run's packets (segment.go).
	// Workers·Segments must not exceed MaxSegmentSenders. The prerender
	// limits stay per segment: each segment's workers share them.
	Segment, Segments int

	// caps, when not nil, are the packets of each stream this source
	// renders (segmentCaps), instead of its share of the streams' counts.
	caps []uint64
}

// Source renders the frames of one worker. It implements engine.Source.
// It is not safe for concurrent use: each worker compiles its own.
type Source struct {
	// base is CompileOptions.StreamBase: a stream's id less base is its
	// index in the Spec.
	base      uint16
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
	by        *byStream // the grouping of a batch by stream (bystream.go), nil when frame by frame
	memo      *memo     // set by KeepFrames
	tl        *timeline // the streams' own schedules (timed.go), nil when shared
	fps       float64   // a timed source's frame rate (timed.go)
	timetable Schedule  // a timed source's timetable, for the report (timed.go)
	failed    bool      // a replay's capture could not be read: no more frames (replay_render.go)
}

// maxSched bounds the precomputed interleaving (sum of shares).
const maxSched = 1 << 16

// Compile builds the Source of worker o.Worker of o.Workers for spec.
func Compile(spec *Spec, o CompileOptions) (*Source, error) {
	return CompileContext(context.Background(), spec, o)
}

// CompileContext is Compile that gives up when ctx is done: prerendering
// a large stream checks ctx every few thousand frames and returns
// ctx.Err() (a SIGTERM during a long prerender ends it at once).
func CompileContext(ctx context.Context, spec *Spec, o CompileOptions) (*Source, error) {
	if err := o.check(spec); err != nil {
		return nil, err
	}
	caps, err := segmentCaps(spec, o) // segment.go
	if err != nil {
		return nil, err
	}
	b := newBudget(o)
	b.counted = b.counted && caps == nil // the caps bound every stream
	lo := o.laneOptions()                // the streams' first packet and stride
	lo.caps = caps
	s := &Source{base: o.StreamBase}
	var details []streamDetail
	npre, nstream := 0, 0
	var shares float64
	for i := range spec.Streams {
		st := &spec.Streams[i]
		if st.Replay != nil { // replay_render.go
			why, err := s.compileReplay(st, i, lo)
			if err != nil {
				s.closeReplays()
				return nil, err
			}
			details = append(details, streamDetail{i, st.Name, why})
			continue
		}
		cs, frag := newStream(st, i, lo)
		s.addFrames(st, frag)
		shares += float64(st.Share)
		need, finite, byCount := b.need(st, cs)
		why, pre, err := b.choose(ctx, st, cs, frag, need, finite, byCount)
		if err != nil {
			return nil, err
		}
		if o.Plan == PlanPrerender && !pre && need > 0 {
			return nil, fmt.Errorf("template %s: stream %d (%s) cannot be prerendered: %s; raise the limit, set a count, or use --plan auto", printable.Escape(spec.File), i, printable.Escape(st.Name), strings.TrimPrefix(why, "streamed: "))
		}
		if o.CheckOnly {
			continue
		}
		if why, err = cs.build(ctx, pre, need, why, frag); err != nil {
			return nil, err
		}
		if pre {
			npre++
		} else {
			nstream++
		}
		details = append(details, streamDetail{i, st.Name, why})
		s.add(cs, i)
	}
	if shares > 0 {
		s.mean /= shares
	}
	s.interleave()
	s.plan = planName(npre, nstream)
	s.finish(spec)         // timed.go
	scr := new(runScratch) // the streamed streams' (fast_stream.go)
	for _, cs := range s.streams {
		cs.planRun(scr) // fast.go
	}
	s.chooseCounted() // timed.go
	s.detail = joinDetails(details)
	return s, nil
}

// check fills in o's defaults and checks o and spec before anything is
// compiled.
func (o *CompileOptions) check(spec *Spec) error {
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.Worker < 0 || o.Worker >= o.Workers {
		return fmt.Errorf("template: worker %d out of range 0..%d", o.Worker, o.Workers-1)
	}
	switch o.Plan {
	case "":
		o.Plan = PlanAuto
	case PlanAuto, PlanPrerender, PlanStream:
	default:
		return fmt.Errorf("template: unknown plan %q: use auto, prerender or stream (--plan)", o.Plan)
	}
	if o.PrerenderMaxBytes <= 0 {
		o.PrerenderMaxBytes = DefaultPrerenderMaxBytes
	}
	if o.PrerenderMaxPackets <= 0 {
		o.PrerenderMaxPackets = DefaultPrerenderMaxPackets
	}
	if len(spec.Streams) == 0 {
		return fmt.Errorf("template %s: no streams", printable.Escape(spec.File))
	}
	if err := o.checkSegment(spec); err != nil { // segment.go
		return err
	}
	if int(o.StreamBase)+len(spec.Streams) > 1<<16 {
		return fmt.Errorf("template %s: %d streams from stream id %d pass the signature's 16-bit stream id", printable.Escape(spec.File), len(spec.Streams), o.StreamBase)
	}
	return nil
}

// budget is what prerendering may still take in one worker: its share of
// the packet and byte limits, less what the streams before took, and its
// share of the run's --count.
type budget struct {
	o          CompileOptions
	maxBytes   int64  // the byte limit over all workers
	bytesLimit string // where maxBytes comes from, for the plan detail
	bytes      int64  // bytes left to this worker
	pkts       int64  // frames left to this worker
	countShare uint64 // the frames of --count this worker sends
	counted    bool   // the run has a --count
	perWorker  string // "; each of the W workers gets 1/W of it" (several workers), for the plan detail
}

// newBudget is the prerender budget of worker o.Worker.
func newBudget(o CompileOptions) *budget {
	W := uint64(o.Workers)
	b := &budget{o: o, maxBytes: o.PrerenderMaxBytes, bytesLimit: "--prerender-max-bytes / tx.prerender_max_bytes"}
	if half := o.MemAvailable / 2; o.MemAvailable > 0 && half < b.maxBytes {
		b.maxBytes = half
		b.bytesLimit = fmt.Sprintf("half of the %s MemAvailable: prerendering stays within half the memory available, whatever --prerender-max-bytes (%s) allows; free memory or prerender less", sizeString(o.MemAvailable), sizeString(o.PrerenderMaxBytes))
	}
	b.bytes = b.maxBytes / int64(o.Workers)
	b.pkts = o.PrerenderMaxPackets / int64(o.Workers)
	// The run's --count bounds what this worker sends (the engine gives
	// worker i the frames i, i+W, … of the count).
	if b.counted = o.Count > 0; b.counted {
		b.countShare = o.Count / W
		if uint64(o.Worker) < o.Count%W {
			b.countShare++
		}
	}
	if o.Workers > 1 {
		b.perWorker = fmt.Sprintf("; each of the %d workers gets 1/%d of it", o.Workers, o.Workers)
	}
	return b
}

// newStream sets up stream i for worker o.Worker (its first packet, its
// stride and the frames it sends), with the fragmenter of a fragmented
// stream (nil for whole datagrams); nothing is rendered yet.
func newStream(st *Stream, i int, o CompileOptions) (*cstream, *fragger) {
	W := uint64(o.Workers)
	id := o.StreamBase + uint16(i)
	L := newLayout(st, id)
	cs := &cstream{L: L, id: id, share: int64(st.Share), sig: st.Signature, k: uint64(o.Worker), w: W, seqTag: frame.SeqWord(0, o.Workers)}
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
	if o.caps != nil { // a segment's share of --count (segment.go)
		cs.left, cs.unlimited = o.caps[i], false
	}
	return cs, frag
}

// addFrames counts the stream's largest frame into the source's and its
// mean, weighted by its share, into the source's sum of means.
func (s *Source) addFrames(st *Stream, frag *fragger) {
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
}

// need is how many distinct frames the worker sends of the stream before
// they repeat: finite is false when nothing repeats (random fields and no
// count), byCount true when the run's --count stops the worker first.
func (b *budget) need(st *Stream, cs *cstream) (need uint64, finite, byCount bool) {
	W := cs.w // the stride between the worker's packets
	period := streamPeriod(st, cs.L)
	finite = true
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
	if b.counted && (!finite || need > b.countShare) {
		need, finite, byCount = b.countShare, true, true
	}
	return need, finite, byCount
}

// choose decides whether the stream is prerendered or streamed and says
// why, for the plan detail.
func (b *budget) choose(ctx context.Context, st *Stream, cs *cstream, frag *fragger, need uint64, finite, byCount bool) (why string, pre bool, err error) {
	switch {
	case b.o.Plan != PlanStream && finite && need > 0 && frag == nil:
		return b.fit(ctx, st, cs, need, byCount)
	case frag != nil:
		return "streamed: fragments are cut from each datagram as it is rendered", false, nil
	case b.o.Plan == PlanStream:
		return "streamed (--plan stream)", false, nil
	case !finite:
		return "streamed: random fields and no count, nothing finite to prerender", false, nil
	}
	return "no frames for this worker", false, nil
}

// fit prerenders the stream's need frames when they fit what is left of
// the budget, and takes them from it.
func (b *budget) fit(ctx context.Context, st *Stream, cs *cstream, need uint64, byCount bool) (why string, pre bool, err error) {
	o := b.o
	// cost adds the per-frame index of varying sizes to the frames.
	var bytes, cost int64
	if need <= uint64(max(b.pkts, 0)) {
		// Exact only when it may fit (it walks the sizes of need frames).
		bytes = int64(need) * int64(st.Size.Min())
		if bytes <= b.bytes {
			if bytes, err = prerenderBytes(ctx, st, cs.k, cs.w, need); err != nil {
				return "", false, err
			}
		}
		cost = bytes
		if st.Size.Kind != Fixed {
			cost += int64(need) * preFrameSize
		}
	}
	switch {
	case need > uint64(max(b.pkts, 0)):
		return fmt.Sprintf("%d frames exceed the %d left of the prerender limit of %d packets (--prerender-max-packets / tx.prerender_max_packets%s)", need, b.pkts, o.PrerenderMaxPackets, b.perWorker), false, nil
	case cost > b.bytes:
		return fmt.Sprintf("%s exceeds the %s left of the prerender limit of %s (%s%s)", sizeString(cost), sizeString(b.bytes), sizeString(b.maxBytes), b.bytesLimit, b.perWorker), false, nil
	}
	b.pkts -= int64(need)
	b.bytes -= cost
	why = fmt.Sprintf("prerendered %d %s (%s)", need, plural(need, "frame", "frames"), sizeString(bytes))
	switch {
	case byCount:
		why += ", what --count leaves this worker"
	case !cs.unlimited && need == cs.left:
		why += ", the whole count"
	default:
		why += ", one period of its fields, replayed"
	}
	return why, true, nil
}

// build prerenders the stream's need frames (pre) or readies it to be
// streamed, and returns the plan detail's why with what it adds.
func (cs *cstream) build(ctx context.Context, pre bool, need uint64, why string, frag *fragger) (string, error) {
	if pre {
		note, err := cs.prerender(ctx, need)
		if err != nil {
			return "", err
		}
		return why + note, nil
	}
	if !strings.HasPrefix(why, "streamed") && why != "no frames for this worker" {
		why = "streamed: " + why
	}
	cs.compileStream()
	cs.fr = frag
	return why, nil
}

// add adds compiled stream i; one with frames to send joins the
// interleaving.
func (s *Source) add(cs *cstream, i int) {
	s.streams = append(s.streams, cs)
	if cs.unlimited || cs.left > 0 {
		s.active = append(s.active, i)
		s.total += cs.share
	}
}

// interleave sets up the smooth weighted round-robin over the active
// streams.
func (s *Source) interleave() {
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
	s.planByStream()
}

// planName is the plan of a source with npre streams prerendered and
// nstream streamed.
func planName(npre, nstream int) string {
	switch {
	case nstream == 0:
		return PlanPrerender
	case npre == 0:
		return PlanStream
	}
	return fmt.Sprintf("prerender %d/stream %d", npre, nstream)
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

// streamPeriod is the number of packets after which every field of
// layout L and the size repeat; 0 when a field is random or the period is
// astronomically long.
func streamPeriod(st *Stream, L *layout) uint64 {
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
	for i := range L.slots {
		lcm(&L.slots[i].v)
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
