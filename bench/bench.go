package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/netns"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/units"
)

// Schema is the version of the matrix's JSON document (docs/bench.md).
const Schema = "wpg.bench/v1"

// Defaults of Config.
const (
	DefaultSmall    = 64
	DefaultLarge    = 1 << 20
	DefaultRepeat   = 3
	DefaultDuration = time.Second
	// QuickDuration is each run's length with Quick, which keeps the whole
	// matrix (three repeats of every cell) under 30 s.
	QuickDuration = 200 * time.Millisecond
	// MaxCells bounds Paths() × Sizes × Repeat.
	MaxCells = 2000
)

// Config says what to run. The zero value runs the default matrix: 64 B
// and 1 MiB, three repeats of one second each.
type Config struct {
	// Sizes are the frame sizes in bytes, one ranked table each (default
	// 64 and 1 MiB). Network paths and null run at sizes up to
	// MaxPacket only.
	Sizes []int64
	// Repeat is the number of runs per cell (default 3).
	Repeat int
	// Duration is each run's length (default 1 s; QuickDuration with
	// Quick).
	Duration time.Duration
	// Quick shortens every run (QuickDuration) and the stall probe.
	Quick bool
	// Network allows the network rows, which create a private network
	// namespace with a veth pair (needs root). Without it they are
	// skipped, with the reason.
	Network bool
	// Only, when not empty, keeps the rows whose Name or Backend it lists.
	Only []string
	// Interval, when positive, keeps each run's intervals (rate over
	// time) in its RunResult.
	Interval time.Duration
	// Progress, when set, is called as each run starts.
	Progress func(Event)
	// Limits are the site's defaults (wpg.toml [tx]) every cell's
	// job.Spec takes.
	Limits job.Limits
	// Root is where /proc and /sys are read for the noise readings ("" =
	// "/").
	Root string
	// Clock is the wall clock (nil: time.Now).
	Clock func() time.Time
}

// MaxPacket is the largest frame the network rows (and null, which runs
// the same packet template) send.
const MaxPacket = 1500

// Event is a run about to start (Config.Progress).
type Event struct {
	Path   string
	Size   int64
	Repeat int // 1-based
	Of     int
	Cell   int // 1-based, over the whole matrix
	Cells  int
}

// Result is a matrix's outcome: one ranked table per size, the rows that
// could not run, and the noise verdict. Its JSON is the documented
// schema of `wpg bench --json` without --backend.
type Result struct {
	Schema string `json:"schema"`
	// Provenance is filled by the client (wpg version, command line,
	// start, host).
	Provenance *report.Provenance `json:"provenance,omitempty"`
	Repeat     int                `json:"repeat"`
	// DurationSeconds is each run's length.
	DurationSeconds float64 `json:"duration_seconds"`
	// BPSLayer is where the rows' bit rates (bits_per_second, and the
	// runs' intervals) count: "l2", the frames' bytes as wpg builds them
	// (wpg's convention, docs/rate.md).
	BPSLayer string   `json:"bps_layer"`
	Tables   []Table  `json:"tables"`
	Skipped  []Skip   `json:"skipped,omitempty"`
	Noise    Noise    `json:"noise"`
	Notes    []string `json:"notes,omitempty"`
	// Interrupted is true when the context ended the matrix early: the
	// tables hold the cells that finished.
	Interrupted bool `json:"interrupted,omitempty"`
	// Environment describes the machine (wpg sysinfo).
	Environment any `json:"environment,omitempty"`
}

// Table is the ranking at one frame size.
type Table struct {
	// Size is the frame size: payload bytes for local paths, the frame
	// length for network paths and null.
	Size int64 `json:"size"`
	Rows []Row `json:"rows"` // fastest first
	// Advice is the table's one line of advice.
	Advice string `json:"advice,omitempty"`
}

// Row is one path at one size: the median of its runs and their spread.
type Row struct {
	// Rank is 1 for the fastest of the table.
	Rank    int    `json:"rank"`
	Path    string `json:"path"`
	Backend string `json:"backend"`
	Group   Group  `json:"group"`
	// PPS is the median frame rate, MinPPS and MaxPPS its range over the
	// repeats; Spread is (MaxPPS − MinPPS) / PPS.
	PPS    float64 `json:"pps"`
	MinPPS float64 `json:"min_pps"`
	MaxPPS float64 `json:"max_pps"`
	Spread float64 `json:"spread"`
	// BytesPerSecond is the median rate in the unit the path's users
	// read: payload bytes for local paths and memcpy (GB/s), frame bits
	// / 8 for network paths and null (shown as Gbit/s). Unit says which
	// ("B/s" or "bit/s"), BitsPerSecond the latter.
	BytesPerSecond float64 `json:"bytes_per_second"`
	BitsPerSecond  float64 `json:"bits_per_second,omitempty"`
	Unit           string  `json:"unit"`
	// Ratio is PPS over the reference's at the same size (memcpy for
	// local rows, null for network rows; 1 for a reference itself); 0
	// when the reference did not run. Reference names it.
	Ratio     float64 `json:"ratio"`
	Reference string  `json:"reference,omitempty"`
	// CPUNsPerFrame is the median CPU time of the sender's threads per
	// frame (ns); the receiver's process is not included.
	CPUNsPerFrame float64 `json:"cpu_ns_per_frame"`
	// Mode is the backend's mode in the last run (tx-ring, inplace, …).
	Mode string `json:"mode,omitempty"`
	// Error is the error of a run that failed (the row's rate is then
	// that of the runs that did not).
	Error string      `json:"error,omitempty"`
	Runs  []RunResult `json:"runs"`
}

