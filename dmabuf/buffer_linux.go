//go:build linux

package dmabuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/wpg-dev/wpg/internal/sys"
)

// Buffer is one mapped DMA buffer of either driver, with one owner: Close
// unmaps it, closes its descriptors and restores a sync_mode Open changed;
// it is idempotent. One goroutine uses a Buffer at a time.
type Buffer struct {
	Driver   string  // DriverUDmaBuf, DriverOld or DriverMainline
	Name     string  // udmabuf0, or udmabuf for mainline
	Node     string  // the device node opened
	Size     int     // bytes mapped
	PhysAddr *uint64 // u-dma-buf: the buffer's physical (DMA) address
	// CacheMode is how the CPU maps the buffer (CacheCached, …).
	CacheMode string
	// OSync is true when the node was opened with O_SYNC.
	OSync bool
	// SyncMode is the u-dma-buf sync_mode in effect (nil for mainline).
	SyncMode *int
	// Coherent is the device's dma_coherent (u-dma-buf).
	Coherent bool
	// SyncVia says how CPU access is bracketed (SyncNone, SyncSysfs,
	// SyncIoctl, SyncDmaBuf).
	SyncVia string
	// SizeLimitMB is the mainline module's size_limit_mb when readable.
	SizeLimitMB *int64
	// Device is the u-dma-buf device's sysfs description (nil for mainline).
	Device *Device

	fd     sys.FD // the node (u-dma-buf) or the dma-buf (mainline)
	m      *sys.Mapping
	forCPU *os.File // sysfs sync_for_cpu (SyncSysfs)
	forDev *os.File // sysfs sync_for_device (SyncSysfs)
	// forCPUFd, forDevFd are their descriptors (-1: none), taken once.
	forCPUFd, forDevFd int
	restore            *int    // sync_mode to write back on Close
	modeAt             string  // the sync_mode attribute
	own                *Syncer // the Buffer's own Syncer (its BeginWrite, … and Stats)
	closed             bool
}

// Syncer brackets CPU access to a Buffer with the sync calls its mode
// needs and counts them. Each goroutine that touches the buffer (a worker
// with its own window) uses its own Syncer; the Buffer's methods of the
// same names use the Buffer's own.
type Syncer struct {
	b *Buffer
	// Stats counts this Syncer's sync calls.
	Stats Stats
	arg   [8]byte
	text  [24]byte
}

// NewSyncer returns a Syncer of b with its own counters.
func (b *Buffer) NewSyncer() *Syncer { return &Syncer{b: b} }

func (b *Buffer) syncer() *Syncer {
	if b.own == nil {
		b.own = b.NewSyncer()
	}
	return b.own
}

// Stats counts the sync calls made through the Buffer's own methods.
func (b *Buffer) Stats() Stats { return b.syncer().Stats }

// BeginWrite is BeginWrite of the Buffer's own Syncer.
func (b *Buffer) BeginWrite(off, n int) error { return b.syncer().BeginWrite(off, n) }

// EndWrite is EndWrite of the Buffer's own Syncer.
func (b *Buffer) EndWrite(off, n int) error { return b.syncer().EndWrite(off, n) }

// BeginRead is BeginRead of the Buffer's own Syncer.
func (b *Buffer) BeginRead(off, n int) error { return b.syncer().BeginRead(off, n) }

// EndRead is EndRead of the Buffer's own Syncer.
func (b *Buffer) EndRead(off, n int) error { return b.syncer().EndRead(off, n) }

// SyncForDevice is SyncForDevice of the Buffer's own Syncer.
func (b *Buffer) SyncForDevice(off, n int, dir Direction) error {
	return b.syncer().SyncForDevice(off, n, dir)
}

// SyncForCPU is SyncForCPU of the Buffer's own Syncer.
func (b *Buffer) SyncForCPU(off, n int, dir Direction) error {
	return b.syncer().SyncForCPU(off, n, dir)
}

