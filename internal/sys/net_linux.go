//go:build linux

package sys

import (
	"bytes"
	"fmt"
	"os"

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
