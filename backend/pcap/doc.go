// Package pcap is wpg's libpcap backend (--backend pcap -i IFACE), built
// with -tags pcap on libpcap 1.10 (libpcap-dev); the default build stays
// pure Go and says how to get it.
//
// The sender renders a batch of frames into a staging area in C memory
// and injects them with pcap_inject, one call per frame inside one
// crossing into C per batch (package internal/libpcap). It is the
// portable path, for comparison and for systems where libpcap is what
// reaches the device: on Linux each frame is one send() on a packet
// socket, so afpacket's TX ring is faster. One worker: a libpcap handle
// is one socket, and a second handle on the same interface would only
// interleave with it. It needs CAP_NET_RAW; the report names libpcap's
// version. docs/pcap.md has the set-up and the errors.
package pcap
