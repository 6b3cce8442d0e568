// Package libpcap is the cgo boundary of the pcap backend: it opens a
// libpcap handle for injection (pcap_create, pcap_activate) and injects a
// whole batch of frames from C memory with one crossing (pcap_inject per
// frame, inside C). Built only with -tags pcap (and cgo, libpcap-dev);
// without the tag it is this documentation only. Injecting needs
// CAP_NET_RAW.
package libpcap
