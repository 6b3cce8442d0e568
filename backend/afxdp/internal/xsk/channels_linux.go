//go:build linux

package xsk

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtoolChannels is struct ethtool_channels.
type ethtoolChannels struct {
	cmd                                         uint32
	maxRx, maxTx, maxOther, maxCombined         uint32
	rxCount, txCount, otherCount, combinedCount uint32
}

// ifreqData is struct ifreq with a pointer in its union (SIOCETHTOOL).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// Channels returns the queues of interface ifname as ethtool -l counts them
// (ETHTOOL_GCHANNELS): combined channels plus the TX-only, and plus the
// RX-only ones. It asks the kernel in the calling thread's network
// namespace, where /sys may show another one's devices. Drivers without
// channels (lo) give EOPNOTSUPP.
func Channels(ifname string) (tx, rx int, err error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	ch := ethtoolChannels{cmd: unix.ETHTOOL_GCHANNELS}
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], ifname)
	ifr.data = unsafe.Pointer(&ch)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return 0, 0, os.NewSyscallError("ioctl(SIOCETHTOOL, ETHTOOL_GCHANNELS)", e)
	}
	return int(ch.combinedCount + ch.txCount), int(ch.combinedCount + ch.rxCount), nil
}