// RunResult is one run of a cell.
type RunResult struct {
	PPS            float64 `json:"pps"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	BitsPerSecond  float64 `json:"bits_per_second"`
	Frames         uint64  `json:"frames"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	Mode           string  `json:"mode,omitempty"`
	// Verified is the receiver's verdict for local paths ("" for paths
	// without a receiver).
	Verified  string            `json:"verified,omitempty"`
	Error     string            `json:"error,omitempty"`
	Intervals []report.Interval `json:"intervals,omitempty"`
}

// Skip is a row that did not run, and why.
type Skip struct {
	Path   string `json:"path"`
	Size   int64  `json:"size,omitempty"` // 0: at every size
	Reason string `json:"reason"`
}

func (c Config) withDefaults() Config {
	if len(c.Sizes) == 0 {
		c.Sizes = []int64{DefaultSmall, DefaultLarge}
	}
	if c.Repeat == 0 {
		c.Repeat = DefaultRepeat
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
		if c.Quick {
			c.Duration = QuickDuration
		}
	}
	if c.Root == "" {
		c.Root = "/"
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// Validate checks c's values; Run does too.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	for i, s := range c.Sizes {
		if s < frame.MinPayload || s > frame.MaxPayload {
			errs = append(errs, fmt.Errorf("size %d: give sizes from %d B (the smallest frame every path takes) to 1 GiB", s, frame.MinPayload))
		}
		// A table is a size's: a size given twice would get both its
		// cells' runs in each of two identical tables.
		if j := slices.Index(c.Sizes, s); j < i && !slices.Contains(c.Sizes[j+1:i], s) {
			errs = append(errs, fmt.Errorf("size %d is given more than once: give each size once", s))
		}
	}
	if c.Repeat < 1 || c.Repeat > 100 {
		errs = append(errs, fmt.Errorf("repeat %d: give 1 to 100", c.Repeat))
	}
	if c.Duration < 10*time.Millisecond || c.Duration > time.Hour {
		errs = append(errs, fmt.Errorf("duration %v: give 10ms to 1h per run", c.Duration))
	}
	if c.Interval < 0 || (c.Interval > 0 && c.Interval < report.MinInterval) {
		errs = append(errs, fmt.Errorf("interval %v: give %v or more (0: none)", c.Interval, report.MinInterval))
	}
	for _, o := range c.Only {
		if !slices.ContainsFunc(paths, func(p Path) bool { return p.Name == o || p.Backend == o }) {
			errs = append(errs, fmt.Errorf("path %q: not a row of the matrix (%s)", o, pathNames()))
		}
	}
	if n := len(paths) * len(c.Sizes) * c.Repeat; n > MaxCells {
		errs = append(errs, fmt.Errorf("%d runs: at most %d (fewer sizes or repeats)", n, MaxCells))
	}
	return errors.Join(errs...)
}

func pathNames() string {
	s := ""
	for i, p := range paths {
		if i > 0 {
			s += ", "
		}
		s += p.Name
	}
	return s
}

type cell struct {
	path Path
	size int64
}

// key identifies a cell (Path holds funcs: not comparable).
func (c cell) key() cellKey { return cellKey{c.path.Name, c.size} }

type cellKey struct {
	name string
	size int64
}

