package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/template"
	"github.com/wpg-dev/wpg/units"
)

// frameSet is how a run builds its frames: packet templates for network
// paths, payload frames for local and device paths.
type frameSet struct {
	newSource func(ctx context.Context, worker, workers int) (engine.Source, error)
	maxFrame  int
	meanFrame float64
	// Packet templates: the largest untagged frame and its stream.
	maxUntagged    int
	untaggedStream string
	// spec is the packet template (nil for payload frames); timedFPS the
	// streams' mean rate when they keep their own schedules (timed).
	spec     *template.Spec
	timed    bool
	timedFPS float64
	// schedule is a timed template's timetable, to measure the run
	// against (report.go).
	schedule template.Schedule
	// notes are said in the report (a capture of wpg's own frames).
	notes []string
	// segFrames is what a segment of a job (Spec.Segment) sends, when
	// segLimited (template.SegmentFrames); zero for the whole job.
	segFrames  uint64
	segLimited bool
}

// errFrames says that newFrames added its problems.
var errFrames = errors.New("frames")

// newFrames builds the run's frames; parsed is the template when it was
// already read (nil: read it here); dir, when set, gives a port pair's
// reverse streams instead.
func newFrames(p *problems, s Spec, reg backend.Registration, parsed *template.Spec, dir *direction) (*frameSet, error) {
	if s.Pcap == "" && s.PcapSpeed != 0 {
		p.add("pcap_speed", fmt.Sprint(s.PcapSpeed), "scales the timing of a capture replayed with {pcap}, and none is given", "add {pcap} FILE, or drop {pcap_speed}")
		return nil, errFrames
	}
	if reg.Payload {
		if s.Pcap != "" {
			p.add("pcap", s.Pcap, fmt.Sprintf("replays packets on the network paths (backends %s), not the payload frames of %s", joinNames(backendsWhere(false)), reg.Name), "drop {pcap}, or use one of those backends")
			return nil, errFrames
		}
		return payloadFrames(p, s)
	}
	return packetFrames(p, s, parsed, dir)
}

func payloadFrames(p *problems, s Spec) (*frameSet, error) {
	size := 64
	if s.Size != "" {
		n, err := units.ParseSizeIn(s.Size, frame.MinPayload, frame.MaxPayload)
		if err != nil {
			p.wrap("size", s.Size, err, fmt.Sprintf("give a size from %d B to 1 GiB, e.g. 1500 or 64KiB", frame.MinPayload))
			return nil, errFrames
		}
		size = int(n)
	}
	verify, err := frame.ParseVerify(verifyName(s.Verify))
	if err != nil {
		p.add("verify", s.Verify, "is not a verify mode", "use on, sample or off")
		return nil, errFrames
	}
	fill := s.Fill
	if fill == "" {
		fill = frame.FillPattern
	}
	if s.PayloadFile != "" && fill == frame.FillPattern {
		fill = frame.FillFile
	}
	seed := uint64(1)
	if s.Seed != nil {
		seed = *s.Seed
	}
	pc := frame.PayloadConfig{Size: size, Raw: s.Raw, Fill: fill, File: s.PayloadFile, Seed: seed, Count: s.Count, Verify: verify}
	// Validate (and read the payload file) once, before any worker starts.
	probe, err := frame.NewPayloadSource(pc, 0, 1)
	if err != nil {
		p.wrap("payload_file", s.PayloadFile, err, "give a readable regular file")
		return nil, errFrames
	}
	return &frameSet{
		newSource: func(_ context.Context, w, n int) (engine.Source, error) { return frame.NewPayloadSource(pc, w, n) },
		maxFrame:  probe.MaxFrame(),
		meanFrame: probe.MeanFrame(),
	}, nil
}

func verifyName(s string) string {
	if s == "" {
		return "on"
	}
	return s
}

