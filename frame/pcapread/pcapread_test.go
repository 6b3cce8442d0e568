package pcapread_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame/pcapread"
)

func write(t *testing.T, path string, link layers.LinkType, sizes ...int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, link); err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(100, int64(i)*1000), CaptureLength: n, Length: n}
		if err := w.WritePacket(ci, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestErrorsNameTheRecord: truncation, oversized and runt records, a
// non-Ethernet link type and an empty capture are errors that say which
// record and why.
func TestErrorsNameTheRecord(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.pcap")
	write(t, ok, layers.LinkTypeEthernet, 60, 60, 60)
	data, _ := os.ReadFile(ok)
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, data[:len(data)-10], 0o644)
	cutHdr := filepath.Join(dir, "cuthdr.pcap")
	os.WriteFile(cutHdr, data[:24+16+60+8], 0o644)
	big := filepath.Join(dir, "big.pcap")
	write(t, big, layers.LinkTypeEthernet, 60, 20000)
	runt := filepath.Join(dir, "runt.pcap")
	write(t, runt, layers.LinkTypeEthernet, 60, 60, 10)
	sll := filepath.Join(dir, "sll.pcap")
	write(t, sll, layers.LinkTypeLinuxSLL, 60)
	empty := filepath.Join(dir, "empty.pcap")
	write(t, empty, layers.LinkTypeEthernet)
	short := filepath.Join(dir, "short.pcap") // 20 of the header's 24 bytes
	os.WriteFile(short, data[:20], 0o644)
	for _, c := range []struct{ file, want string }{
		{short, "file header: truncated: the file ends inside its header, before any record"},
		{cut, "record 3 (at byte 176): truncated"},
		{cutHdr, "record 2 (at byte 100): truncated"},
		{big, "record 2 (at byte 100): 20000 bytes, above the largest frame"},
		{runt, "record 3 (at byte 176): 10 bytes, shorter than an Ethernet header"},
		{sll, "file header: link type"},
		{empty, "no records"},
	} {
		_, err := pcapread.Scan(c.file)
		var re *pcapread.RecordError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.file) {
			t.Errorf("%s: %v, want …%s…", filepath.Base(c.file), err, c.want)
		}
	}
	for _, f := range []string{cut, short} {
		if _, err := pcapread.Scan(f); !errors.Is(err, pcapread.ErrTruncated) {
			t.Errorf("truncated: %v", err)
		}
	}
}

// TestRewindAndNoAllocs: Rewind starts over, and Next does not allocate.
func TestRewindAndNoAllocs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.pcap")
	write(t, path, layers.LinkTypeEthernet, 60, 61, 62)
	r, err := pcapread.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := r.Next(); err == io.EOF {
			if err := r.Rewind(); err != nil {
				t.Fatal(err)
			}
		}
	})
	// Rewind (once every four calls) makes a new header reader; Next
	// itself makes none.
	if allocs > 4 {
		t.Errorf("%.1f allocations per Next", allocs)
	}
	r.Rewind()
	for want := 60; want <= 62; want++ {
		d, _, err := r.Next()
		if err != nil || len(d) != want {
			t.Fatalf("after rewind: %d bytes, %v", len(d), err)
		}
	}
}

// TestMixedLinkTypesRefused: a pcapng of several interfaces (tshark -i lo
// -i any) holds records of other link types than its first interface's.
// They were skipped without a word (a 23-record capture replayed 20), as
// libpcap skips them; replay needs every record, so such a record is an
// error naming it and saying how to keep the Ethernet interface's records.
func TestMixedLinkTypesRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	sll, err := w.AddInterface(pcapgo.NgInterface{Name: "any", LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []int{0, 0, sll, 0} {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(100, int64(i)*1000), CaptureLength: 60, Length: 60, InterfaceIndex: id}
		if err := w.WritePacket(ci, make([]byte, 60)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = pcapread.Scan(path)
	var re *pcapread.RecordError
	if !errors.As(err, &re) || re.Record != 3 || !strings.Contains(err.Error(), "interface 1 (any)") || !strings.Contains(err.Error(), "Linux SLL") || !strings.Contains(err.Error(), "frame.interface_id == 0") {
		t.Errorf("Scan: %v, want record 3 refused, naming interface 1 and its link type", err)
	}
}
