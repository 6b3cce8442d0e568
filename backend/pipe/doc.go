// Package pipe is wpg's pipe data path: payload frames written to a pipe or
// FIFO — standard output by default, so `wpg send --backend pipe | next`
// works, or `--fifo PATH` — and read back by `wpg recv --backend pipe`
// (standard input or the FIFO), or by any program that reads raw frames
// (ffmpeg with --raw).
//
// The pipe is enlarged with F_SETPIPE_SZ to /proc/sys/fs/pipe-max-size
// (1 MiB by default); when the kernel refuses (pipe-user-pages-soft
// exceeded), the largest size it allows is used and the report says why
// (Info.Reason; the same policy sizes membench's pipe: Size). Frames are written with one write(2) per batch (whole frames),
// or with --vmsplice, which hands the kernel references to the sender's
// pages instead of copying them. The reader asks for exactly the bytes
// that complete a frame, so a frame the pipe can hold whole arrives in one
// read(2); the counts of write and read calls per frame are in the report.
//
// vmsplice buffer reuse: the pipe keeps references to the sender's pages
// until the reader has copied them out, so a staging slot must not be
// rewritten before then. Slots are page aligned; a slot is handed out again
// only after at least a pipe's capacity of later pages (pipe size / 4096
// pipe buffers) has been queued into the pipe (vmsplice calls, non-blocking,
// count only the bytes they report as queued; a slot's splice is repeated
// until all of it is in). Since a pipe holds at most that many buffers, the
// slot's pages must have left the pipe by then. This generalises the
// double-buffering rule "each half as large as the pipe".
//
// No privileges are needed. Linux only.
package pipe