func packetFrames(p *problems, s Spec, parsed *template.Spec, dir *direction) (*frameSet, error) {
	var spec *template.Spec
	var err error
	switch {
	case dir != nil:
		spec = dir.spec
	case s.Pcap != "" && (s.Template != "" || s.TemplateText != ""):
		p.add("pcap", s.Pcap, "and a template both give the frames", "give one of them (a template replays a capture with a stream's pcap: key)")
		return nil, errFrames
	case s.Pcap != "":
		if s.Size != "" {
			p.add("size", "", "sets the frame size of the embedded default template, and --pcap replays a capture as captured", "drop {size}")
			return nil, errFrames
		}
		switch {
		case s.PcapSpeed != 0 && !(s.PcapSpeed >= template.MinSpeed && s.PcapSpeed <= template.MaxSpeed): // NaN too; 0 is "not given" (1)
			p.add("pcap_speed", fmt.Sprint(s.PcapSpeed), "divides the capture's gaps: a factor from 0.001 to 1e6 (a template's speed: key has the same bounds)", "give e.g. 2 for twice as fast, 0.5 for half speed")
			return nil, errFrames
		case s.PcapSpeed > 0 && s.Rate != "":
			p.add("pcap_speed", fmt.Sprint(s.PcapSpeed), "scales the capture's own timing, which {rate} replaces", "give {pcap_speed} without {rate}, e.g. 2 for twice as fast")
			return nil, errFrames
		}
		spec = template.ReplaySpec(s.Pcap, s.Rate == "", s.PcapSpeed)
		spec.Streams[0].Count = s.Count // --count loops the capture (0: once through)
	case s.Template != "" && s.TemplateText != "":
		p.add("template_text", "", "and {template} both give a template", "give one of them")
		return nil, errFrames
	case s.Template == "" && s.TemplateText == "":
		spec = template.Default()
		if s.Size != "" {
			n, err := units.ParseSize(s.Size)
			if err == nil {
				spec, err = template.DefaultWithSize(n)
			}
			if err != nil {
				lo, hi := template.DefaultSizeRange()
				msg := err.Error()
				if te := (*template.Error)(nil); errors.As(err, &te) {
					msg = te.Msg // its fix names CLI flags; ours fits the API too
				} else if se := inputerr.As(err); se != nil {
					msg = se.Reason() // "is not a size"; our fix names the range
				}
				p.add("size", s.Size, msg, fmt.Sprintf("use a {size} in %d..%d; payload frames up to 1 GiB are for the local paths: add {backend} shm (or pipe, unix, cma, memcpy)", lo, hi))
				return nil, errFrames
			}
		}
	default:
		if s.Size != "" {
			p.add("size", "", "sets the frame size of the embedded default template", "with a template file, set size: in the template")
			return nil, errFrames
		}
		if parsed != nil {
			spec = parsed
		} else if s.Template != "" {
			spec, err = loadTemplate(s.Template)
		} else {
			spec, err = template.Parse("template", []byte(s.TemplateText))
		}
		if err != nil {
			p.wrap("template", "", err, "correct the template (docs/templates.md)")
			return nil, errFrames
		}
	}
	plan := s.Plan
	switch plan {
	case "":
		plan = "auto"
	case "auto", "prerender", "stream":
	default:
		p.add("plan", strconv.Quote(s.Plan), "is not a plan", "use auto, prerender or stream")
		return nil, errFrames
	}
	seg, segs, _ := ParseSegment(s.Segment) // checked by checkSegment
	opts := template.CompileOptions{
		Segment:             seg,
		Segments:            segs,
		Plan:                plan,
		PrerenderMaxBytes:   orDefault(s.PrerenderMaxBytes, s.Limits.PrerenderMaxBytes, DefaultPrerenderMaxBytes),
		PrerenderMaxPackets: orDefault(s.PrerenderMaxPackets, s.Limits.PrerenderMaxPackets, DefaultPrerenderMaxPackets),
		Workers:             s.Workers,
		Count:               s.Count,
		MemAvailable:        memAvailable(),
	}
	if dir != nil {
		opts.StreamBase = dir.base
	}
	// Compile once up front (streaming: cheap, nothing pre-rendered) so
	// template errors appear before any worker starts.
	popts := opts
	popts.Plan = template.PlanStream
	field := "template"
	if s.Pcap != "" {
		field = "pcap"
	}
	if err := spec.LoadCaptures(); err != nil { // read each capture once, here (template/replay.go)
		var ce *template.CaptureError
		if s.Pcap != "" && errors.As(err, &ce) {
			err = ce.Err // the capture's own error names it: no template around it
		}
		p.wrap(field, "", err, "give a readable pcap or pcapng capture")
		return nil, errFrames
	}
	if overwritesInput(p, s, spec) {
		return nil, errFrames
	}
	gapNotes, ok := captureGaps(p, s, spec) // capture_gaps.go
	if !ok {
		return nil, errFrames
	}
	probe, err := template.Compile(spec, popts)
	if errors.Is(err, template.ErrSegmentCount) {
		p.wrap("segment", s.Segment, err, segmentCountFix)
		return nil, errFrames
	}
	if err != nil {
		p.wrap(field, "", err, "correct the template (docs/templates.md)")
		return nil, errFrames
	}
	probe.Close() // the replays' files
	if opts.Plan == template.PlanPrerender {
		// A plan that cannot work is an input error: say so before any
		// worker starts (worker 0 has the largest share).
		copts := opts
		copts.Workers, copts.CheckOnly = max(s.Workers, 1), true
		if _, err := template.Compile(spec, copts); err != nil {
			p.wrap("plan", "", err, "use plan stream (or auto), or raise the limit it names")
			return nil, errFrames
		}
	}
	fs := &frameSet{
		newSource: func(ctx context.Context, w, n int) (engine.Source, error) {
			o := opts
			o.Worker, o.Workers = w, n
			return template.CompileContext(ctx, spec, o)
		},
		maxFrame:  probe.MaxFrame(),
		meanFrame: probe.MeanFrame(),
		spec:      spec,
		timed:     probe.Timed(),
		timedFPS:  probe.FramesPerSecond(),
		schedule:  probe.Schedule(),
	}
	if segs > 1 {
		if fs.segFrames, fs.segLimited, err = template.SegmentFrames(spec, opts); err != nil {
			p.wrap("segment", s.Segment, err, segmentCountFix)
			return nil, errFrames
		}
	}
	fs.notes = signedCaptureNotes(spec, s.Pcap != "")
	fs.notes = append(fs.notes, truncatedCaptureNotes(spec)...)
	fs.notes = append(fs.notes, gapNotes...)
	var name string
	fs.maxUntagged, name = spec.MaxUntagged()
	fs.untaggedStream = printable.Escape(name) // for the MTU error
	return fs, nil
}

