package units_test

import (
	"fmt"

	"github.com/wpg-dev/wpg/units"
)

// KB is 1000 bytes and KiB 1024, everywhere in wpg; a bare K is 1024, as
// in dd(1).
func ExampleParseSize() {
	for _, s := range []string{"1KB", "1KiB", "1K", "1MB", "1MiB", "1.5GiB", "460800"} {
		n, _ := units.ParseSize(s)
		fmt.Println(s, "=", n)
	}
	_, err := units.ParseSize("99999999999999999999")
	fmt.Println(err)
	// Output:
	// 1KB = 1000
	// 1KiB = 1024
	// 1K = 1024
	// 1MB = 1000000
	// 1MiB = 1048576
	// 1.5GiB = 1610612736
	// 460800 = 460800
	// size "99999999999999999999" is too large: the largest is 9223372036854775807 bytes
}

func ExampleFormatSize() {
	for _, n := range []int64{4096, 16 << 20, 1000000, 1000032} {
		fmt.Println(units.FormatSize(n), "|", units.FormatSizeShort(n))
	}
	// Output:
	// 4 KiB | 4KiB
	// 16 MiB | 16MiB
	// 1 MB | 1MB
	// 1000032 B | 1000032B
}

func ExampleParseCount() {
	n, _ := units.ParseCount("2.5M", 1<<64-1)
	fmt.Println(n)
	// Output: 2500000
}

func ExampleFormatSizeApprox() {
	for _, n := range []int64{512, 1536, 300 << 20, 3 << 29} {
		fmt.Println(units.FormatSizeApprox(n))
	}
	// Output:
	// 512 B
	// 1.5 KiB
	// 300.0 MiB
	// 1.5 GiB
}
