package nexthop

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePort(t *testing.T) {
	for _, c := range []struct {
		addr, gw string
		want     string // Port.String, or the error's field and a phrase of it
	}{
		{"198.18.0.1/24", "198.18.0.254", "198.18.0.1/24 via 198.18.0.254"},
		{"2001:2:0:a::1/64", "2001:2:0:a::fe", "2001:2:0:a::1/64 via 2001:2:0:a::fe"},
		{" 198.18.0.1/24 ", "", "198.18.0.1/24"},
		{"198.18.0.1", "198.18.0.254", "address: has no prefix length"},
		{"2001:2::1", "", "address: e.g. 2001:2::1/64"},
		{"eth0", "", "address: is not an address with a prefix length"},
		{"224.0.0.1/24", "", "address: is not an address a port can have"},
		{"198.18.0.1/24", "198.19.0.254", "gateway: is outside the port's subnet 198.18.0.0/24"},
		{"198.18.0.1/24", "2001:2::1", "gateway: is IPv6, and the port's address 198.18.0.1/24 is IPv4"},
		{"198.18.0.1/24", "198.18.0.1", "gateway: is the port's own address"},
		{"198.18.0.1/24", "router", "gateway: is not an IP address"},
		{"2001:2:0:a::1/64", "2001:2:0:b::fe", "gateway: is outside the port's subnet 2001:2:0:a::/64"},
	} {
		p, err := ParsePort(c.addr, c.gw)
		if err == nil {
			if p.String() != c.want {
				t.Errorf("ParsePort(%q, %q) = %s, want %s", c.addr, c.gw, p, c.want)
			}
			continue
		}
		var pe *PortError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePort(%q, %q): %v is not a *PortError", c.addr, c.gw, err)
			continue
		}
		field, phrase, _ := strings.Cut(c.want, ": ")
		if string(pe.Field) != field || !strings.Contains(err.Error(), phrase) || pe.Fix() == "" {
			t.Errorf("ParsePort(%q, %q): %s: %v; want %s", c.addr, c.gw, pe.Field, err, c.want)
		}
	}
}