// overwritesInput reports (and adds the problem) when the output file is
// one the run reads: the capture a stream replays, or the template itself.
// The pcapfile backend creates the output when the workers start, which
// truncated the capture before a frame of it was read (wpg send --pcap
// cap.pcap -o cap.pcap left 10 frames of 500).
func overwritesInput(p *problems, s Spec, spec *template.Spec) bool {
	if s.Output == "" {
		return false
	}
	out, err := os.Stat(s.Output)
	if err != nil {
		return false // not there yet: nothing to overwrite
	}
	same := func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && os.SameFile(out, fi)
	}
	for i, st := range spec.Streams {
		if st.Replay == nil || !same(st.Replay.File) {
			continue
		}
		what := fmt.Sprintf("the capture stream %d (%s) replays", i, printable.Escape(st.Name))
		if s.Pcap != "" {
			what = "the capture {pcap} replays"
		}
		p.add("output", s.Output, "is "+what+": writing the run's frames into it would destroy it before it is read", "give {output} another file, e.g. copy.pcap")
		return true
	}
	if s.Template != "" && same(s.Template) {
		p.add("output", s.Output, "is the template file: writing the run's frames into it would destroy it", "give {output} another file, e.g. out.pcap")
		return true
	}
	return false
}

// signedCaptureNotes warns of captures replayed unsigned whose records
// already end in a wpg signature (a capture of wpg's own traffic): a wpg
// receiver counts them by the old signatures, so a capture looped is all
// duplicates after its first pass, and the latency is the capture's age
// (a 1000-record capture replayed twice: 1000 duplicated, 2 s latency).
func signedCaptureNotes(spec *template.Spec, flag bool) []string {
	var notes []string
	for i, st := range spec.Streams {
		if st.Replay == nil || st.Signature {
			continue
		}
		sum, ok := st.Replay.Summary()
		if !ok || sum.Signed == 0 {
			continue
		}
		fix := fmt.Sprintf("set signature: true in stream %d to sign them anew", i)
		if flag {
			fix = "replay it from a template with signature: true to sign them anew (docs/templates.md, Replaying a capture)"
		}
		notes = append(notes, fmt.Sprintf("%d of the %d records of %s end in a wpg signature (a capture of wpg's own frames), replayed as captured: a wpg receiver counts them by those old signatures, as duplicates once the capture loops and with the capture's age as their latency; %s",
			sum.Signed, sum.Records, printable.Escape(st.Replay.File), fix))
	}
	return notes
}

// truncatedCaptureNotes warns of captures whose records were cut short by
// the capture's snap length (tcpdump -s 96): they are replayed as
// captured, shorter than their headers say, and a receiver's stack drops
// them (a bad IP total length) or takes them for runts.
func truncatedCaptureNotes(spec *template.Spec) []string {
	var notes []string
	for _, st := range spec.Streams {
		if st.Replay == nil {
			continue
		}
		sum, ok := st.Replay.Summary()
		if !ok || sum.Truncated == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("%d of the %d records of %s were captured shorter than they were on the wire (the capture's snap length): they go out as captured, shorter than their headers say, and a receiver's stack drops them; capture whole frames (leave out tcpdump's -s, or give -s 0)",
			sum.Truncated, sum.Records, printable.Escape(st.Replay.File)))
	}
	return notes
}

// orDefault is the first of v, site that is not 0, else def.
func orDefault(v, site, def int64) int64 {
	switch {
	case v != 0:
		return v
	case site != 0:
		return site
	}
	return def
}

// memAvailable is MemAvailable of /proc/meminfo in bytes, 0 when it cannot
// be read: prerendering plans within half of it (docs/templates.md).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