// Open maps the buffer o.Device names: a u-dma-buf node (its sysfs
// directory under either class name decides), or the mainline
// /dev/udmabuf, from which it makes a buffer of o.Size bytes out of a
// sealed memfd. Errors say what to do: load which driver, the udev rule
// for permissions, the module parameter for a size over the limit, the
// seals the kernel wants, the range of sync_mode.
func Open(o Options) (*Buffer, error) {
	if o.Device == "" {
		return nil, errors.New("dmabuf: no device given: name /dev/udmabufN (u-dma-buf) or /dev/udmabuf (mainline)")
	}
	if o.SyncMode != nil {
		if err := CheckSyncMode(*o.SyncMode); err != nil {
			return nil, fmt.Errorf("dmabuf %s: %w", o.Device, err)
		}
	}
	name := filepath.Base(o.Device)
	dev, found, err := o.FS.Lookup(name)
	if found {
		if err != nil {
			return nil, fmt.Errorf("dmabuf %s: %w", o.Device, err)
		}
		return openUDmaBuf(o, dev)
	}
	if name == MainlineNode {
		return openMainline(o)
	}
	if _, serr := os.Stat(o.Device); errors.Is(serr, fs.ErrNotExist) {
		return nil, fmt.Errorf("dmabuf %s: %w: load ikwzm's u-dma-buf (github.com/ikwzm/udmabuf; modprobe u-dma-buf udmabuf0=SIZE) for /dev/udmabufN, or use the mainline /dev/udmabuf (kernel with CONFIG_UDMABUF)", o.Device, ErrNoDevice)
	}
	return nil, fmt.Errorf("dmabuf %s: %w: it has no sysfs directory %s or %s, so it is not a u-dma-buf buffer, nor the mainline %s", o.Device, ErrNoDevice,
		o.FS.sys("class", ClassUDmaBuf, name), o.FS.sys("class", ClassOld, name), o.FS.dev(MainlineNode))
}

// openError explains a failed open of a node.
func openError(node, driver string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if driver == DriverMainline {
			return fmt.Errorf("dmabuf %s: %w: the kernel needs CONFIG_UDMABUF (=y, or =m and modprobe udmabuf)", node, ErrNoDevice)
		}
		return fmt.Errorf("dmabuf %s: %w: its sysfs directory exists but the node does not: is devtmpfs mounted on /dev, or does a udev rule rename it?", node, ErrNoDevice)
	case errors.Is(err, fs.ErrPermission):
		rule := `SUBSYSTEM=="u-dma-buf", MODE="0666"` + ` (the old udmabuf driver: KERNEL=="udmabuf[0-9]*", MODE="0666")`
		if driver == DriverMainline {
			rule = `KERNEL=="udmabuf", SUBSYSTEM=="misc", MODE="0666"`
		}
		return fmt.Errorf("dmabuf %s: %w: the node is root-only by default; run as root, or add the udev rule %s to /etc/udev/rules.d/99-udmabuf.rules and reload udev (udevadm control --reload; udevadm trigger)", node, err, rule)
	}
	return fmt.Errorf("dmabuf %s: %w", node, err)
}

func openUDmaBuf(o Options, dev Device) (*Buffer, error) {
	driver := DriverUDmaBuf
	if dev.Class == ClassOld {
		driver = DriverOld
	}
	b := &Buffer{Driver: driver, Name: dev.Name, Node: o.Device, PhysAddr: dev.PhysAddr, Coherent: dev.Coherent(), OSync: o.Sync, Device: &dev, forCPUFd: -1, forDevFd: -1}
	if dev.Size == 0 || dev.Size > 1<<40 {
		return nil, fmt.Errorf("dmabuf %s: sysfs size %d: the buffer is empty or implausibly large", o.Device, dev.Size)
	}
	mode := defaultSyncModeDriver
	if dev.SyncMode != nil {
		mode = *dev.SyncMode
	}
	b.modeAt = filepath.Join(dev.Dir, "sync_mode")
	if o.SyncMode != nil {
		if dev.SyncMode == nil {
			return nil, fmt.Errorf("dmabuf %s: --sync-mode: the device has no sync_mode attribute in %s", o.Device, dev.Dir)
		}
		if err := writeAttr(b.modeAt, strconv.Itoa(*o.SyncMode)); err != nil {
			return nil, err
		}
		old := mode
		b.restore = &old
		mode = *o.SyncMode
	}
	b.SyncMode = &mode
	fd, err := sys.OpenDevice(o.Device, o.Sync)
	if err != nil {
		b.Close()
		return nil, openError(o.Device, driver, err)
	}
	b.fd = sys.OwnFD(fd)
	b.Size = int(dev.Size)
	if b.m, err = sys.MapFile(fd, b.Size, true, false, driver+" "+dev.Name); err != nil {
		b.Close()
		return nil, fmt.Errorf("dmabuf %s: %w", o.Device, err)
	}
	b.CacheMode = CacheMode(mode, o.Sync)
	manual := o.ManualSync || (!b.Coherent && b.CacheMode == CacheCached)
	b.SyncVia = SyncNone
	if manual && !o.NoSync {
		if dev.IoctlVersion != nil && *dev.IoctlVersion >= 1 {
			b.SyncVia = SyncIoctl
		} else {
			b.SyncVia = SyncSysfs
			if b.forCPU, err = os.OpenFile(filepath.Join(dev.Dir, "sync_for_cpu"), os.O_WRONLY, 0); err == nil {
				b.forDev, err = os.OpenFile(filepath.Join(dev.Dir, "sync_for_device"), os.O_WRONLY, 0)
			}
			if err != nil {
				b.Close()
				return nil, fmt.Errorf("dmabuf %s: open the cache-sync attributes: %w", o.Device, err)
			}
			b.forCPUFd, b.forDevFd = int(b.forCPU.Fd()), int(b.forDev.Fd())
		}
	}
	return b, nil
}

