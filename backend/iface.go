package backend

import (
	"fmt"
	"net"
	"strings"

	"github.com/wpg-dev/wpg/sysinfo"
)

// UpInterface returns the network interface name for the backend path
// (named in the messages): an error that lists the interfaces when name
// is empty or unknown (wrapping sysinfo.ErrNoInterface for the latter),
// and one that gives the `ip link` command when it is down. It needs no
// privileges.
func UpInterface(path, name string) (*net.Interface, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: no interface: give one with -i IFACE (existing: %s)", path, strings.Join(InterfaceNames(), ", "))
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%s: interface %q: %w; existing interfaces: %s (-i IFACE)", path, name, sysinfo.ErrNoInterface, strings.Join(InterfaceNames(), ", "))
	}
	if ifc.Flags&net.FlagUp == 0 {
		return nil, fmt.Errorf("%s: interface %s is down: bring it up with `ip link set %s up`", path, name, name)
	}
	return ifc, nil
}

// InterfaceNames lists this network namespace's interfaces for messages
// (one entry saying why when they cannot be listed).
func InterfaceNames() []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return []string{"(cannot list: " + err.Error() + ")"}
	}
	names := make([]string, len(ifs))
	for i, f := range ifs {
		names[i] = f.Name
	}
	return names
}
