package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/config"
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
}

func newFrames(f *runFlags, cfg *config.Config, reg backend.Registration, templatePath string) (*frameSet, error) {
	if reg.Payload {
		return payloadFrames(f)
	}
	if f.raw || f.fifo != "" || f.vmsplice || f.connect != "" || f.payloadFile != "" {
		return nil, fmt.Errorf("--raw, --fifo, --vmsplice, --connect and --payload-file apply to local paths (pipe, shm, cma, unix, …), not to backend %s", reg.Name)
	}
	return packetFrames(f, cfg, templatePath)
}

func payloadFrames(f *runFlags) (*frameSet, error) {
	size := 64
	if f.size != "" {
		n, err := units.ParseSizeIn(f.size, frame.MinPayload, frame.MaxPayload)
		if err != nil {
			return nil, fmt.Errorf("--size: %w", err)
		}
		size = int(n)
	}
	verify, err := frame.ParseVerify(f.verify)
	if err != nil {
		return nil, err
	}
	fill := f.fill
	if f.payloadFile != "" && fill == frame.FillPattern {
		fill = frame.FillFile
	}
	pc := frame.PayloadConfig{Size: size, Raw: f.raw, Fill: fill, File: f.payloadFile, Seed: f.seed, Count: f.count, Verify: verify}
	// Validate (and read the payload file) once, before any worker starts.
	probe, err := frame.NewPayloadSource(pc, 0, 1)
	if err != nil {
		return nil, err
	}
	return &frameSet{
		newSource: func(_ context.Context, w, n int) (engine.Source, error) { return frame.NewPayloadSource(pc, w, n) },
		maxFrame:  probe.MaxFrame(),
		meanFrame: probe.MeanFrame(),
	}, nil
}

func packetFrames(f *runFlags, cfg *config.Config, templatePath string) (*frameSet, error) {
	var spec *template.Spec
	var err error
	if templatePath == "" {
		spec = template.Default()
		if f.size != "" {
			n, err := units.ParseSize(f.size)
			if err != nil {
				lo, hi := template.DefaultSizeRange()
				return nil, fmt.Errorf("--size %s: %w; the embedded default template takes frame sizes %d..%d; payload frames up to 1 GiB are for the local paths: add --backend shm (or pipe, unix, cma, memcpy)", f.size, err, lo, hi)
			}
			if spec, err = template.DefaultWithSize(n); err != nil {
				return nil, fmt.Errorf("--size %s: %w", f.size, err)
			}
		}
	} else {
		if f.size != "" {
			return nil, fmt.Errorf("--size sets the frame size of the embedded default template; with a template file, set size: in the template")
		}
		if spec, err = template.Load(templatePath); err != nil {
			return nil, err
		}
	}
	switch f.plan {
	case "auto", "prerender", "stream":
	default:
		return nil, fmt.Errorf("--plan %q: choose auto, prerender or stream", f.plan)
	}
	opts := template.CompileOptions{
		Plan:                f.plan,
		PrerenderMaxBytes:   cfg.TX.PrerenderMaxBytes,
		PrerenderMaxPackets: cfg.TX.PrerenderMaxPackets,
		Workers:             f.workers,
		Count:               f.count,
		MemAvailable:        memAvailable(),
	}
	// Compile once up front (streaming: cheap, nothing pre-rendered) so
	// template errors appear before any worker starts.
	popts := opts
	popts.Plan = template.PlanStream
	probe, err := template.Compile(spec, popts)
	if err != nil {
		return nil, err
	}
	if opts.Plan == template.PlanPrerender {
		// A plan that cannot work is an input error: say so before any
		// worker starts (worker 0 has the largest share).
		copts := opts
		copts.Workers, copts.CheckOnly = max(f.workers, 1), true
		if _, err := template.Compile(spec, copts); err != nil {
			return nil, err
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
	}
	var name string
	fs.maxUntagged, name = spec.MaxUntagged()
	fs.untaggedStream = printable.Escape(name) // for the MTU error
	return fs, nil
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
