package nexthop_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/nexthop"
)

// A port's address with its link's prefix, and its gateway on that link;
// a gateway off the link is refused with what to give instead.
func ExampleParsePort() {
	p, err := nexthop.ParsePort("198.18.0.1/24", "198.18.0.254")
	fmt.Println(p, p.Proto(), err)
	p, err = nexthop.ParsePort("2001:2:0:a::1/64", "2001:2:0:a::fe")
	fmt.Println(p, p.Proto(), err)
	_, err = nexthop.ParsePort("198.18.0.1/24", "198.19.0.254")
	fmt.Println(err)
	// Output:
	// 198.18.0.1/24 via 198.18.0.254 ARP <nil>
	// 2001:2:0:a::1/64 via 2001:2:0:a::fe Neighbor Discovery <nil>
	// gateway 198.19.0.254 is outside the port's subnet 198.18.0.0/24 (address 198.18.0.1/24): a gateway must be on the port's link; give the device's address on that link, or the port's address with the link's prefix length
}
