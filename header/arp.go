package header

import "encoding/binary"

// ARPLen is the length of an ARP packet for Ethernet and IPv4.
const ARPLen = 28

// EtherTypeARP is the EtherType of ARP.
const EtherTypeARP uint16 = 0x0806

// Offsets in an ARP packet for Ethernet and IPv4.
const (
	arpHType         = 0
	arpPType         = 2
	arpHLen          = 4
	arpPLen          = 5
	arpOp            = 6
	arpSHA           = 8
	arpSPA           = 14
	arpTHA           = 18
	arpTPA           = 24
	arpHTypeEthernet = 1
)

// ARP operations.
const (
	ARPRequest uint16 = 1
	ARPReply   uint16 = 2
)

// ARP is a view of an ARP packet for Ethernet and IPv4.
type ARP []byte

// Init writes hardware type Ethernet (1), protocol type IPv4 and the
// address lengths 6 and 4.
func (a ARP) Init() {
	binary.BigEndian.PutUint16(a[arpHType:], arpHTypeEthernet)
	binary.BigEndian.PutUint16(a[arpPType:], EtherTypeIPv4)
	a[arpHLen], a[arpPLen] = EthernetAddrLen, ipv4AddrLen
}

// Op returns the operation (ARPRequest, ARPReply).
func (a ARP) Op() uint16 { return binary.BigEndian.Uint16(a[arpOp:]) }

// SHA returns the sender hardware address.
func (a ARP) SHA() []byte { return a[arpSHA : arpSHA+EthernetAddrLen] }

// SPA returns the sender protocol address.
func (a ARP) SPA() []byte { return a[arpSPA : arpSPA+ipv4AddrLen] }

// THA returns the target hardware address.
func (a ARP) THA() []byte { return a[arpTHA : arpTHA+EthernetAddrLen] }

// TPA returns the target protocol address.
func (a ARP) TPA() []byte { return a[arpTPA : arpTPA+ipv4AddrLen] }

// SetOp sets the operation.
func (a ARP) SetOp(op uint16) { binary.BigEndian.PutUint16(a[arpOp:], op) }

// SetSHA sets the sender hardware address.
func (a ARP) SetSHA(mac []byte) { copy(a[arpSHA:arpSHA+EthernetAddrLen], mac) }

// SetSPA sets the sender protocol address.
func (a ARP) SetSPA(ip []byte) { copy(a[arpSPA:arpSPA+ipv4AddrLen], ip) }

// SetTHA sets the target hardware address.
func (a ARP) SetTHA(mac []byte) { copy(a[arpTHA:arpTHA+EthernetAddrLen], mac) }

// SetTPA sets the target protocol address.
func (a ARP) SetTPA(ip []byte) { copy(a[arpTPA:arpTPA+ipv4AddrLen], ip) }
