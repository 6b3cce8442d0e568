package dmabuf

import "errors"

// Drivers a Buffer can come from.
const (
	DriverUDmaBuf  = "u-dma-buf"        // ikwzm's driver, /sys/class/u-dma-buf
	DriverOld      = "udmabuf (old)"    // ikwzm's driver up to v1.4.8, /sys/class/udmabuf
	DriverMainline = "mainline udmabuf" // drivers/dma-buf/udmabuf.c, /dev/udmabuf
)

// How a Buffer keeps the CPU's view and the device's in step (SyncVia).
const (
	SyncNone   = "none"    // coherent or uncached: nothing to do
	SyncSysfs  = "sysfs"   // u-dma-buf: packed commands written to sync_for_cpu / sync_for_device
	SyncIoctl  = "ioctl"   // u-dma-buf: U_DMA_BUF_IOCTL_SET_SYNC_FOR_CPU / _DEVICE
	SyncDmaBuf = "dma-buf" // mainline: DMA_BUF_IOCTL_SYNC START / END
)

// DefaultMainlineSize is the size of a mainline buffer when Options.Size
// is 0.
const DefaultMainlineSize = 16 << 20

// Options say which buffer to open and how to map it.
type Options struct {
	// Device is the node: /dev/udmabufN (u-dma-buf), /dev/udmabuf
	// (mainline), or a file standing in for a u-dma-buf node in tests
	// (with its sysfs directory under FS.Sys).
	Device string
	// FS is where sysfs and /dev are (zero: /sys and /dev).
	FS FS
	// Sync opens a u-dma-buf node with O_SYNC (the sync_mode then decides
	// the mapping).
	Sync bool
	// SyncMode, when not nil, is written to the device's sync_mode before
	// it is opened and the old value written back on Close (u-dma-buf).
	SyncMode *int
	// ManualSync forces sync_for_cpu / sync_for_device around each CPU
	// access even where the mode makes them unnecessary (the bench's
	// "manual" rows); NoSync leaves them out even where needed (the
	// bench's reference rows). By default they are issued exactly when the
	// buffer is neither coherent nor mapped uncached.
	ManualSync, NoSync bool
	// Size is the mainline buffer's size in bytes (0 = DefaultMainlineSize),
	// rounded up to whole pages; a u-dma-buf buffer has the size sysfs says.
	Size int64
	// Seals are the seals of the mainline buffer's memfd (0 = F_SEAL_SHRINK,
	// what the driver requires); other values are for showing the
	// driver's refusal.
	Seals int
}

// Stats counts the sync calls a Buffer made.
type Stats struct {
	ForDevice uint64 `json:"sync_for_device"` // sync_for_device commands (u-dma-buf)
	ForCPU    uint64 `json:"sync_for_cpu"`    // sync_for_cpu commands (u-dma-buf)
	DmaBuf    uint64 `json:"dma_buf_sync"`    // DMA_BUF_IOCTL_SYNC calls (mainline)
}

// Total is the number of sync calls of every kind.
func (s Stats) Total() uint64 { return s.ForDevice + s.ForCPU + s.DmaBuf }

// ErrNoDevice is wrapped by Open's error when the node does not exist.
var ErrNoDevice = errors.New("no such DMA buffer device")
