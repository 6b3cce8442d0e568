package dmabuf

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wpg-dev/wpg/units"
)

// The workload of the u-dma-buf article (udmabuf_test.c), exactly.
const (
	// CheckPasses is check_buf's pass count (n = 10; while (--n > 0)).
	CheckPasses = 9
	// ClearPasses is clear_buf's pass count (n = 100; while (--n > 0)).
	ClearPasses = 99
	// CheckBlock is check_buf's block: a 0…255 ramp is written into each
	// 256-byte block and read back.
	CheckBlock = 256
)

// Programs of the bench.
const (
	ProgCheck = "check_buf"
	ProgClear = "clear_buf"
)

// DefaultBenchSizes are the article's buffer sizes: 1, 5 and 10 MiB.
var DefaultBenchSizes = []int64{1 << 20, 5 << 20, 10 << 20}

// DefaultBenchSyncModes are the sync_modes the article times with O_SYNC.
var DefaultBenchSyncModes = []int{0, 1, 2, 3}

// CheckPass is one pass of check_buf over buf: for each 256-byte block
// (the last one shorter), write k & 0xFF at offset k, then read the block
// back; it returns the bytes that read back wrong.
func CheckPass(buf []byte) int {
	bad := 0
	for i := 0; i < len(buf); i += CheckBlock {
		blk := buf[i:min(i+CheckBlock, len(buf))]
		for k := range blk {
			blk[k] = byte(k)
		}
		for k := range blk {
			if blk[k] != byte(k) {
				bad++
			}
		}
	}
	return bad
}

// ClearPass is one pass of clear_buf: memset(buf, 0, len(buf)).
func ClearPass(buf []byte) { clear(buf) }

// BenchConfig is what Bench measures.
type BenchConfig struct {
	// Device is the DMA buffer device ("" = the memfd reference only).
	Device string
	// FS is where sysfs and /dev are (zero: /sys and /dev).
	FS FS
	// Sizes are the buffer sizes (nil = DefaultBenchSizes); a u-dma-buf
	// buffer is used from its start, so sizes above it are skipped.
	Sizes []int64
	// SyncModes are the sync_modes timed with O_SYNC on a u-dma-buf
	// device (nil = DefaultBenchSyncModes).
	SyncModes []int
	// NoReference leaves out the plain memfd mapping.
	NoReference bool
}

// BenchCell is one program × mode × size measurement.
type BenchCell struct {
	Size    int64   `json:"size"`
	Seconds float64 `json:"seconds"`
	// MBps is buffer bytes per second over all passes, in MB/s (10^6).
	MBps float64 `json:"mb_per_s"`
	// Errors counts bytes check_buf read back wrong (0 on sound memory).
	Errors int `json:"errors"`
	// SyncCalls is the number of sync calls the passes made.
	SyncCalls uint64 `json:"sync_calls"`
}

// BenchRow is one program under one cache mode on one target.
type BenchRow struct {
	Program string `json:"program"` // check_buf or clear_buf
	Target  string `json:"target"`  // "memfd" or the device node
	Driver  string `json:"driver"`  // "memfd" or the Buffer's driver
	OSync   bool   `json:"o_sync"`
	// SyncMode is the u-dma-buf sync_mode in effect (nil elsewhere).
	SyncMode  *int   `json:"sync_mode,omitempty"`
	CacheMode string `json:"cache_mode"`
	// Sync is how each pass was bracketed: "none", "manual" (u-dma-buf
	// sync_for_cpu before and sync_for_device after each pass) or
	// "dma-buf" (DMA_BUF_IOCTL_SYNC START and END around each pass).
	Sync   string      `json:"sync"`
	Passes int         `json:"passes"`
	Cells  []BenchCell `json:"cells"`
}

// BenchReport is the table Bench produces.
type BenchReport struct {
	Sizes []int64    `json:"sizes"`
	Rows  []BenchRow `json:"rows"`
	// Notes say what was skipped and why.
	Notes []string `json:"notes,omitempty"`
}

// WriteTable prints the report as the article's table (program, O_SYNC,
// sync_mode, one column per size, in seconds) with MB/s beside each time.
func (r *BenchReport) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"program", "target", "O_SYNC", "sync_mode", "cache", "sync"}
	for _, s := range r.Sizes {
		head = append(head, units.FormatSizeShort(s))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	last := ""
	for _, row := range r.Rows {
		prog := row.Program
		if prog == last {
			prog = ""
		}
		last = row.Program
		osync, mode := "no", "-"
		if row.OSync {
			osync = "yes"
		}
		if row.SyncMode != nil {
			mode = fmt.Sprint(*row.SyncMode)
		}
		cols := []string{prog, row.Target, osync, mode, row.CacheMode, row.Sync}
		for _, s := range r.Sizes {
			c := cellFor(row.Cells, s)
			switch {
			case c == nil:
				cols = append(cols, "-")
			case c.Errors > 0:
				cols = append(cols, fmt.Sprintf("%.3f s (%.0f MB/s, %d BAD)", c.Seconds, c.MBps, c.Errors))
			default:
				cols = append(cols, fmt.Sprintf("%.3f s (%.0f MB/s)", c.Seconds, c.MBps))
			}
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func cellFor(cells []BenchCell, size int64) *BenchCell {
	for i := range cells {
		if cells[i].Size == size {
			return &cells[i]
		}
	}
	return nil
}

// Errors is the number of bytes read back wrong over the whole report.
func (r *BenchReport) Errors() int {
	n := 0
	for _, row := range r.Rows {
		for _, c := range row.Cells {
			n += c.Errors
		}
	}
	return n
}
