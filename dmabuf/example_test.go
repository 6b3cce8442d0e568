package dmabuf_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/dmabuf"
)

// A sync command for u-dma-buf's sync_for_device carries its own range;
// the cache mode follows from O_SYNC and sync_mode.
func ExampleSyncCommand() {
	v, _ := dmabuf.SyncCommand{Offset: 0x10000, Size: 4096, Dir: dmabuf.ToDevice}.Encode()
	fmt.Printf("echo %#x > /sys/class/u-dma-buf/udmabuf0/sync_for_device\n", v)
	for _, m := range []int{0, 1, 2, 3} {
		fmt.Printf("O_SYNC, sync_mode %d: %s\n", m, dmabuf.CacheMode(m, true))
	}
	fmt.Println("no O_SYNC, sync_mode 1:", dmabuf.CacheMode(1, false))
	// Output:
	// echo 0x1000000001005 > /sys/class/u-dma-buf/udmabuf0/sync_for_device
	// O_SYNC, sync_mode 0: cached
	// O_SYNC, sync_mode 1: non-cached
	// O_SYNC, sync_mode 2: write-combine
	// O_SYNC, sync_mode 3: dma-coherent
	// no O_SYNC, sync_mode 1: cached
}

// ParseDevice reads a device's sysfs attributes in the driver's formats.
func ExampleParseDevice() {
	d, err := dmabuf.ParseDevice("udmabuf0", dmabuf.ClassUDmaBuf, map[string]string{
		"size": "1048576", "phys_addr": "0x000000001e900000", "sync_mode": "1", "dma_coherent": "0",
	})
	fmt.Println(d.Size, fmt.Sprintf("%#x", *d.PhysAddr), *d.SyncMode, d.Coherent(), err)
	// Output: 1048576 0x1e900000 1 false <nil>
}
