package cli

import (
	"fmt"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/config"
	"github.com/wpg-dev/wpg/template"
)

// frameSet is how a run builds its frames: packet templates for network
// paths, payload frames for local and device paths.
type frameSet struct {
	newSource func(worker, workers int) (engine.Source, error)
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
		n, err := config.ParseSize(f.size)
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
		newSource: func(w, n int) (engine.Source, error) { return frame.NewPayloadSource(pc, w, n) },
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
			n, err := config.ParseSize(f.size)
			if err != nil {
				return nil, fmt.Errorf("--size: %w", err)
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
	}
	// Compile once up front (streaming: cheap, nothing pre-rendered) so
	// template errors appear before any worker starts.
	popts := opts
	popts.Plan = template.PlanStream
	probe, err := template.Compile(spec, popts)
	if err != nil {
		return nil, err
	}
	fs := &frameSet{
		newSource: func(w, n int) (engine.Source, error) {
			o := opts
			o.Worker, o.Workers = w, n
			return template.Compile(spec, o)
		},
		maxFrame:  probe.MaxFrame(),
		meanFrame: probe.MeanFrame(),
	}
	fs.maxUntagged, fs.untaggedStream = spec.MaxUntagged()
	return fs, nil
}
