// Package tpacket is the AF_PACKET protocol of the afpacket backend: the
// TPACKET_V3 TX and RX rings, sendmmsg and recvmmsg with their control
// messages, and the feature probes. It is one of the packages the kernel
// door allows to use golang.org/x/sys/unix and unsafe directly (see
// internal/sys's door test); owned descriptors, mappings, the memlock
// error and the clocks come from internal/sys.
package tpacket
