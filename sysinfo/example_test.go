package sysinfo_test

import (
	"fmt"
	"os"

	"github.com/wpg-dev/wpg/sysinfo"
)

// Reading a fixture tree instead of the running machine.
func ExampleFS_Environment() {
	e, err := sysinfo.FS{Root: "testdata/numa2"}.Environment("ens3")
	if err != nil {
		fmt.Println(err)
		return
	}
	e.WriteTable(os.Stdout)
	// Output:
	// kernel         6.1.0-test
	// cpu            Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
	// cpus           4 online, 4 cores, allowed 1-2
	// numa nodes     2
	// governor       performance
	// tsc            constant_tsc=yes nonstop_tsc=yes
	// pipe-max-size  1048576 bytes (1 MiB)
	// memlock limit  8388608 bytes (8 MiB)
	// interface      ens3 (ixgbe), state up
	//   speed, mtu   10000 Mb/s, mtu 9000, txqueuelen 1000
	//   queues       tx 2, rx 2
	//   numa node    1
	//   xps          tx-0=00000003 tx-1=0000000c
	//   rps          rx-1=00000004
}
