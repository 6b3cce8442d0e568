//go:build linux

package dmabuf

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/units"
)

// target is one buffer the bench runs on, mapped once per cache mode.
type target struct {
	mem     []byte
	row     BenchRow // the row's description (no cells)
	before  func(n int) error
	after   func(n int) error
	calls   func() uint64
	closeFn func() error
}

// Bench runs check_buf (CheckPasses passes) and clear_buf (ClearPasses
// passes) at each size under every cache mode the device offers: on
// u-dma-buf without O_SYNC, with O_SYNC under each sync_mode (each written
// before the open and restored after), and cached with manual sync around
// each pass; on mainline cached without sync calls and with
// DMA_BUF_IOCTL_SYNC around each pass; and on a plain memfd mapping as the
// reference. ctx stops it between measurements.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchReport, error) {
	sizes := cfg.Sizes
	if len(sizes) == 0 {
		sizes = DefaultBenchSizes
	}
	sizes = append([]int64(nil), sizes...)
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	for i, s := range sizes {
		if s < 1 || s > 1<<30 {
			return nil, fmt.Errorf("dmabuf bench: size %d: want 1 byte … 1 GiB", s)
		}
		// a column is a size's: a second one would repeat the first's
		if i > 0 && sizes[i-1] == s {
			return nil, fmt.Errorf("dmabuf bench: size %d is given twice: give each size once", s)
		}
	}
	modes := cfg.SyncModes
	if modes == nil {
		modes = DefaultBenchSyncModes
	}
	for _, m := range modes {
		if err := CheckSyncMode(m); err != nil {
			return nil, fmt.Errorf("dmabuf bench: %w", err)
		}
	}
	rep := &BenchReport{Sizes: sizes}
	maxSize := sizes[len(sizes)-1]
	var opens []func() (*target, error)
	if !cfg.NoReference {
		opens = append(opens, func() (*target, error) { return memfdTarget(maxSize) })
	}
	if cfg.Device != "" {
		name := filepath.Base(cfg.Device)
		dev, found, err := cfg.FS.Lookup(name)
		switch {
		case err != nil:
			return nil, fmt.Errorf("dmabuf bench: %w", err)
		case found:
			if int64(dev.Size) < maxSize {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s holds %s: larger sizes are skipped on it", cfg.Device, units.FormatSizeShort(int64(dev.Size))))
			}
			open := func(o Options, sync string) func() (*target, error) {
				o.Device, o.FS = cfg.Device, cfg.FS
				return func() (*target, error) { return bufferTarget(o, sync) }
			}
			opens = append(opens, open(Options{NoSync: true}, "none"))
			for _, m := range modes {
				opens = append(opens, open(Options{Sync: true, SyncMode: &m, NoSync: true}, "none"))
			}
			opens = append(opens, open(Options{ManualSync: true}, "manual"))
		case name == MainlineNode:
			opens = append(opens,
				func() (*target, error) {
					return bufferTarget(Options{Device: cfg.Device, FS: cfg.FS, Size: maxSize, NoSync: true}, "none")
				},
				func() (*target, error) {
					return bufferTarget(Options{Device: cfg.Device, FS: cfg.FS, Size: maxSize}, "dma-buf")
				})
		default:
			_, err := Open(Options{Device: cfg.Device, FS: cfg.FS})
			return nil, fmt.Errorf("dmabuf bench: %w", err)
		}
	}
	var checkRows, clearRows []BenchRow
	for _, open := range opens {
		t, err := open()
		if err != nil {
			return nil, err
		}
		ck, cl, err := t.run(ctx, sizes)
		if cerr := t.closeFn(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		checkRows = append(checkRows, ck)
		clearRows = append(clearRows, cl)
	}
	rep.Rows = append(checkRows, clearRows...)
	return rep, nil
}

func memfdTarget(size int64) (*target, error) {
	fd, err := sys.MemfdCreate("wpg-dmabuf-bench", size)
	if err != nil {
		return nil, fmt.Errorf("dmabuf bench: the memfd reference: %w", err)
	}
	m, err := sys.MapShared(fd, int(size), true)
	if err != nil {
		sys.CloseFd(fd)
		return nil, fmt.Errorf("dmabuf bench: the memfd reference: %w", err)
	}
	return &target{
		mem:     m.Bytes(),
		row:     BenchRow{Target: "memfd", Driver: "memfd", CacheMode: CacheCached, Sync: "none"},
		closeFn: func() error { err := m.Close(); sys.CloseFd(fd); return err },
	}, nil
}

func bufferTarget(o Options, sync string) (*target, error) {
	b, err := Open(o)
	if err != nil {
		return nil, fmt.Errorf("dmabuf bench: %w", err)
	}
	t := &target{
		mem:     b.Bytes(),
		row:     BenchRow{Target: b.Node, Driver: b.Driver, OSync: b.OSync, CacheMode: b.CacheMode, Sync: sync},
		calls:   func() uint64 { return b.Stats().Total() },
		closeFn: b.Close,
	}
	if o.SyncMode != nil {
		m := *b.SyncMode
		t.row.SyncMode = &m
	}
	if sync != "none" {
		t.before = func(n int) error { return b.SyncForCPU(0, n, Bidirectional) }
		t.after = func(n int) error { return b.SyncForDevice(0, n, Bidirectional) }
	}
	return t, nil
}

// run times both programs at every size the buffer holds.
func (t *target) run(ctx context.Context, sizes []int64) (check, clr BenchRow, err error) {
	check, clr = t.row, t.row
	check.Program, check.Passes = ProgCheck, CheckPasses
	clr.Program, clr.Passes = ProgClear, ClearPasses
	for _, size := range sizes {
		if size > int64(len(t.mem)) {
			continue
		}
		buf := t.mem[:size]
		for _, prog := range []*BenchRow{&check, &clr} {
			if err := ctx.Err(); err != nil {
				return check, clr, err
			}
			c, err := t.measure(prog.Program, buf)
			if err != nil {
				return check, clr, err
			}
			prog.Cells = append(prog.Cells, c)
		}
	}
	return check, clr, nil
}

func (t *target) measure(prog string, buf []byte) (BenchCell, error) {
	passes := ClearPasses
	if prog == ProgCheck {
		passes = CheckPasses
	}
	var calls0 uint64
	if t.calls != nil {
		calls0 = t.calls()
	}
	bad := 0
	start := sys.MonotonicNs()
	for range passes {
		if t.before != nil {
			if err := t.before(len(buf)); err != nil {
				return BenchCell{}, err
			}
		}
		if prog == ProgCheck {
			bad += CheckPass(buf)
		} else {
			ClearPass(buf)
		}
		if t.after != nil {
			if err := t.after(len(buf)); err != nil {
				return BenchCell{}, err
			}
		}
	}
	secs := float64(sys.MonotonicNs()-start) / 1e9
	c := BenchCell{Size: int64(len(buf)), Seconds: secs, Errors: bad}
	if secs > 0 {
		c.MBps = float64(passes) * float64(len(buf)) / secs / 1e6
	}
	if t.calls != nil {
		c.SyncCalls = t.calls() - calls0
	}
	return c, nil
}
