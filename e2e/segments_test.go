package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// segmentFields are the header fields tshark reads of every frame to
// compare segmented and unsegmented runs: every header field wpg's
// templates write, and the payload without the signature (data.data, of
// which the last SignatureLen bytes are cut). The checksums that cover the
// signature (UDP, TCP, ICMP) differ with its sender count and are left
// out; the IPv4 header checksum is compared.
var segmentFields = []string{
	"frame.len", "eth.src", "eth.dst", "eth.type", "ieee8021ad.id", "vlan.id", "vlan.priority",
	"ip.src", "ip.dst", "ip.dsfield", "ip.ttl", "ip.id", "ip.len", "ip.proto", "ip.checksum",
	"ipv6.src", "ipv6.dst", "ipv6.flow", "ipv6.hlim", "ipv6.plen",
	"udp.srcport", "udp.dstport", "udp.length",
	"tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.flags", "tcp.window_size_value",
	"icmp.type", "icmp.code", "icmp.ident", "icmp.seq",
	"arp.opcode", "arp.src.hw_mac", "arp.src.proto_ipv4", "arp.dst.hw_mac", "arp.dst.proto_ipv4",
	"data.data",
}

// frameLines returns one line per frame of pcap: its segmentFields,
// the payload cut before the signature. Every UDP port is decoded as
// data, so that no dissector guesses a protocol from a port the
// template varies.
func frameLines(t *testing.T, ts, pcap string) []string {
	t.Helper()
	args := []string{"-d", "udp.port==1-65535,data", "-T", "fields", "-E", "separator=|", "-E", "occurrence=a"}
	for _, f := range segmentFields {
		args = append(args, "-e", f)
	}
	out := tshark(t, ts, pcap, args...)
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(l, "|")
		if data := f[len(f)-1]; len(data) >= 2*frame.SignatureLen {
			f[len(f)-1] = data[:len(data)-2*frame.SignatureLen]
		}
		lines = append(lines, strings.Join(f, "|"))
	}
	return lines
}

// TestSegmentsSendOneRun is issue #25's first line: the union of
// --segment 0/3, 1/3 and 2/3 of examples/udp64.wpg.yaml and
// examples/mixed.wpg.yaml with --count 30000, each into a pcap file, holds
// one unsegmented run's frames (every header field, read by tshark, the
// signature aside), and each segment sent 10,000 of them.
func TestSegmentsSendOneRun(t *testing.T) {
	ts := testbed.RequireTool(t, "tshark", "tshark")
	wpg := testbed.Wpg(t)
	for _, tpl := range []string{"examples/udp64.wpg.yaml", "examples/mixed.wpg.yaml"} {
		t.Run(filepath.Base(tpl), func(t *testing.T) {
			dir := t.TempDir()
			send := func(out string, extra ...string) uint64 {
				args := append([]string{"send", repoFile(t, tpl), "--backend", "pcapfile", "-o", filepath.Join(dir, out), "--count", "30000", "--json"}, extra...)
				cmd := exec.Command(wpg, args...)
				stdout, stderr, code := runCmd(t, cmd)
				if code != 0 {
					t.Fatalf("wpg %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
				}
				var rep struct {
					Frames  uint64 `json:"frames"`
					Segment string `json:"segment"`
					Stop    string `json:"stop"`
				}
				if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
					t.Fatal(err)
				}
				if len(extra) > 0 && (rep.Segment != extra[1] || rep.Stop != "count") {
					t.Errorf("%s: segment %q, stop %q", out, rep.Segment, rep.Stop)
				}
				return rep.Frames
			}
			if n := send("one.pcap"); n != 30000 {
				t.Fatalf("unsegmented: %d frames", n)
			}
			var union []string
			for i := range 3 {
				name := fmt.Sprintf("seg%d.pcap", i)
				if n := send(name, "--segment", fmt.Sprintf("%d/3", i)); n != 10000 {
					t.Errorf("segment %d/3 sent %d frames, want 10000", i, n)
				}
				lines := frameLines(t, ts, filepath.Join(dir, name))
				if len(lines) != 10000 {
					t.Errorf("segment %d/3: tshark reads %d frames", i, len(lines))
				}
				union = append(union, lines...)
			}
			if bad := tshark(t, ts, filepath.Join(dir, "seg1.pcap"), "-d", "udp.port==1-65535,data", "-Y", "_ws.malformed || _ws.expert.severity >= warning"); strings.TrimSpace(bad) != "" {
				t.Fatalf("tshark reports problems in segment 1/3:\n%s", firstLines(bad, 10))
			}
			one := frameLines(t, ts, filepath.Join(dir, "one.pcap"))
			slices.Sort(one)
			slices.Sort(union)
			if !slices.Equal(one, union) {
				for i := range min(len(one), len(union)) {
					if one[i] != union[i] {
						t.Fatalf("the segments' frames differ from one run's (sorted, line %d of %d/%d):\none run: %s\nsegments: %s", i, len(one), len(union), one[i], union[i])
					}
				}
				t.Fatalf("the segments sent %d frames, one run %d", len(union), len(one))
			}
			distinct := slices.Compact(slices.Clone(one))
			t.Logf("%s: the three segments' 30000 frames are one run's (%d distinct header lines)", tpl, len(distinct))
		})
	}
}

