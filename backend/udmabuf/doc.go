// Package udmabuf is wpg's DMA-buffer data path (kind device): payload
// frames are rendered in place into a DMA buffer (package dmabuf), as a
// ring of slots, one window of the buffer per worker, and a second process
// maps the same buffer and verifies every frame, as the shm receiver does.
//
// The buffer is ikwzm's u-dma-buf (--device /dev/udmabufN, its sysfs
// directory under /sys/class/u-dma-buf or the old /sys/class/udmabuf) or
// the mainline driver (--device /dev/udmabuf, a buffer made of a sealed
// memfd, sized --slots × slot stride × workers). On u-dma-buf --sync opens
// the node with O_SYNC and --sync-mode N is written to sync_mode before
// the open and restored after the run; when the mapping is cached and the
// device not DMA-coherent, each batch is followed by a sync_for_device of
// its range (sysfs, or the driver's ioctl where ioctl_version says so) and
// the receiver issues sync_for_cpu before it reads. On mainline every
// batch is bracketed with DMA_BUF_IOCTL_SYNC START and END on both sides.
//
// The receiver (`wpg recv --backend udmabuf --listen SOCK`, or the one the
// sender starts) needs no --device: the sender passes the buffer's
// descriptor (the node, or the dma-buf) and a memfd ring of frame
// descriptors over the rendezvous socket with SCM_RIGHTS. The report
// names the driver, the buffer size, its physical address (u-dma-buf),
// the cache mode and the sync calls per frame.
//
// Opening the device needs read-write access to its node (root, or the
// udev rule of docs/dmabuf.md). Linux only.
package udmabuf
