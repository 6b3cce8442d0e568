package dmabuf

import (
	"errors"
	"fmt"
)

// u-dma-buf sync_mode bits: the low two bits choose the CPU mapping that
// O_SYNC gives; SyncAlways (4) applies it without O_SYNC too.
const (
	SyncModeCached        = 0 // O_SYNC changes nothing
	SyncModeNonCached     = 1 // the driver's default
	SyncModeWriteCombine  = 2
	SyncModeDMACoherent   = 3
	SyncAlways            = 4
	MaxSyncMode           = 7
	syncModeMask          = 3
	defaultSyncModeDriver = SyncModeNonCached
)

// Cache modes as the report and the bench name them.
const (
	CacheCached       = "cached"
	CacheNonCached    = "non-cached"
	CacheWriteCombine = "write-combine"
	CacheDMACoherent  = "dma-coherent"
)

// ErrSyncMode is wrapped by the error for a sync_mode outside 0 … 7.
var ErrSyncMode = errors.New("sync_mode out of range")

// CheckSyncMode returns an error naming the valid values unless m is a
// sync_mode the driver accepts (0 … 7).
func CheckSyncMode(m int) error {
	if m < 0 || m > MaxSyncMode {
		return fmt.Errorf("sync_mode %d: %w: give 0 … 7 (with O_SYNC: 1 non-cached, 2 write-combine, 3 DMA-coherent, 0 cached; add 4 to apply it without O_SYNC too)", m, ErrSyncMode)
	}
	return nil
}

// CacheMode is how u-dma-buf maps a buffer opened with (osync) or
// without O_SYNC under sync_mode m (the driver's table: without O_SYNC the
// mapping is cached unless bit 2, SyncAlways, is set).
func CacheMode(m int, osync bool) string {
	if !osync && m&SyncAlways == 0 {
		return CacheCached
	}
	switch m & syncModeMask {
	case SyncModeNonCached:
		return CacheNonCached
	case SyncModeWriteCombine:
		return CacheWriteCombine
	case SyncModeDMACoherent:
		return CacheDMACoherent
	}
	return CacheCached
}

// Direction is a DMA direction of a sync command.
type Direction uint8

// DMA directions as the driver numbers them (enum dma_data_direction).
const (
	Bidirectional Direction = 0
	ToDevice      Direction = 1
	FromDevice    Direction = 2
)

// SyncCommand is the packed value written to sync_for_cpu or
// sync_for_device (or passed to U_DMA_BUF_IOCTL_SET_SYNC_FOR_*): it
// carries its own range, so the stored sync_offset / sync_size are not
// used.
type SyncCommand struct {
	Offset uint64 // bytes from the start of the buffer; below 4 GiB
	Size   uint64 // bytes; rounded up to 16, at most 0xFFFFFFF0
	Dir    Direction
}

// Packed-command layout (u-dma-buf.c SYNC_COMMAND_*).
const (
	cmdDirShift    = 2
	cmdDirMask     = 0xC
	cmdSizeMask    = 0xFFFFFFF0
	cmdOffsetShift = 32
	maxCmdOffset   = 1<<32 - 1
)

// Encode packs c: bits 63..32 offset, 31..4 size (16-byte granularity),
// 3..2 direction, bit 0 set.
func (c SyncCommand) Encode() (uint64, error) {
	size := (c.Size + 15) &^ 15
	switch {
	case c.Offset > maxCmdOffset:
		return 0, fmt.Errorf("sync command: offset %#x does not fit the packed form (below 4 GiB)", c.Offset)
	case size == 0 || size > cmdSizeMask:
		return 0, fmt.Errorf("sync command: size %d: want 1 … %d bytes", c.Size, uint64(cmdSizeMask))
	case c.Dir > FromDevice:
		return 0, fmt.Errorf("sync command: direction %d: want 0 (bidirectional), 1 (to device) or 2 (from device)", c.Dir)
	}
	return c.Offset<<cmdOffsetShift | size | uint64(c.Dir)<<cmdDirShift | 1, nil
}

// DecodeSyncCommand unpacks a value written to sync_for_cpu or
// sync_for_device; ok is false for the plain form (1: use the stored
// sync_offset, sync_size and sync_direction) and for 0 (no command).
func DecodeSyncCommand(v uint64) (c SyncCommand, ok bool) {
	if v&1 == 0 || v&^1 == 0 {
		return SyncCommand{}, false
	}
	return SyncCommand{Offset: v >> cmdOffsetShift, Size: v & cmdSizeMask, Dir: Direction((v & cmdDirMask) >> cmdDirShift)}, true
}

// mainline and dma-buf ioctls (include/uapi/linux/udmabuf.h, dma-buf.h)
// and u-dma-buf's (u-dma-buf-ioctl.h), numbers as _IOW/_IOR compute them.
const (
	ioctlUdmabufCreate      = 0x40187542 // _IOW('u', 0x42, struct udmabuf_create)
	ioctlDmaBufSync         = 0x40086200 // _IOW('b', 0, struct dma_buf_sync)
	ioctlUSetSyncForCPU     = 0x40085505 // _IOW('U', 5, u64)
	ioctlUSetSyncForDevice  = 0x40085506 // _IOW('U', 6, u64)
	udmabufFlagsCloexec     = 0x01
	dmaBufSyncRead          = 1
	dmaBufSyncWrite         = 2
	dmaBufSyncStart         = 0
	dmaBufSyncEnd           = 4
	udmabufCreateStructSize = 24
)