// Run runs the matrix. env is the jobs' environment (the CLI's streams,
// its launcher of receiver processes). When ctx ends, the run in progress
// stops, the network namespace is removed, and Run returns the cells that
// finished with Interrupted set and ctx's error.
func Run(ctx context.Context, cfg Config, env job.Env) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	res := &Result{Schema: Schema, Repeat: cfg.Repeat, DurationSeconds: cfg.Duration.Seconds(), BPSLayer: pace.L2.String()}
	m := &matrix{cfg: cfg, env: env, res: res, smp: sampler{root: cfg.Root, now: cfg.Clock}}
	if cfg.Network {
		m.cleanStale(ctx) // namespaces a killed wpg left behind go first, network rows or not
	}
	defer m.closeNS()
	cells := m.cells(ctx)
	if m.ns != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("network rows: veth %s → %s in namespace %s (removed at the end)", m.ns.Outer, m.ns.Inner, m.ns.Name))
	}

	var rd Readings
	m.stalls(&rd)
	first := m.smp.sample()
	freqs := slices.Clone(first.freqs)
	rows := m.run(ctx, cells, &freqs)
	last := m.smp.sample()
	if !res.Interrupted {
		m.stalls(&rd)
	}
	between(&rd, first, last, freqs)
	rd.LoadAvg = m.smp.loadAvg()
	rd.Governor = m.smp.governor()

	m.tables(cells, rows, &rd)
	res.Noise = Judge(rd)
	if res.Interrupted {
		return res, ctx.Err()
	}
	return res, nil
}

// matrix is one Run under way: its settings, the namespace of its
// network rows, and the result it fills.
type matrix struct {
	cfg     Config
	env     job.Env
	res     *Result
	smp     sampler
	ns      *netns.NS // the network rows' veth pair, once one needed it
	netSkip string    // why the network rows cannot run, once known
}

// cleanStale removes the network namespaces a killed wpg left, and says
// so in the notes.
func (m *matrix) cleanStale(ctx context.Context) {
	if gone, err := netns.CleanStale(ctx); err != nil {
		m.res.Notes = append(m.res.Notes, "removing network namespaces left by an earlier wpg: "+err.Error())
	} else if len(gone) > 0 {
		m.res.Notes = append(m.res.Notes, fmt.Sprintf("removed %d network namespace(s) left by a wpg that did not end cleanly: %s", len(gone), strings.Join(gone, ", ")))
	}
}

// closeNS removes the network rows' namespace, if one was made, noting
// a failure.
func (m *matrix) closeNS() {
	if m.ns == nil {
		return
	}
	if err := m.ns.Close(); err != nil {
		m.res.Notes = append(m.res.Notes, "removing the network namespace: "+err.Error())
	}
}

// cells lists which rows run at which size; the rows and sizes that
// cannot run go to the result's Skipped with the reason.
func (m *matrix) cells(ctx context.Context) []cell {
	cfg, res := m.cfg, m.res
	var cells []cell
	for _, p := range paths {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, p.Name) && !slices.Contains(cfg.Only, p.Backend) {
			continue
		}
		if _, err := backend.Lookup(p.Backend); err != nil {
			res.Skipped = append(res.Skipped, Skip{Path: p.Name, Reason: "not in this build"})
			continue
		}
		if p.Available != nil {
			if why := p.Available(); why != "" {
				res.Skipped = append(res.Skipped, Skip{Path: p.Name, Reason: why})
				continue
			}
		}
		sizes, sizeSkips := sizesOf(p, cfg.Sizes)
		if len(sizes) == 0 {
			res.Skipped = append(res.Skipped, sizeSkips...)
			continue
		}
		if p.Net {
			if why := m.network(ctx); why != "" {
				res.Skipped = append(res.Skipped, Skip{Path: p.Name, Reason: why})
				continue
			}
		}
		res.Skipped = append(res.Skipped, sizeSkips...)
		for _, s := range sizes {
			cells = append(cells, cell{p, s})
		}
	}
	return cells
}

// sizesOf splits sizes into those row p runs at and the skips of the
// others (listed unless the whole row is skipped).
func sizesOf(p Path, sizes []int64) (run []int64, skips []Skip) {
	for _, s := range sizes {
		switch {
		case p.SmallOnly && s > MaxPacket:
			skips = append(skips, Skip{Path: p.Name, Size: s, Reason: fmt.Sprintf("carries packets of at most %d B", MaxPacket)})
		case p.SmallOnly && s < 64:
			skips = append(skips, Skip{Path: p.Name, Size: s, Reason: "packets are 64 B at least"})
		default:
			run = append(run, s)
		}
	}
	return run, skips
}

// network says why the network rows cannot run ("" when they can),
// creating their namespace with its veth pair for the first one.
func (m *matrix) network(ctx context.Context) string {
	if !m.cfg.Network {
		return "network rows need root (a private network namespace with a veth pair): run as root"
	}
	if m.ns == nil && m.netSkip == "" {
		n, err := netns.New(ctx, netns.Options{})
		if err != nil {
			m.netSkip = err.Error()
		} else {
			m.ns = n
		}
	}
	return m.netSkip
}