// writeAttr writes one value to a sysfs attribute (one write).
func writeAttr(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("dmabuf: write %s: %w: sync_mode is writable by root only (mode 0664, owner root) unless a udev rule grants it", path, err)
		}
		return fmt.Errorf("dmabuf: write %s: %w", path, err)
	}
	_, err = f.WriteString(v + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dmabuf: write %q to %s: %w", v, path, err)
	}
	return nil
}

const pageSize = 4096

func openMainline(o Options) (*Buffer, error) {
	if o.Sync || o.SyncMode != nil {
		return nil, fmt.Errorf("dmabuf %s: O_SYNC and sync_mode are u-dma-buf controls: the mainline driver maps memfd pages cached and syncs with DMA_BUF_IOCTL_SYNC (drop --sync / --sync-mode)", o.Device)
	}
	size := o.Size
	if size == 0 {
		size = DefaultMainlineSize
	}
	if size < 0 || size > 1<<40 {
		return nil, fmt.Errorf("dmabuf %s: buffer size %d: want 1 byte … 1 TiB", o.Device, size)
	}
	size = (size + pageSize - 1) &^ (pageSize - 1)
	ml := o.FS.Mainline()
	b := &Buffer{Driver: DriverMainline, Name: MainlineNode, Node: o.Device, CacheMode: CacheCached, SizeLimitMB: ml.SizeLimitMB, SyncVia: SyncDmaBuf, forCPUFd: -1, forDevFd: -1}
	if o.NoSync {
		b.SyncVia = SyncNone
	}
	if ml.SizeLimitMB != nil && size > *ml.SizeLimitMB<<20 {
		return nil, sizeLimitError(o.Device, size, *ml.SizeLimitMB)
	}
	devfd, err := sys.OpenDevice(o.Device, false)
	if err != nil {
		return nil, openError(o.Device, DriverMainline, err)
	}
	dev := sys.OwnFD(devfd)
	defer dev.Close()
	seals := o.Seals
	if seals == 0 {
		seals = sys.SealShrink
	}
	memfd, err := sys.MemfdSealed("wpg-udmabuf", size, seals)
	if err != nil {
		return nil, fmt.Errorf("dmabuf %s: %w", o.Device, err)
	}
	mf := sys.OwnFD(memfd)
	defer mf.Close() // the dma-buf holds the pages
	var arg [udmabufCreateStructSize]byte
	binary.NativeEndian.PutUint32(arg[0:], uint32(memfd))
	binary.NativeEndian.PutUint32(arg[4:], udmabufFlagsCloexec)
	binary.NativeEndian.PutUint64(arg[8:], 0)
	binary.NativeEndian.PutUint64(arg[16:], uint64(size))
	dbfd, err := sys.IoctlBytes(devfd, ioctlUdmabufCreate, arg[:])
	if err != nil {
		return nil, createError(o.Device, err, size, seals, ml.SizeLimitMB)
	}
	b.fd = sys.OwnFD(dbfd)
	b.Size = int(size)
	if b.m, err = sys.MapFile(dbfd, b.Size, true, false, "dma-buf of "+o.Device); err != nil {
		b.Close()
		return nil, fmt.Errorf("dmabuf %s: %w", o.Device, err)
	}
	return b, nil
}

func sizeLimitError(node string, size, limitMB int64) error {
	return fmt.Errorf("dmabuf %s: a %d MiB buffer is over the udmabuf module's size_limit_mb (%d MiB): raise the parameter (echo N > /sys/module/udmabuf/parameters/size_limit_mb, or udmabuf.size_limit_mb=N on the kernel command line when built in) or ask for less (--slots, --size)", node, (size+(1<<20)-1)>>20, limitMB)
}

