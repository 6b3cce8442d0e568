// Package header provides []byte views of network headers (Ethernet, 802.1Q
// VLAN, MPLS, IPv4, IPv6 and its fragment header, UDP, TCP and its option
// kinds, ICMPv4/ICMPv6 echo and the Neighbor Discovery types, ARP, GRE, and the VNI of VXLAN and Geneve)
// with accessors at fixed offsets, and the internet checksum: full
// computation, verification, pseudo-header sums and the RFC 1624
// incremental update used when a field is patched in place.
//
// It is wpg's one packet vocabulary: the lengths, offsets, EtherTypes and
// protocol numbers, and the walks over a frame's VLAN tags (SkipVLANs,
// VLANTagged, InsertVLAN) and IPv6 extension headers, that the templates,
// the receiver's decoder, the network backends and the capture reader
// share. One file per protocol, in the manner of gVisor's
// pkg/tcpip/header: its length and numbers, its field offsets, its view.
//
// A view is a byte slice starting at the first byte of its header; the
// accessors neither allocate nor check lengths beyond Go's bounds checks, so
// they suit per-packet patching in a hot loop. Multi-byte fields are
// big-endian (network order). The package does no I/O and needs no
// privileges.
package header
