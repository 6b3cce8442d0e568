package template

// Spec is a decoded packet template: plain, deterministic data with no tie
// to the machine. Parse produces it from *.wpg.yaml; Compile turns it into
// frames.
type Spec struct {
	// File is the name used in error messages (the template's path).
	File string
	// Seed is the template-wide seed of the "random" variations that give
	// none of their own.
	Seed uint64
	// Streams are sent interleaved in proportion to their Share.
	Streams []Stream
}

// MaxUntagged returns the largest frame of the streams without a VLAN tag,
// and that stream's name (0 and "" when every stream is tagged): a network
// path checks it against the interface MTU before the first frame.
func (s *Spec) MaxUntagged() (size int, stream string) {
	for i := range s.Streams {
		st := &s.Streams[i]
		if n := int(st.Size.Max()); len(st.VLANs) == 0 && n > size {
			size, stream = n, st.Name
		}
	}
	return size, stream
}

// Stream is one flow of frames: a layer stack, a frame size, fields that
// vary per packet, a count and a rate share.
type Stream struct {
	Name string
	// Count is the number of frames of the stream; 0 means unlimited.
	Count uint64
	// Share is the stream's weight in the interleaving (>= 1).
	Share uint32
	// Signature puts the 20-byte wpg signature (frame.PutSignature) into
	// the last bytes of every frame.
	Signature bool
	// Size is the frame length in bytes as handed to the data path
	// (Ethernet header to the end of the payload, without the 4-byte FCS).
	Size Value

	Ethernet Ethernet
	// VLANs are the 802.1Q tags, outer first: none, one, or two (QinQ).
	VLANs []VLAN
	// At most one of IPv4, IPv6 and ARP is set.
	IPv4 *IPv4
	IPv6 *IPv6
	ARP  *ARP
	// At most one of UDP, TCP, ICMP (ICMPv4 with IPv4, ICMPv6 with IPv6).
	UDP  *UDP
	TCP  *TCP
	ICMP *ICMP

	Payload Payload
}

// Ethernet is the Ethernet II header.
type Ethernet struct {
	Src, Dst Value // 48-bit MAC addresses
	// Type is the EtherType written when no IPv4, IPv6 or ARP layer
	// follows (raw payload); 0 means 0x88b5 (IEEE local experimental).
	Type uint16
}

// VLAN is one 802.1Q / 802.1ad tag.
type VLAN struct {
	TPID uint16 // 0x8100 (802.1Q) or 0x88a8 (802.1ad outer tag)
	ID   Value  // 12 bits
	PCP  uint8
	DEI  bool
}

// IPv4 is the IPv4 header (no options).
type IPv4 struct {
	Src, Dst Value // 32-bit addresses
	TTL      Value
	DSCP     Value // 6 bits
	ECN      uint8
	ID       Value
	DF       bool
	// Protocol is written when no UDP/TCP/ICMP layer follows; 0 means 253
	// (experimentation, RFC 3692).
	Protocol uint8
}

// IPv6 is the IPv6 fixed header.
type IPv6 struct {
	Src, Dst  IPv6Addr
	HopLimit  Value
	DSCP      Value // upper 6 bits of the traffic class
	ECN       uint8
	FlowLabel Value // 20 bits
	// NextHeader is written when no UDP/TCP/ICMPv6 layer follows; 0 means 253.
	NextHeader uint8
}

// IPv6Addr is an IPv6 address whose upper 64 bits are fixed and whose lower
// 64 bits are a Value (ranges and lists vary the interface identifier).
type IPv6Addr struct {
	Hi uint64
	Lo Value
}

// UDP is the UDP header.
type UDP struct {
	Src, Dst Value
}

// TCP is the TCP header (no options).
type TCP struct {
	Src, Dst Value
	Seq, Ack Value
	Flags    uint8 // header.TCPSyn | header.TCPAck …
	Window   uint16
}

// ICMP is an ICMPv4 or ICMPv6 echo message (the IP layer decides which).
type ICMP struct {
	Reply bool // echo reply instead of echo request
	ID    Value
	Seq   Value
}

// ARP is an ARP packet for Ethernet and IPv4.
type ARP struct {
	Op       uint16 // 1 request, 2 reply
	SHA, THA Value  // MAC addresses
	SPA, TPA Value  // IPv4 addresses
}

// Payload describes the bytes after the last header.
type Payload struct {
	// Pattern is repeated to fill the payload; empty means zeros.
	Pattern []byte
	// Fields vary bytes of the payload per packet.
	Fields []PayloadField
}

// PayloadField is an unsigned big-endian integer of Width bytes (1, 2 or 4)
// at Offset bytes from the start of the payload.
type PayloadField struct {
	Offset int
	Width  int
	Value  Value
}
