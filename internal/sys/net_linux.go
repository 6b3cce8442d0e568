//go:build linux

package sys

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// EthtoolDriver returns the driver name of network interface ifname as
// ethtool reports it (SIOCETHTOOL ETHTOOL_GDRVINFO): "veth", "virtio_net",
// "ixgbe", … It needs no privileges; lo has no driver (error).
func EthtoolDriver(ifname string) (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("ethtool %s: %w", ifname, os.NewSyscallError("socket", err))
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, ifname)
	if err != nil {
		return "", fmt.Errorf("ethtool %s: %w", ifname, os.NewSyscallError("ioctl(SIOCETHTOOL)", err))
	}
	name, _, _ := bytes.Cut(info.Driver[:], []byte{0})
	return string(name), nil
}

// ethtoolCmd is the kernel's struct ethtool_cmd (ETHTOOL_GSET).
type ethtoolCmd struct {
	Cmd, Supported, Advertising                                 uint32
	Speed                                                       uint16
	Duplex, Port, PhyAddress, Transceiver, Autoneg, MdioSupport uint8
	Maxtxpkt, Maxrxpkt                                          uint32
	SpeedHi                                                     uint16
	EthTpMdix, EthTpMdixCtrl                                    uint8
	LpAdvertising                                               uint32
	Reserved                                                    [2]uint32
}

// ifreqData is a struct ifreq whose union holds a pointer (SIOCETHTOOL's
// ifr_data), padded beyond the union's size on every architecture.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24]byte
}

// EthtoolSpeed returns the link speed of network interface ifname in
// Mb/s as ethtool reports it (SIOCETHTOOL ETHTOOL_GSET), in the calling
// thread's network namespace: unlike /sys/class/net, which shows the
// namespace that mounted it, right on a thread that entered another with
// setns. It is -1 where the kernel's /sys/class/net/IFACE/speed has none:
// a link that is down, or whose driver does not know its speed
// (SPEED_UNKNOWN); an error for a driver without link settings (lo, a
// dummy: EOPNOTSUPP) and an interface that is not there. It needs no
// privileges.
func EthtoolSpeed(ifname string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("ethtool %s: %w", ifname, os.NewSyscallError("socket", err))
	}
	defer unix.Close(fd)
	flags, err := unix.NewIfreq(ifname)
	if err != nil {
		return 0, fmt.Errorf("ethtool %s: %w", ifname, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, flags); err != nil {
		return 0, fmt.Errorf("ethtool %s: %w", ifname, os.NewSyscallError("ioctl(SIOCGIFFLAGS)", err))
	}
	if flags.Uint16()&unix.IFF_UP == 0 {
		return -1, nil // as sysfs: no speed unless the link is up
	}
	cmd := ethtoolCmd{Cmd: unix.ETHTOOL_GSET}
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&cmd)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&cmd)
	if e != 0 {
		return 0, fmt.Errorf("ethtool %s: %w", ifname, os.NewSyscallError("ioctl(SIOCETHTOOL ETHTOOL_GSET)", e))
	}
	speed := uint32(cmd.SpeedHi)<<16 | uint32(cmd.Speed)
	if speed == 0xffffffff || speed == 0xffff || speed == 0 {
		return -1, nil
	}
	return int(speed), nil
}

// LinkParent returns the bus and the name of the device behind network
// interface index as the kernel reports it to the calling thread's network
// namespace (RTM_GETLINK's IFLA_PARENT_DEV_BUS_NAME and
// IFLA_PARENT_DEV_NAME, Linux 5.16+): "pci" and "0000:00:03.0" for a NIC.
// found is false for an interface with no device (lo, veth, bridge, …),
// and on kernels before 5.16, which never say. Unlike /sys/class/net, it
// is right on a thread that entered another namespace with setns. It needs
// no privileges.
func LinkParent(index int) (bus, dev string, found bool, err error) {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return "", "", false, fmt.Errorf("links: %w", os.NewSyscallError("netlink RTM_GETLINK", err))
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return "", "", false, fmt.Errorf("links: parse RTM_GETLINK: %w", err)
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
			continue
		}
		if int(int32(binary.NativeEndian.Uint32(m.Data[4:8]))) != index {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return "", "", false, fmt.Errorf("links: parse interface %d: %w", index, err)
		}
		for _, a := range attrs {
			v := string(bytes.TrimRight(a.Value, "\x00"))
			switch a.Attr.Type {
			case unix.IFLA_PARENT_DEV_BUS_NAME:
				bus = v
			case unix.IFLA_PARENT_DEV_NAME:
				dev, found = v, v != ""
			}
		}
		return bus, dev, found, nil
	}
	return "", "", false, fmt.Errorf("links: no interface with index %d", index)
}

// Links lists the network interfaces of the calling thread's network
// namespace (unlike /sys/class/net, right on a thread that entered
// another namespace with setns), with their kinds and peers. It needs no
// privileges.
func Links() ([]Link, error) {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return nil, fmt.Errorf("links: %w", os.NewSyscallError("netlink RTM_GETLINK", err))
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return nil, fmt.Errorf("links: parse RTM_GETLINK: %w", err)
	}
	var out []Link
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
			continue
		}
		l := Link{Index: int(int32(binary.NativeEndian.Uint32(m.Data[4:8])))}
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil, fmt.Errorf("links: parse interface %d: %w", l.Index, err)
		}
		for _, a := range attrs {
			switch a.Attr.Type {
			case unix.IFLA_IFNAME:
				l.Name = string(bytes.TrimRight(a.Value, "\x00"))
			case unix.IFLA_LINK:
				if len(a.Value) >= 4 {
					l.PeerIndex = int(int32(binary.NativeEndian.Uint32(a.Value)))
				}
			case unix.IFLA_LINK_NETNSID:
				l.PeerElsewhere = true
			case unix.IFLA_LINKINFO:
				l.Kind = linkKind(a.Value)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// linkKind reads IFLA_INFO_KIND out of the nested attributes of
// IFLA_LINKINFO.
func linkKind(b []byte) string {
	for len(b) >= 4 {
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) &^ unix.NLA_F_NESTED
		if n < 4 || n > len(b) {
			return ""
		}
		if typ == unix.IFLA_INFO_KIND {
			return string(bytes.TrimRight(b[4:n], "\x00"))
		}
		b = b[min((n+3)&^3, len(b)):]
	}
	return ""
}
