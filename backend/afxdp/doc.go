// Package afxdp is wpg's AF_XDP backend ("afxdp"). Each sender worker owns
// one AF_XDP socket bound to queue Options.Net.Queue + its index, with a
// UMEM of its own: frames are rendered straight into UMEM chunks (Reserve
// hands out free chunks, Commit puts their descriptors on the TX ring with
// one index store and kicks the kernel when the ring says it needs a
// kick), and the completion ring gives the chunks back. The UMEM is as
// large as the TX ring needs (--ring-depth chunks, capped by --ring-bytes)
// and preferred on the interface's NUMA node (mbind MPOL_PREFERRED).
//
// The receiver loads an XDP program (cilium/ebpf assembler, no clang) that
// redirects the frames carrying wpg's signature to an XSKMAP holding one
// socket per receive queue, and passes every other frame to the stack. It
// is attached through a BPF link: the kernel detaches it when wpg exits,
// however it exits.
//
// --xdp-mode picks how sockets bind and the program attaches: auto
// (zero-copy and driver mode where the driver has them, else copy mode and
// generic mode, with the reason in the report), native (zero-copy and
// driver mode, or an error) or generic (copy and SKB mode).
//
// Privileges: CAP_NET_RAW for the sockets; CAP_NET_ADMIN and CAP_BPF
// (or root) for the receiver's program. The kernel pins each UMEM and
// charges it to RLIMIT_MEMLOCK (ulimit -l, systemd LimitMEMLOCK) unless
// the process has CAP_IPC_LOCK.
package afxdp
