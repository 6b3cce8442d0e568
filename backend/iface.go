package backend

import (
	"net"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/sysinfo"
)

// InterfaceError says that a backend cannot use the network interface it
// was given: none was given, this network namespace has none of that name
// (it then wraps sysinfo.ErrNoInterface), or it is down. Its text begins
// with the backend's name and says how to fix it: the interfaces there
// are, or the `ip link` command that brings it up.
type InterfaceError struct {
	// Backend is the backend's name ("afpacket").
	Backend string
	// Interface is the name given; "" when none was.
	Interface string
	// Down is true for an interface that exists but is down.
	Down bool
	// Existing lists this namespace's interfaces (for a missing one).
	Existing []string
}

func (e *InterfaceError) Error() string {
	switch {
	case e.Interface == "":
		return e.Backend + ": no interface: give one with -i IFACE (existing: " + strings.Join(e.Existing, ", ") + ")"
	case e.Down:
		return e.Backend + ": interface " + e.Interface + " is down: bring it up with `ip link set " + e.Interface + " up`"
	}
	return e.Backend + ": interface " + strconv.Quote(e.Interface) + ": " + sysinfo.ErrNoInterface.Error() +
		"; existing interfaces: " + strings.Join(e.Existing, ", ") + " (-i IFACE)"
}

// Unwrap returns sysinfo.ErrNoInterface for an interface that does not
// exist, nil otherwise.
func (e *InterfaceError) Unwrap() error {
	if e.Interface == "" || e.Down {
		return nil
	}
	return sysinfo.ErrNoInterface
}

// BackendName returns Backend: the error's text begins with it (Named).
func (e *InterfaceError) BackendName() string { return e.Backend }

// UpInterface returns the network interface name for the backend path
// (named in the messages), as the kernel reports it to the calling
// thread's network namespace, or an *InterfaceError: it lists the
// interfaces when name is empty or unknown, and gives the `ip link`
// command when it is down. It needs no privileges.
func UpInterface(path, name string) (*net.Interface, error) {
	if name == "" {
		return nil, &InterfaceError{Backend: path, Existing: InterfaceNames()}
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return nil, &InterfaceError{Backend: path, Interface: name, Existing: InterfaceNames()}
	}
	if ifc.Flags&net.FlagUp == 0 {
		return nil, &InterfaceError{Backend: path, Interface: name, Down: true}
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
