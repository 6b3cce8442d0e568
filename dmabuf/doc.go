// Package dmabuf gives user space DMA buffers to wpg: the two unrelated
// drivers that carry the name udmabuf, read through sysfs and driven
// through their device nodes.
//
//   - ikwzm's u-dma-buf (out of tree; called udmabuf up to v1.4.8): a
//     physically contiguous buffer per /dev/udmabufN, its size, physical
//     address and cache controls in /sys/class/u-dma-buf/NAME (old class
//     name /sys/class/udmabuf/NAME). Opening the node with O_SYNC and the
//     sync_mode attribute choose how the CPU maps it (cached, non-cached,
//     write-combine, DMA-coherent); sync_for_cpu and sync_for_device (or
//     the driver's ioctls) flush and invalidate a range by hand.
//   - mainline /dev/udmabuf (CONFIG_UDMABUF): turns the pages of a sealed
//     memfd into a dma-buf; CPU access is bracketed with
//     DMA_BUF_IOCTL_SYNC. Its module parameters size_limit_mb and
//     list_limit bound a buffer.
//
// FS reads both kinds from an injectable /sys and /dev root (Inventory,
// ParseDevice; fixture trees in testdata/). Open maps a buffer of either
// kind (Buffer) with the cache mode asked for, restores a sync_mode it
// changed on Close, and brackets CPU access (BeginWrite, EndWrite,
// BeginRead, EndRead) with the sync calls the mode needs, counting them.
// Bench runs the check/clear workload of the u-dma-buf article under
// every cache mode a device offers, with a plain memfd as the reference.
//
// Opening a device needs read-write access to its node (root, or a udev
// rule); reading sysfs needs none. Linux only; elsewhere Open returns an
// error wrapping errors.ErrUnsupported.
package dmabuf
