package e2e

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// QA session 8, the network side: defects left by the last session, and
// what a network engineer (trafgen, TRex, tcpreplay, pktgen user) ran into
// trying wpg.

// TestQA8UnknownInterfaceOnce: a wrong -i with two workers printed the
// error once per worker ("worker 0: afpacket: …" twice), and afxdp's read
// "backend afxdp: afxdp: …". Every network backend now says it once, in
// the same words, sending or receiving, with the interfaces there are.
func TestQA8UnknownInterfaceOnce(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []string{"afpacket", "afxdp"} {
		for _, args := range [][]string{
			{"send", "--backend", b, "-i", "wpg-nonesuch0", "--workers", "2", "--count", "10"},
			{"recv", "--backend", b, "-i", "wpg-nonesuch0", "--expect", "1"},
		} {
			out, errs, code := run(t, dir, args...)
			want := "wpg: " + b + `: interface "wpg-nonesuch0": no such network interface; existing interfaces: `
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "lo") || out != "" {
				t.Errorf("wpg %s: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and one line beginning %q that lists lo", strings.Join(args, " "), code, out, errs, want)
			}
		}
	}
}

// TestQA8NDRRepeatedSize: ndr --sizes 64,64 searched 64 B twice (two
// searches, two rows); it is refused before anything runs, as bench's and
// membench's repeated sizes are, in ndr's own words.
func TestQA8NDRRepeatedSize(t *testing.T) {
	out, errs, code := run(t, t.TempDir(), "ndr", "--sizes", "64,1518,64B")
	if code != 2 || out != "" || !strings.Contains(errs, `flag --sizes: value "64,1518,64B": 64 and 64B are the same size (64 B): give each size once`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming both spellings", code, out, errs)
	}
}

// TestQA8ReplayCaptureEdges: what tcpdump and tshark users hand wpg send
// --pcap. A capture with a snap length replays as captured and the report
// says how many records were cut short (it said nothing, and every
// receiver dropped them); a pcapng of two interfaces, one of them Linux
// cooked (tshark -i eth1 -i any), is refused naming the record (its
// cooked records were skipped unsaid: 3 of 5 replayed).
func TestQA8ReplayCaptureEdges(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	// Classic pcap, snap length 60: three 1514-byte frames, 60 bytes kept.
	testbed.WritePcap(t, filepath.Join(dir, "snap.pcap"), 60, false, testbed.Records(3, make([]byte, 60), 1514, 100*time.Microsecond))
	out, errs, code := run(t, dir, "send", "--pcap", "snap.pcap", "--backend", "null", "--rate", "max")
	if code != 0 || !strings.Contains(out, "3 of the 3 records of snap.pcap were captured shorter than they were on the wire") {
		t.Errorf("snap-length capture: exit %d, %s\n%s", code, errs, out)
	}

	// pcapng: a section, an Ethernet and a Linux SLL interface, and
	// records of interfaces 0, 0, 1, 0, 1.
	block := func(typ uint32, body []byte) []byte {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		n := uint32(12 + len(body))
		b := le.AppendUint32(le.AppendUint32(nil, typ), n)
		return le.AppendUint32(append(b, body...), n)
	}
	shb := le.AppendUint64(le.AppendUint16(le.AppendUint16(le.AppendUint32(nil, 0x1a2b3c4d), 1), 0), ^uint64(0))
	ng := block(0x0a0d0d0a, shb)
	for _, link := range []uint16{1, 113} {
		ng = append(ng, block(1, le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, link), 0), 0))...)
	}
	for i, ifc := range []uint32{0, 0, 1, 0, 1} {
		epb := le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, ifc), 0), uint32(i)), 60), 60)
		ng = append(ng, block(6, append(epb, make([]byte, 60)...))...)
	}
	if err := os.WriteFile(filepath.Join(dir, "two.pcapng"), ng, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = run(t, dir, "send", "--pcap", "two.pcapng", "--backend", "null", "--rate", "max")
	if code != 2 || out != "" || !strings.Contains(errs, "record 3: captured on an interface of another link type than the first's (interface 1: link type Linux SLL (113))") ||
		!strings.Contains(errs, "frame.interface_id == 0") {
		t.Errorf("two-interface pcapng: exit %d, stdout %q, stderr %q; want exit 2 naming record 3", code, out, errs)
	}
}

// TestQA8FlagsOfOtherTools: a tcpreplay or trafgen user's flags and typos
// got "unknown flag" alone; they now get wpg's flag for it.
func TestQA8FlagsOfOtherTools(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "--pcap", "x.pcap", "--topspeed"}, "unknown flag: --topspeed: tcpreplay's --topspeed is --rate max here"},
		{[]string{"send", "--intreface", "lo"}, "unknown flag: --intreface: did you mean --interface?"},
		{[]string{"recv", "--intreface", "lo"}, "unknown flag: --intreface: did you mean --interface?"},
	} {
		out, errs, code := run(t, dir, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("wpg %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
}

// TestQA8SlowRateAchieved: a pktgen user's slow probe, 2 pps for 1 s, sent
// its 3 frames on time (at 0, 0.5 and 1 s) and read "achieved 149.9 %":
// the first frame goes at once, so a run of T seconds has T × rate + 1
// frames due. No sender can send a frame before it is due, so a run on
// time is now at most 100 %.
func TestQA8SlowRateAchieved(t *testing.T) {
	out, errs, code := run(t, t.TempDir(), "send", "--backend", "null", "--rate", "2pps", "--duration", "1s", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Frames   uint64  `json:"frames"`
		Achieved float64 `json:"achieved_ratio"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Frames == 0 || rep.Frames > 3 || rep.Achieved > 1+1e-9 || rep.Achieved <= 0 {
		t.Errorf("frames %d, achieved_ratio %v; want at most 3 frames and at most 1", rep.Frames, rep.Achieved)
	}
}
