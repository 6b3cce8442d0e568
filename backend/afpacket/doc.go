// Package afpacket is wpg's AF_PACKET backend ("afpacket"): it sends
// Ethernet frames on one network interface through a TPACKET_V3 TX ring
// (frames are rendered straight into the ring's slots; one send() kicks
// each batch), or with sendmmsg from staging buffers when asked
// (NoTxRing) or when the ring cannot be set up. Its receiver captures
// every frame arriving on the interface through a TPACKET_V3 RX ring,
// ignoring the host's own outgoing frames.
//
// Each Sender owns one socket and one ring; an engine worker owns one
// Sender. The ring's size is --ring-depth slots capped by --ring-bytes; the
// slot size is the smallest power of two holding the 48-byte TPACKET_V3
// header and the largest frame, so the effective depth is reported in
// Info().RingDepth.
//
// Privileges: CAP_NET_RAW to open the socket. The ring is mlocked, which
// counts against RLIMIT_MEMLOCK (ulimit -l, systemd LimitMEMLOCK) unless
// the process has CAP_IPC_LOCK.
package afpacket
