// Package nexthop gives a port an address and a gateway instead of MAC
// addresses, as a traffic generator's ports have them: it resolves the
// gateway's MAC on the port before a run (ARP for IPv4, Neighbor
// Discovery for IPv6) and, while the run lasts, answers ARP and Neighbor
// Solicitations for the port's own address where the kernel does not (an
// address the kernel holds on that interface it answers itself).
//
// Port and ParsePort are pure (no I/O). An Agent owns an AF_PACKET socket
// on the interface (github.com/mdlayher/packet), with the protocol bodies
// of github.com/mdlayher/arp and github.com/mdlayher/ndp and the frame
// views of package header; it needs CAP_NET_RAW and Linux. Open it on a
// thread in the port's network namespace (the socket stays there).
package nexthop
