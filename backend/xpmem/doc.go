// Package xpmem is wpg's XPMEM data path: the receiver maps the sender's
// frame buffers into its own address space through /dev/xpmem (the
// out-of-tree module of https://github.com/hpc/xpmem and its Cray-HPE and
// openucx forks, which share one ABI) and reads every frame in place: one
// write by the sender, no copy at all.
//
// The sender renders frames into page-aligned staging slots of its own
// private memory and exports them once (XPMEM make, mode 0600); it
// publishes (slot, length) descriptors through a small shared-memory ring
// (package shmring, passed as a memfd over the rendezvous socket) together
// with the segment id. The receiver gets and attaches the segment
// (read-write: the module refuses to attach a read-only permit), returns
// views into the attachment from Next, and gives the slots back on its next
// call; on close it detaches, releases, and the sender removes the segment.
//
// Where /dev/xpmem does not exist both sides fail at once with "xpmem
// module not loaded (/dev/xpmem missing): load the xpmem kernel module
// (https://github.com/hpc/xpmem) or use --backend cma/shm"; the error
// wraps internal/sys.ErrXPMEMNotLoaded and fs.ErrNotExist. The module's
// udev rule makes the device mode 0666, so no privilege is needed; the
// exporter's permission mode limits attaching to the same user.
//
// The receiver listens (`wpg recv --backend xpmem --listen SOCK`); the
// sender connects or starts one itself. Linux (amd64 layouts) only.
package xpmem