// createError explains a refused UDMABUF_CREATE.
func createError(node string, err error, size int64, seals int, limitMB *int64) error {
	if errors.Is(err, syscall.EINVAL) {
		switch {
		case seals&sys.SealShrink == 0 || seals&(sys.SealWrite|sys.SealFutureWrite) != 0:
			return fmt.Errorf("dmabuf %s: UDMABUF_CREATE: %w: the kernel refuses the memfd's seals %#x: udmabuf needs F_SEAL_SHRINK and refuses F_SEAL_WRITE and F_SEAL_FUTURE_WRITE (memfd_create with MFD_ALLOW_SEALING, then F_ADD_SEALS F_SEAL_SHRINK)", node, err, seals)
		case limitMB != nil && size > *limitMB<<20:
			return sizeLimitError(node, size, *limitMB)
		case limitMB == nil && size > 64<<20:
			return fmt.Errorf("dmabuf %s: UDMABUF_CREATE of %d MiB: %w: probably over the module's size_limit_mb (64 MiB by default): raise it (udmabuf.size_limit_mb=N) or ask for less", node, size>>20, err)
		}
	}
	if errors.Is(err, syscall.EBADFD) {
		return fmt.Errorf("dmabuf %s: UDMABUF_CREATE: %w: the kernel did not take the descriptor as a shmem memfd", node, err)
	}
	return fmt.Errorf("dmabuf %s: UDMABUF_CREATE (%d bytes): %w", node, size, os.NewSyscallError("ioctl", err))
}

// Attach maps a buffer another process opened and passed as fd (the
// u-dma-buf node or the mainline dma-buf), size bytes from its start.
// syncVia is the sender's Buffer.SyncVia; with SyncSysfs, forCPU is the
// passed sync_for_cpu attribute (else -1). Attach owns both descriptors,
// also when it fails.
func Attach(fd int, size int, driver, syncVia string, forCPU int) (*Buffer, error) {
	b := &Buffer{Driver: driver, Node: "passed " + driver + " buffer", Size: size, SyncVia: syncVia, fd: sys.OwnFD(fd), forCPUFd: forCPU, forDevFd: -1}
	if forCPU >= 0 {
		b.forCPU = os.NewFile(uintptr(forCPU), "sync_for_cpu")
	}
	switch syncVia {
	case SyncNone, SyncIoctl, SyncDmaBuf:
	case SyncSysfs:
		if b.forCPU == nil {
			b.Close()
			return nil, errors.New("dmabuf: attach: manual sync through sysfs needs the sync_for_cpu descriptor")
		}
	default:
		b.Close()
		return nil, fmt.Errorf("dmabuf: attach: unknown sync method %q", syncVia)
	}
	var err error
	if b.m, err = sys.MapFile(fd, size, true, false, "passed "+driver+" buffer"); err != nil {
		b.Close()
		return nil, fmt.Errorf("dmabuf: attach: %w", err)
	}
	return b, nil
}

// Bytes returns the mapped buffer (nil after Close).
func (b *Buffer) Bytes() []byte { return b.m.Bytes() }

// Fd is the descriptor to pass to another process for Attach.
func (b *Buffer) Fd() int { return b.fd.Int() }

// SyncForCPUFd is the open sync_for_cpu attribute to pass along with Fd
// (SyncSysfs), else -1.
func (b *Buffer) SyncForCPUFd() int { return b.forCPUFd }

// BeginWrite prepares the CPU to write [off, off+n): DMA_BUF_IOCTL_SYNC
// START|WRITE on mainline; nothing on u-dma-buf (a CPU write needs no
// invalidation).
func (y *Syncer) BeginWrite(off, n int) error {
	b := y.b
	if b.SyncVia == SyncDmaBuf {
		return y.dmaBufSync(dmaBufSyncStart | dmaBufSyncWrite)
	}
	return nil
}

// EndWrite hands [off, off+n), just written by the CPU, to the device:
// DMA_BUF_IOCTL_SYNC END|WRITE on mainline, sync_for_device (to device)
// on a u-dma-buf buffer that needs manual sync.
func (y *Syncer) EndWrite(off, n int) error {
	b := y.b
	switch b.SyncVia {
	case SyncDmaBuf:
		return y.dmaBufSync(dmaBufSyncEnd | dmaBufSyncWrite)
	case SyncSysfs, SyncIoctl:
		return y.SyncForDevice(off, n, ToDevice)
	}
	return nil
}

// BeginRead makes [off, off+n) current for the CPU before it reads what
// the device (or another process through it) wrote: DMA_BUF_IOCTL_SYNC
// START|READ on mainline, sync_for_cpu (from device) on a u-dma-buf
// buffer that needs manual sync.
func (y *Syncer) BeginRead(off, n int) error {
	b := y.b
	switch b.SyncVia {
	case SyncDmaBuf:
		return y.dmaBufSync(dmaBufSyncStart | dmaBufSyncRead)
	case SyncSysfs, SyncIoctl:
		return y.SyncForCPU(off, n, FromDevice)
	}
	return nil
}

