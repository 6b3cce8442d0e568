package header

import "encoding/binary"

// ARPLen is the length of an ARP packet for Ethernet and IPv4.
const ARPLen = 28

// EtherTypeARP is the EtherType of ARP.
const EtherTypeARP uint16 = 0x0806

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
	binary.BigEndian.PutUint16(a[0:], 1)
	binary.BigEndian.PutUint16(a[2:], EtherTypeIPv4)
	a[4], a[5] = 6, 4
}

// Op returns the operation (ARPRequest, ARPReply).
func (a ARP) Op() uint16 { return binary.BigEndian.Uint16(a[6:]) }

// SHA returns the sender hardware address.
func (a ARP) SHA() []byte { return a[8:14] }

// SPA returns the sender protocol address.
func (a ARP) SPA() []byte { return a[14:18] }

// THA returns the target hardware address.
func (a ARP) THA() []byte { return a[18:24] }

// TPA returns the target protocol address.
func (a ARP) TPA() []byte { return a[24:28] }

// SetOp sets the operation.
func (a ARP) SetOp(op uint16) { binary.BigEndian.PutUint16(a[6:], op) }

// SetSHA sets the sender hardware address.
func (a ARP) SetSHA(mac []byte) { copy(a[8:14], mac) }

// SetSPA sets the sender protocol address.
func (a ARP) SetSPA(ip []byte) { copy(a[14:18], ip) }

// SetTHA sets the target hardware address.
func (a ARP) SetTHA(mac []byte) { copy(a[18:24], mac) }

// SetTPA sets the target protocol address.
func (a ARP) SetTPA(ip []byte) { copy(a[24:28], ip) }