// stalls probes the host's stalls and keeps in rd the worse of that
// reading and the one before; a probe that fails is noted.
func (m *matrix) stalls(rd *Readings) {
	probe := 200 * time.Millisecond
	if m.cfg.Quick {
		probe = 50 * time.Millisecond
	}
	lost, per, cpu, err := probeStalls(m.cfg.Root, probe)
	if err != nil {
		m.res.Notes = append(m.res.Notes, "stall probe: "+err.Error())
		return
	}
	if lost >= rd.StallLostShare {
		rd.StallLostShare, rd.StallsPerSecond, rd.StallCPU = lost, per, cpu
	}
}

// run runs every cell Repeat times and returns their rows; the clock
// readings after each cell go into freqs. Repeats go round the matrix
// (every cell once, then again), so that a burst of load elsewhere
// spreads over the cells rather than sinking one. When ctx ends it stops
// with the result's Interrupted set.
func (m *matrix) run(ctx context.Context, cells []cell, freqs *[]float64) map[cellKey]*Row {
	cfg := m.cfg
	rows := map[cellKey]*Row{}
	total := len(cells) * cfg.Repeat
	n := 0
	for rep := 1; rep <= cfg.Repeat; rep++ {
		for _, c := range cells {
			if ctx.Err() != nil {
				m.res.Interrupted = true
				return rows
			}
			n++
			if cfg.Progress != nil {
				cfg.Progress(Event{Path: c.path.Name, Size: c.size, Repeat: rep, Of: cfg.Repeat, Cell: n, Cells: total})
			}
			rr := runOne(ctx, c, m.ns, cfg, m.env)
			if ctx.Err() != nil {
				// The run was cut short: its figures would sink the median.
				m.res.Interrupted = true
				return rows
			}
			r := rows[c.key()]
			if r == nil {
				r = &Row{Path: c.path.Name, Backend: c.path.Backend, Group: c.path.Group}
				rows[c.key()] = r
			}
			r.Runs = append(r.Runs, rr)
			if s := m.smp.sample(); s.ok {
				*freqs = append(*freqs, s.freqs...)
			}
		}
	}
	return rows
}

// tables builds the ranked table of each size from the rows, and notes
// in rd the widest spread of a row that ran more than once.
func (m *matrix) tables(cells []cell, rows map[cellKey]*Row, rd *Readings) {
	res := m.res
	for _, size := range m.cfg.Sizes {
		t := Table{Size: size}
		for _, c := range cells {
			r := rows[c.key()]
			if c.size != size || r == nil {
				continue
			}
			summarise(r)
			t.Rows = append(t.Rows, *r)
		}
		rank(&t)
		if len(t.Rows) > 0 {
			res.Tables = append(res.Tables, t)
		}
	}
	for _, t := range res.Tables {
		for _, r := range t.Rows {
			if len(r.Runs) > 1 && r.Spread > rd.Spread {
				rd.Spread, rd.SpreadRow = r.Spread, r.Path+" at "+units.FormatSize(t.Size)
			}
		}
	}
}

// runOne runs one cell once.
func runOne(ctx context.Context, c cell, ns *netns.NS, cfg Config, env job.Env) RunResult {
	spec := job.NewSpec()
	spec.Command = "bench"
	spec.Backend = c.path.Backend
	spec.Batch = 256
	spec.Duration = cfg.Duration
	spec.StartReceiver = true
	spec.Size = strconv.FormatInt(c.size, 10)
	spec.Limits = cfg.Limits
	if c.path.Net && ns != nil {
		spec.Interface = ns.Outer
	}
	if c.path.Tune != nil {
		c.path.Tune(&spec)
	}
	env.SnapshotEvery = cfg.Interval // the receivers' progress as often as the intervals
	run, err := job.Start(ctx, spec, env)
	if err != nil {
		return RunResult{Error: err.Error()}
	}
	// The intervals (Interval > 0), on the run's own clock; the
	// receivers' loss too (a local path's cell): every interval carries
	// it and they sum to the cell's.
	intervals := run.Intervals(cfg.Interval, nil)
	rep := run.Report()
	if rep == nil {
		return RunResult{Error: errString(run.Err())}
	}
	rr := RunResult{PPS: rep.PPS, BitsPerSecond: rep.BPS, BytesPerSecond: rep.BPS / 8, Frames: rep.Frames, Seconds: rep.Seconds, CPUSeconds: rep.CPUSeconds, Error: errString(run.Err())}
	rr.Mode = rep.Backend.Mode
	if rep.Payload {
		rr.BytesPerSecond = rep.PayloadBytesPerSecond
	}
	if len(rep.Verification) > 0 {
		rr.Verified = "ok"
		if rep.Failed != nil {
			rr.Verified = rep.Failed.Message
		}
	}
	if rep.Failed != nil && rr.Error == "" {
		rr.Error = rep.Failed.Message
	}
	rr.Intervals = intervals
	return rr
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
