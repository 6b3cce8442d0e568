package nexthop

import (
	"fmt"
	"net/netip"
	"strings"
)

// Port is a port's place on its link: its own address with the link's
// prefix length, and the next hop its frames go to.
type Port struct {
	// Addr is the port's address and the link's prefix (198.18.0.1/24).
	Addr netip.Prefix
	// Gateway is the next hop on the link (the device's address); the
	// zero Addr when the port only answers for its address.
	Gateway netip.Addr
}

// Is4 reports whether the port is an IPv4 one.
func (p Port) Is4() bool { return p.Addr.Addr().Is4() }

// String writes the port as the flags take it: "198.18.0.1/24 via 198.18.0.254".
func (p Port) String() string {
	if !p.Gateway.IsValid() {
		return p.Addr.String()
	}
	return p.Addr.String() + " via " + p.Gateway.String()
}

// Proto names the resolution protocol of the port's family: "ARP" or
// "Neighbor Discovery".
func (p Port) Proto() string {
	if p.Is4() {
		return "ARP"
	}
	return "Neighbor Discovery"
}

// Field names the input a PortError is about.
type Field string

// The inputs of ParsePort.
const (
	FieldAddr    Field = "address"
	FieldGateway Field = "gateway"
)

// PortError is a port address or gateway that cannot be used: what is
// wrong (Why) and how to put it right (Remedy) apart, and which input.
type PortError struct {
	Field  Field
	Value  string
	Why    string
	Remedy string
}

func (e *PortError) Error() string {
	return fmt.Sprintf("%s %s %s; %s", e.Field, e.Value, e.Why, e.Remedy)
}

// Reason is what is wrong, Fix how to put it right.
func (e *PortError) Reason() string { return e.Why }

// Fix is how to put it right.
func (e *PortError) Fix() string { return e.Remedy }

// ParsePort reads a port's address with the link's prefix length
// ("198.18.0.1/24", "2001:2:0:a::1/64") and its gateway ("" for none). It
// refuses an address without a prefix length, a gateway of the other
// family, one outside the port's subnet, and one that is the port's own
// address, each a *PortError.
func ParsePort(addr, gateway string) (Port, error) {
	var p Port
	pfx, err := netip.ParsePrefix(strings.TrimSpace(addr))
	if err != nil {
		why := "is not an address with a prefix length"
		if a, aerr := netip.ParseAddr(strings.TrimSpace(addr)); aerr == nil {
			bits := "24"
			if a.Is6() {
				bits = "64"
			}
			return p, &PortError{Field: FieldAddr, Value: addr, Why: "has no prefix length: the port's subnet says which gateways are on its link",
				Remedy: fmt.Sprintf("give the address with the link's prefix, e.g. %s/%s", a, bits)}
		}
		return p, &PortError{Field: FieldAddr, Value: addr, Why: why, Remedy: "give the port's address and the link's prefix, e.g. 198.18.0.1/24 or 2001:2:0:a::1/64"}
	}
	if pfx.Addr().Zone() != "" || pfx.Addr().Is4In6() {
		return p, &PortError{Field: FieldAddr, Value: addr, Why: "is not a plain IPv4 or IPv6 address", Remedy: "give it without a zone, e.g. 198.18.0.1/24 or 2001:2:0:a::1/64"}
	}
	if a := pfx.Addr(); a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() {
		return p, &PortError{Field: FieldAddr, Value: addr, Why: "is not an address a port can have (unspecified, multicast or loopback)", Remedy: "give the port's own unicast address, e.g. 198.18.0.1/24"}
	}
	p.Addr = pfx
	if strings.TrimSpace(gateway) == "" {
		return p, nil
	}
	gw, err := netip.ParseAddr(strings.TrimSpace(gateway))
	if err != nil {
		return p, &PortError{Field: FieldGateway, Value: gateway, Why: "is not an IP address", Remedy: "give the device's address on the port's link, e.g. 198.18.0.254"}
	}
	switch {
	case gw.Is4() != pfx.Addr().Is4():
		fam, other := "IPv4", "IPv6"
		if gw.Is6() {
			fam, other = other, fam
		}
		return p, &PortError{Field: FieldGateway, Value: gateway, Why: fmt.Sprintf("is %s, and the port's address %s is %s", fam, pfx, other),
			Remedy: "give a gateway of the port's family, or an address of the gateway's"}
	case gw == pfx.Addr():
		return p, &PortError{Field: FieldGateway, Value: gateway, Why: "is the port's own address", Remedy: "give the device's address on the link, not the port's"}
	case !pfx.Masked().Contains(gw):
		return p, &PortError{Field: FieldGateway, Value: gateway,
			Why:    fmt.Sprintf("is outside the port's subnet %s (address %s): a gateway must be on the port's link", pfx.Masked(), pfx),
			Remedy: "give the device's address on that link, or the port's address with the link's prefix length"}
	case gw.IsMulticast() || gw.IsUnspecified():
		return p, &PortError{Field: FieldGateway, Value: gateway, Why: "is not a unicast address", Remedy: "give the device's address on the port's link"}
	}
	p.Gateway = gw
	return p, nil
}
