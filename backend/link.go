package backend

import (
	"net"
	"strings"

	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/sysinfo"
)

// Link is a network interface a backend sends or receives on, as the
// kernel reports it to the calling thread's network namespace, with what
// /sys adds where /sys shows that namespace's interface.
type Link struct {
	// Name, Index, MTU and Flags are the kernel's (net.Interface).
	Name  string
	Index int
	MTU   int
	Flags net.Flags
	// Virtual is true for an interface with no device behind it: lo,
	// veth, bridge, tun, …
	Virtual bool
	// Bus and Device name the device behind the interface ("pci",
	// "0000:00:03.0"); empty for a virtual one, or where the kernel
	// (before 5.16) does not say.
	Bus, Device string
	// NUMANode is the device's NUMA node; -1 when unknown (virtual
	// devices, one-node machines).
	NUMANode int
	// Driver is the driver's name as ethtool gives it ("veth",
	// "virtio_net"); "" where it gives none (lo).
	Driver string
	// SysShown is true when /sys/class/net shows this very interface.
	// /sys shows the interfaces of the namespace it was mounted in: a
	// thread that entered another one with setns sees the interfaces of
	// the first there, perhaps one of the same name. It is taken for
	// this interface only when its ifindex and address match.
	SysShown bool
	// TXQueues and RXQueues are the queue counts of /sys; 0 when it does
	// not show the interface.
	TXQueues, RXQueues int
	// RPS is true when receive packet steering hands some RX queue's
	// frames to other CPUs; read from /sys, so true (the cautious
	// answer) when it does not show the interface.
	RPS bool
}

// Loopback reports whether the interface is a loopback (lo).
func (l Link) Loopback() bool { return l.Flags&net.FlagLoopback != 0 }

// LookupLink looks up the network interface name for the backend path
// (named in the messages): an *InterfaceError when it is missing or down
// (see UpInterface). Index, MTU, flags, the device behind it (and so
// Virtual) and the driver come from the kernel of the calling thread's
// network namespace (netlink, ethtool); the NUMA node from the device's
// /sys/bus entry, which every namespace shares; queues and RPS from
// /sys/class/net only where it shows this interface (Link.SysShown). It
// needs no privileges.
func LookupLink(path, name string) (Link, error) {
	return lookupLink(sysinfo.HostFS(), path, name)
}

func lookupLink(fs sysinfo.FS, path, name string) (Link, error) {
	ifc, err := UpInterface(path, name)
	if err != nil {
		return Link{}, err
	}
	l := Link{Name: ifc.Name, Index: ifc.Index, MTU: ifc.MTU, Flags: ifc.Flags, NUMANode: -1, RPS: true}
	l.Driver, _ = sys.EthtoolDriver(name)
	if d, err := fs.Interface(name); err == nil && sysShows(d, ifc) {
		l.SysShown = true
		l.Virtual, l.NUMANode, l.TXQueues, l.RXQueues, l.RPS = d.Virtual, d.NUMANode, d.TXQueues, d.RXQueues, len(d.RPS) > 0
		if l.Driver == "" {
			l.Driver = d.Driver
		}
	}
	bus, dev, found, perr := sys.LinkParent(ifc.Index)
	switch {
	case perr == nil && found:
		l.Virtual, l.Bus, l.Device = false, bus, dev
		if l.NUMANode < 0 {
			l.NUMANode = fs.DeviceNUMANode(bus, dev)
		}
	case perr == nil && !l.SysShown:
		// No device behind it: exact from Linux 5.16, which names the
		// parent device of every interface that has one.
		l.Virtual = true
	}
	if l.Loopback() {
		l.Virtual = true
	}
	return l, nil
}

// sysShows reports whether d, what /sys/class/net shows of ifc's name,
// is the interface ifc of this thread's namespace: the same ifindex and,
// where it has one, the same hardware address.
func sysShows(d sysinfo.Iface, ifc *net.Interface) bool {
	if d.Index != ifc.Index {
		return false
	}
	return len(ifc.HardwareAddr) == 0 || strings.EqualFold(d.Address, ifc.HardwareAddr.String())
}