// TestSegmentBadInput: every bad --segment is one line naming the flag
// and the fix, exit 2; a segment with nothing to send says so and exits
// 0; a capture replayed with its own timing splits.
func TestSegmentBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--segment", "3/3"}, "--segment 3/3: has index 3, outside 0 … 2 of 3 segments; give --segment I/N"},
		{[]string{"--segment", "0/0"}, "--segment 0/0: has 0 segments; give --segment I/N"},
		{[]string{"--segment=-1/2"}, "--segment -1/2: has index -1"},
		{[]string{"--segment", "a/b"}, "--segment a/b: is not a segment I/N; give --segment I/N"},
		{[]string{"--segment", "auto"}, "--segment auto: JOB_COMPLETION_INDEX is not set"},
		{[]string{"--segment", "0/2", "--backend", "shm"}, "--segment 0/2: splits a packet template's streams over several senders, and shm moves payload frames"},
		{[]string{"--segment", "0/2", repoFile(t, "examples/stream-rates.wpg.yaml")}, "--count cannot be split exactly over the segments"},
	} {
		args := append([]string{"send", "--count", "10"}, c.args...)
		cmd := exec.Command(testbed.Wpg(t), args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "JOB_COMPLETION_INDEX=", "WPG_SEGMENTS=")
		stdout, stderr, code := runCmd(t, cmd)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("wpg %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(args, " "), code, stderr, c.want)
		}
	}
	out, stderr, code := run(t, dir, "send", "--count", "2", "--segment", "2/3", "--json")
	var rep struct {
		Frames uint64
		Notes  []string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Frames != 0 || !strings.Contains(strings.Join(rep.Notes, "\n"), "segment 2/3 has nothing to send") {
		t.Errorf("segment 2/3 of --count 2: exit %d, %s%s", code, out, stderr)
	}

	// A capture replayed with its own timing: two segments send its
	// records once, the first the even ones.
	one := filepath.Join(dir, "one.pcap")
	if _, stderr, code := run(t, dir, "send", "--backend", "pcapfile", "-o", one, "--count", "101", "--rate", "100kpps"); code != 0 {
		t.Fatal(stderr)
	}
	var total uint64
	for i := range 2 {
		out, stderr, code := run(t, dir, "send", "--pcap", one, "--backend", "pcapfile", "-o", filepath.Join(dir, fmt.Sprintf("r%d.pcap", i)), "--segment", fmt.Sprintf("%d/2", i), "--pcap-speed", "100", "--json")
		var rep struct{ Frames uint64 }
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("replay segment %d/2: exit %d: %s", i, code, stderr)
		}
		if want := []uint64{51, 50}[i]; rep.Frames != want {
			t.Errorf("replay segment %d/2: %d frames, want %d", i, rep.Frames, want)
		}
		total += rep.Frames
	}
	if total != 101 {
		t.Errorf("the replay's segments sent %d records of 101", total)
	}
}
