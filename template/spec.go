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
	// Reverse are the streams a port pair sends the other way (B→A,
	// --bidir) when the template gives them (reverse:); Mirror makes them
	// from Streams otherwise.
	Reverse []Stream `json:",omitempty"`
	// Ports are the template's port addresses and gateways (ports:), nil
	// without.
	Ports *Ports `json:",omitempty"`
}

// MaxUntagged returns the largest frame of the streams without a VLAN tag,
// and that stream's name (0 and "" when every stream is tagged): a network
// path checks it against the interface MTU before the first frame.
func (s *Spec) MaxUntagged() (size int, stream string) {
	for i := range s.Streams {
		st := &s.Streams[i]
		n := int(st.Size.Max())
		if g := st.fragments(); g != nil {
			n = g.frameLen(0) // the largest fragment
		}
		if len(st.VLANs) == 0 && n > size {
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

	// Headers is the layer stack (its fields are promoted: st.IPv4, …).
	Headers

	Payload Payload
	// Tuple lists the fields that vary as a cross product (every
	// combination, the first field slowest) rather than in lockstep, by
	// their paths in the template ("ipv4.dst", "tcp.dst"); the parser has
	// already applied it to the fields (Value.Div), this is for display.
	Tuple []string `json:",omitempty"`

	// Timing is the stream's own schedule (rate, burst shape, start
	// delay), nil when it shares the run's --rate by Share (timing.go).
	Timing *Timing `json:",omitempty"`
	// Replay takes the stream's frames from a capture instead of the
	// layers, nil otherwise (replay.go).
	Replay *Replay `json:",omitempty"`
}

// Headers is one layer stack: Ethernet, VLAN tags, MPLS labels, a layer 3,
// a layer 4, and a tunnel whose inner stack follows, with raw bytes
// between any two of them. A stream's outer stack starts with Ethernet; a
// tunnel's inner stack starts with Ethernet for VXLAN and Geneve, and for
// GRE only when Tunnel.Ethernet is set (transparent Ethernet bridging).
type Headers struct {
	Ethernet Ethernet
	// VLANs are the 802.1Q tags, outer first: none, one, or two (QinQ).
	VLANs []VLAN
	// MPLS is the label stack, outer first; the last has bottom of stack set.
	MPLS []MPLS `json:",omitempty"`
	// At most one of IPv4, IPv6 and ARP is set.
	IPv4 *IPv4
	IPv6 *IPv6
	ARP  *ARP
	// At most one of UDP, TCP, ICMP (ICMPv4 with IPv4, ICMPv6 with IPv6).
	UDP  *UDP
	TCP  *TCP
	ICMP *ICMP
	// Tunnel is GRE (after the IP layer, instead of UDP/TCP/ICMP), VXLAN
	// or Geneve (after UDP), and the stack it carries.
	Tunnel *Tunnel `json:",omitempty"`
	// Raw are bytes written as they are, each after the layer it names.
	Raw []Raw `json:",omitempty"`
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
	// Checksum is the header checksum: right (the default) or bad.
	Checksum Checksum `json:",omitempty"`
	// Fragment, when set, sends each datagram as fragments (then the
	// identification ID counts per datagram unless given).
	Fragment *Fragment `json:",omitempty"`
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
	// Fragment, when set, sends each datagram as fragments, each with a
	// fragment extension header (RFC 8200 §4.5).
	Fragment *Fragment `json:",omitempty"`
}

// Fragment cuts each datagram of a stream (its frame of Size bytes, as
// it would be sent whole) into fragments whose IP packets are at most MTU
// bytes: the fragment data is a multiple of 8 bytes but for the last.
type Fragment struct {
	MTU int
	// ID is the identification of the IPv6 fragment header (32 bits);
	// IPv4 fragments carry IPv4.ID.
	ID Value `json:",omitempty"`
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
	// Checksum: right (the default), bad, or zero (none, RFC 768).
	Checksum Checksum `json:",omitempty"`
}

// TCP is the TCP header (no options).
type TCP struct {
	Src, Dst Value
	Seq, Ack Value
	Flags    uint8 // header.TCPSyn | header.TCPAck …
	Window   uint16
	// Options are written after the fixed header, padded to 4 bytes.
	Options  *TCPOptions `json:",omitempty"`
	Checksum Checksum    `json:",omitempty"`
}

// TCPOptions are the options of a SYN: each is left out when zero/false.
// They are written in the order Linux uses (MSS, SACK permitted,
// timestamps, window scale), NOP-padded to 4-byte boundaries.
type TCPOptions struct {
	MSS           uint16 // maximum segment size, 0 for none
	WScale        int    // window scale shift 0…14, -1 for none
	SACKPermitted bool
	Timestamps    bool  // the timestamps option with TSVal and TSEcr
	TSVal, TSEcr  Value // 32-bit
}

// Len is the length of the options in bytes (a multiple of 4).
func (o *TCPOptions) Len() int {
	if o == nil {
		return 0
	}
	n := 0
	if o.MSS != 0 {
		n += 4
	}
	if o.Timestamps {
		n += 12 // SACK permitted rides in the two bytes before it
	} else if o.SACKPermitted {
		n += 4
	}
	if o.WScale >= 0 {
		n += 4
	}
	return n
}

// ICMP is an ICMPv4 or ICMPv6 echo message (the IP layer decides which).
type ICMP struct {
	Reply    bool // echo reply instead of echo request
	ID       Value
	Seq      Value
	Checksum Checksum `json:",omitempty"`
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

// Checksum says how a checksum field is written.
type Checksum uint8

// Checksum modes.
const (
	ChecksumRight Checksum = iota // computed (the default)
	ChecksumBad                   // computed, then made wrong (the right value with its lowest bit flipped)
	ChecksumZero                  // 0: no checksum (UDP only)
)

var checksumNames = [...]string{"right", "bad", "zero"}

func (c Checksum) String() string {
	if int(c) < len(checksumNames) {
		return checksumNames[c]
	}
	return "unknown"
}

// MarshalText writes the mode's name in JSON.
func (c Checksum) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// MPLS is one MPLS label stack entry (RFC 3032).
type MPLS struct {
	Label Value // 20 bits
	TC    uint8 // traffic class, 3 bits
	TTL   Value // 8 bits
}

// Tunnel kinds.
const (
	TunnelGRE    = "gre"
	TunnelVXLAN  = "vxlan"
	TunnelGeneve = "geneve"
)

// Tunnel is an encapsulation header and the stack it carries.
type Tunnel struct {
	// Kind is TunnelGRE, TunnelVXLAN or TunnelGeneve.
	Kind string
	// VNI is the 24-bit VXLAN/Geneve network identifier.
	VNI Value `json:",omitempty"`
	// GRE: the optional key and sequence number (RFC 2890) and checksum
	// (RFC 2784; ChecksumBad writes it wrong).
	Key *Value `json:",omitempty"`
	Seq *Value `json:",omitempty"`
	// Checksum puts the GRE checksum field in; ChecksumMode says how it
	// is written.
	Checksum     bool     `json:",omitempty"`
	ChecksumMode Checksum `json:",omitempty"`
	// Ethernet says the inner stack starts with an Ethernet header (always
	// for VXLAN and Geneve; GRE protocol 0x6558 when set).
	Ethernet bool
	Inner    Headers
}

// Raw is bytes written as they are after the layer named by After
// ("ethernet", "vlan", "mpls", "ipv4", "ipv6", "arp", "udp", "tcp",
// "icmp", "gre", "vxlan", "geneve") of its stack.
type Raw struct {
	After string
	Bytes []byte
	// Type, when not 0, is written into the next-protocol field of the
	// layer before (EtherType, IP protocol, GRE protocol type) instead of
	// the value naming the layer after the raw bytes.
	Type uint16 `json:",omitempty"`
}
