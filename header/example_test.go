package header_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/header"
)

// Patch the source port of a UDP datagram in place and fix its checksum
// incrementally (RFC 1624) instead of summing the whole datagram again.
func ExampleUpdate() {
	ip := make(header.IPv4, header.IPv4MinLen)
	ip.Init()
	ip.SetProtocol(header.ProtoUDP)
	ip.SetSrc([]byte{198, 18, 0, 1})
	ip.SetDst([]byte{198, 19, 0, 1})
	udp := make(header.UDP, header.UDPLen+4)
	udp.SetSrcPort(1024)
	udp.SetDstPort(9)
	udp.SetLength(uint16(len(udp)))
	copy(udp[8:], "wpg!")
	udp.SetChecksum(udp.CalculateChecksum(ip.PseudoSum(len(udp))))

	udp.SetChecksum(header.Update(udp.Checksum(), udp.SrcPort(), 1025))
	udp.SetSrcPort(1025)
	fmt.Printf("incremental %#04x, full %#04x\n", udp.Checksum(), udp.CalculateChecksum(ip.PseudoSum(len(udp))))
	// Output: incremental 0x9112, full 0x9112
}
