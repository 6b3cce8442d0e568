package pcapread_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame/pcapread"
)

// Example reads a capture record by record, as a replay does.
func Example() {
	dir, _ := os.MkdirTemp("", "pcapread")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "three.pcap")
	f, _ := os.Create(path)
	w := pcapgo.NewWriterNanos(f)
	_ = w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 3 {
		frame := make([]byte, 60+i)
		_ = w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(frame), Length: len(frame)}, frame)
	}
	f.Close()

	r, err := pcapread.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var first int64
	for {
		data, ts, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		if r.Record() == 1 {
			first = ts
		}
		fmt.Printf("record %d: %d bytes at +%v\n", r.Record(), len(data), time.Duration(ts-first))
	}
	s, _ := pcapread.Scan(path)
	fmt.Println(s.Format, s.Records, "records,", s.Bytes, "bytes")
	// Output:
	// record 1: 60 bytes at +0s
	// record 2: 61 bytes at +1ms
	// record 3: 62 bytes at +2ms
	// pcap 3 records, 183 bytes
}
