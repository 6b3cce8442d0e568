package testbed

import (
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// PcapRecord is one record of a capture WritePcap writes: the bytes kept,
// the frame's length on the wire (0: len(Data)) and its time stamp from
// the epoch.
type PcapRecord struct {
	Data []byte
	Wire int
	At   time.Duration
}

// Records returns n records of data, gap apart from the epoch, each wire
// bytes long on the wire (0: len(data)).
func Records(n int, data []byte, wire int, gap time.Duration) []PcapRecord {
	recs := make([]PcapRecord, n)
	for i := range recs {
		recs[i] = PcapRecord{Data: data, Wire: wire, At: time.Duration(i) * gap}
	}
	return recs
}

// WritePcap writes recs to path as a classic Ethernet pcap with snap
// length snap, its time stamps in nanoseconds when nanos is set, else in
// microseconds; a failure ends the test.
func WritePcap(t testing.TB, path string, snap uint32, nanos bool, recs []PcapRecord) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if nanos {
		w = pcapgo.NewWriterNanos(f)
	}
	if err := w.WriteFileHeader(snap, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		wire := r.Wire
		if wire == 0 {
			wire = len(r.Data)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(r.At)), CaptureLength: len(r.Data), Length: wire}
		if err := w.WritePacket(ci, r.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