// EndRead ends a read begun with BeginRead: DMA_BUF_IOCTL_SYNC END|READ on
// mainline, nothing on u-dma-buf.
func (y *Syncer) EndRead(off, n int) error {
	b := y.b
	if b.SyncVia == SyncDmaBuf {
		return y.dmaBufSync(dmaBufSyncEnd | dmaBufSyncRead)
	}
	return nil
}

func (y *Syncer) dmaBufSync(flags uint64) error {
	b := y.b
	binary.NativeEndian.PutUint64(y.arg[:], flags)
	y.Stats.DmaBuf++
	if _, err := sys.IoctlBytes(b.fd.Int(), ioctlDmaBufSync, y.arg[:]); err != nil {
		return fmt.Errorf("dmabuf %s: DMA_BUF_IOCTL_SYNC %#x: %w", b.Node, flags, os.NewSyscallError("ioctl", err))
	}
	return nil
}

// SyncForDevice issues u-dma-buf's sync_for_device for [off, off+n) in
// direction dir (sysfs or ioctl, as SyncVia says); on mainline, which has
// no ranges, it is DMA_BUF_IOCTL_SYNC END|READ|WRITE.
func (y *Syncer) SyncForDevice(off, n int, dir Direction) error {
	b := y.b
	if b.Driver == DriverMainline {
		return y.dmaBufSync(dmaBufSyncEnd | dmaBufSyncRead | dmaBufSyncWrite)
	}
	y.Stats.ForDevice++
	return y.syncCmd(off, n, dir, b.forDevFd, ioctlUSetSyncForDevice, "sync_for_device")
}

// SyncForCPU issues u-dma-buf's sync_for_cpu for [off, off+n) in
// direction dir; on mainline it is DMA_BUF_IOCTL_SYNC START|READ|WRITE.
func (y *Syncer) SyncForCPU(off, n int, dir Direction) error {
	b := y.b
	if b.Driver == DriverMainline {
		return y.dmaBufSync(dmaBufSyncStart | dmaBufSyncRead | dmaBufSyncWrite)
	}
	y.Stats.ForCPU++
	return y.syncCmd(off, n, dir, b.forCPUFd, ioctlUSetSyncForCPU, "sync_for_cpu")
}

func (y *Syncer) syncCmd(off, n int, dir Direction, attr int, req uint, what string) error {
	b := y.b
	if off < 0 || n <= 0 || off+n > b.Size {
		return fmt.Errorf("dmabuf %s: %s of [%d, %d): outside the %d-byte buffer", b.Node, what, off, off+n, b.Size)
	}
	v, err := SyncCommand{Offset: uint64(off), Size: uint64(n), Dir: dir}.Encode()
	if err != nil {
		return fmt.Errorf("dmabuf %s: %s: %w", b.Node, what, err)
	}
	if b.SyncVia == SyncIoctl {
		binary.NativeEndian.PutUint64(y.arg[:], v)
		if _, err := sys.IoctlBytes(b.fd.Int(), req, y.arg[:]); err != nil {
			return fmt.Errorf("dmabuf %s: U_DMA_BUF_IOCTL_SET_%s: %w", b.Node, what, os.NewSyscallError("ioctl", err))
		}
		return nil
	}
	if attr < 0 {
		return fmt.Errorf("dmabuf %s: %s: this buffer was not opened for manual sync", b.Node, what)
	}
	t := strconv.AppendUint(append(y.text[:0], "0x"...), v, 16)
	t = append(t, '\n')
	if _, err := sys.Write(attr, t); err != nil {
		return fmt.Errorf("dmabuf %s: write %s: %w", b.Node, what, os.NewSyscallError("write", err))
	}
	return nil
}

// Close unmaps the buffer, closes its descriptors and writes back the
// sync_mode Open replaced; it is idempotent.
func (b *Buffer) Close() error {
	if b == nil || b.closed {
		return nil
	}
	b.closed = true
	err := b.m.Close()
	if e := b.fd.Close(); err == nil {
		err = e
	}
	for _, f := range []*os.File{b.forCPU, b.forDev} {
		if f != nil {
			f.Close()
		}
	}
	if b.restore != nil {
		if e := writeAttr(b.modeAt, strconv.Itoa(*b.restore)); err == nil {
			err = e
		}
	}
	return err
}
