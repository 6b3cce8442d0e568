package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/testbed"
)

// layerCase is an example of issue #15's headers and what tshark must
// read in it: per stream (the streams have equal shares, so frame n is
// packet n / S of stream n % S), the exact value of every field for
// packet k. Checksum statuses are 1 (good), 0 (bad), 3 (not present),
// in order of occurrence (outer first) where a field occurs twice.
type layerCase struct {
	file    string
	count   int // frames sent (--count); fewer when the streams' counts end first
	fields  []string
	streams []func(k int) []string
	bad     bool // the example asks for bad checksums (tshark flags those, nothing else)
}

var layerCases = []layerCase{
	{file: "mpls", count: 400,
		fields: []string{"mpls.label", "mpls.exp", "mpls.bottom", "mpls.ttl", "ip.src", "ip.dst", "udp.srcport", "udp.dstport", "ip.checksum.status", "udp.checksum.status", "frame.len"},
		streams: []func(int) []string{func(k int) []string {
			return []string{fmt.Sprintf("%d,200", 100+k%4), "0,5", "0,1", "64,32", "198.18.10.1", "198.19.10.1", "5000", "5001", "1", "1", "128"}
		}}},
	{file: "gre", count: 400,
		fields: []string{"gre.key", "gre.sequence_number", "gre.checksum.status", "gre.proto", "eth.src", "vlan.id", "ip.src", "ipv6.src", "ip.checksum.status", "udp.srcport", "udp.checksum.status", "tcp.dstport", "tcp.checksum.status"},
		streams: []func(int) []string{
			func(k int) []string {
				return []string{"0x0000002a", strconv.Itoa(k), "1", "0x0800", "02:00:00:00:00:01", "", fmt.Sprintf("198.18.20.1,198.18.21.%d", 1+k%6), "", "1,1", strconv.Itoa(1024 + k%8), "1", "", ""}
			},
			func(k int) []string {
				return []string{"", "", "", "0x6558", "02:00:00:00:00:01,02:00:00:00:20:01", "20", "198.18.22.1", "2001:2::20:1", "1", "", "", "80", "1"}
			},
		}},
	{file: "vxlan", count: 400,
		fields: []string{"vxlan.vni", "udp.srcport", "udp.dstport", "udp.checksum.status", "eth.src", "vlan.id", "vlan.priority", "ip.src", "ip.ttl", "ip.checksum.status", "ipv6.src", "icmpv6.checksum.status", "icmpv6.echo.identifier", "icmpv6.echo.sequence_number"},
		streams: []func(int) []string{
			func(k int) []string {
				return []string{strconv.Itoa(5000 + k%2), fmt.Sprintf("%d,%d", 49152+k%10, 10000+k%10), "4789,7001", "3,1", "02:00:00:00:00:01,02:00:00:00:30:01", "30", "2", "198.18.30.1,198.18.31.1", "64,32", "1,1", "", "", "", ""}
			},
			func(k int) []string {
				return []string{"6000", "49152", "4789", "1", "02:00:00:00:00:01,02:00:00:00:00:01", "", "", "", "", "", "2001:2::30:1,2001:2::31:1", "1", "0x0007", strconv.Itoa(k % 65536)}
			},
		}},
	{file: "geneve", count: 400,
		fields: []string{"geneve.vni", "geneve.proto_type", "udp.dstport", "udp.checksum.status", "eth.dst", "ip.dst", "ip.checksum.status", "tcp.srcport", "tcp.dstport", "tcp.flags", "tcp.checksum.status"},
		streams: []func(int) []string{func(k int) []string {
			return []string{fmt.Sprintf("0x%06x", 100+k%4), "0x6558", "6081", "3", "02:00:00:00:00:02,02:00:00:00:40:02", "198.19.40.1,198.19.41.1", "1,1", strconv.Itoa(30000 + k%4), "443", "0x0002", "1"}
		}}},
	{file: "raw", count: 400,
		fields: []string{"vlan.id", "vlan.priority", "vlan.etype", "ip.src", "udp.length", "ip.checksum.status", "udp.checksum.status"},
		streams: []func(int) []string{func(k int) []string {
			return []string{"100", "3", "0x0800", "198.18.50.1", "58", "1", "1"}
		}}},
	{file: "tcp-options", count: 400,
		fields: []string{"tcp.srcport", "tcp.hdr_len", "tcp.options.mss_val", "tcp.options.sack_perm", "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr", "tcp.options.wscale.shift", "tcp.window_size_value", "tcp.checksum.status"},
		streams: []func(int) []string{func(k int) []string {
			return []string{strconv.Itoa(40000 + k%1000), "40", "1460", "0402", strconv.Itoa(1000 + k), "0", "7", "64240", "1"}
		}}},
	{file: "syn-sweep", count: 2000, // the stream's count, 762, ends it
		fields: []string{"ip.src", "ip.dst", "tcp.srcport", "tcp.dstport", "tcp.flags", "tcp.checksum.status"},
		streams: []func(int) []string{func(k int) []string {
			return []string{"198.18.0.1", fmt.Sprintf("198.19.1.%d", 1+k/3), "40000", []string{"22", "80", "443"}[k%3], "0x0002", "1"}
		}}},
	{file: "fragments", count: 600, // 100 datagrams of each stream, 3 fragments each, reassembled by tshark
		fields: []string{"ip.id", "ip.frag_offset", "ip.flags.mf", "ip.flags.df", "ipv6.fraghdr.ident", "ipv6.fraghdr.offset", "ipv6.fraghdr.more", "udp.srcport", "udp.length", "udp.checksum.status", "frame.len"},
		streams: []func(int) []string{
			func(k int) []string {
				d, j := k/3, k%3
				w := []string{fmt.Sprintf("0x%04x", d), []string{"0", "185", "370"}[j], []string{"1", "1", "0"}[j], "0", "", "", "", "", "", "", []string{"1514", "1514", "240"}[j]}
				if j == 2 {
					w[7], w[8], w[9] = strconv.Itoa(6000+d%10), "3166", "1"
				}
				return w
			},
			func(k int) []string {
				d, j := k/3, k%3
				w := []string{"", "", "", "", fmt.Sprintf("0x%08x", 0x10000+d), []string{"0", "154", "308"}[j], []string{"1", "1", "0"}[j], "", "", "", []string{"1294", "1294", "544"}[j]}
				if j == 2 {
					w[7], w[8], w[9] = "6000", "2946", "1"
				}
				return w
			},
		}},
	{file: "bad-checksums", count: 500, bad: true,
		fields: []string{"ip.src", "ip.checksum.status", "udp.checksum.status", "udp.checksum", "tcp.checksum.status", "icmp.checksum.status"},
		streams: []func(int) []string{
			func(k int) []string { return []string{"198.18.70.1", "0", "1", "", "", ""} },
			func(k int) []string { return []string{"198.18.70.2", "1", "0", "", "", ""} },
			func(k int) []string { return []string{"", "", "", "", "0", ""} },
			func(k int) []string { return []string{"198.18.70.3", "1", "", "", "", "0"} },
			func(k int) []string { return []string{"198.18.70.4", "1", "3", "0x0000", "", ""} },
		}},
}

// TestLayerExamplesTshark sends each example of the new headers (MPLS,
// GRE, VXLAN, Geneve, raw layers, TCP options, IPv4 and IPv6 fragments
// (tshark reassembles them and checks the datagram's UDP checksum), bad
// checksums, the SYN sweep tuple) into a pcap and has tshark, with checksum validation on,
// read every frame: the fields exact, the checksums good (bad exactly
// where the template asks), no malformed packet, no expert warning.
func TestLayerExamplesTshark(t *testing.T) {
	ts := testbed.RequireTool(t, "tshark", "tshark")
	wpg := testbed.Wpg(t)
	// The example's ports decoded as plain data, not guessed protocols.
	decode := []string{"-d", "tcp.port==22,data", "-d", "tcp.port==80,data", "-d", "tcp.port==443,data", "-d", "udp.port==5000,data"}
	for _, c := range layerCases {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			pcap := filepath.Join(dir, c.file+".pcap")
			cmd := exec.Command(wpg, "send", repoFile(t, "examples/"+c.file+".wpg.yaml"), "--backend", "pcapfile", "-o", pcap, "--count", strconv.Itoa(c.count))
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("wpg send: %v\n%s", err, out)
			}
			filter := "_ws.malformed || _ws.expert.severity >= warning"
			if c.bad {
				filter = "_ws.malformed"
			}
			if bad := tshark(t, ts, pcap, append(decode, "-Y", filter)...); strings.TrimSpace(bad) != "" {
				t.Fatalf("tshark reports problems:\n%s", firstLines(bad, 10))
			}
			args := append(decode, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,")
			for _, f := range c.fields {
				args = append(args, "-e", f)
			}
			lines := strings.Split(strings.TrimRight(tshark(t, ts, pcap, args...), "\n"), "\n")
			want := c.count
			if c.file == "syn-sweep" {
				want = 762
			}
			if len(lines) != want {
				t.Fatalf("tshark read %d frames, want %d", len(lines), want)
			}
			S := len(c.streams)
			for n, line := range lines {
				s, k := n%S, n/S
				got := strings.Split(line, "|")
				exp := c.streams[s](k)
				for i, f := range c.fields {
					if exp[i] == "" && c.bad {
						continue // not pinned for this stream
					}
					if got[i] != exp[i] {
						t.Fatalf("frame %d (stream %d, packet %d): %s = %q, want %q\n%s", n+1, s, k, f, got[i], exp[i], line)
					}
				}
			}
		})
	}
}

// TestLayerExamplesPreview: wpg preview decodes every new layer (gopacket
// knows MPLS, GRE, VXLAN, Geneve, IPv6 fragments) with its fields, marks
// checksums ok (BAD only where the template asks, none for a UDP
// checksum of 0), and reports no decoding error.
func TestLayerExamplesPreview(t *testing.T) {
	wpg := testbed.Wpg(t)
	for file, want := range map[string][]string{
		"mpls":          {"MPLS         label 100 tc 0 bottom false ttl 64", "MPLS         label 200 tc 5 bottom true ttl 32", "UDP          5000 → 5001"},
		"gre":           {"GRE          protocol IPv4 (0x0800) checksum", "ok key 42 seq 0", "GRE          protocol TransparentEthernetBridging (0x6558)", "802.1Q       vlan 20"},
		"vxlan":         {"UDP          49152 → 4789 len 114 checksum 0x0000 none", "VXLAN        vni 5000", "802.1Q       vlan 30 pcp 2", "ICMPv6 echo  id 7 seq 0"},
		"geneve":        {"Geneve       vni 100 protocol TransparentEthernetBridging (0x6558) options 0 bytes", "TCP          30000 → 443"},
		"raw":           {"802.1Q       vlan 100 pcp 3", "UDP          5000 → 5001 len 58"},
		"tcp-options":   {"options [mss 1460, sack_permitted, tsval 1000 tsecr 0, wscale 7]"},
		"bad-checksums": {"198.18.70.1 → 198.19.70.1 proto UDP", "BAD", "checksum 0x0000 none"},
		"syn-sweep":     {"198.18.0.1 → 198.19.1.1 proto TCP", "40000 → 443 seq 0"},
		"fragments":     {"fragment offset 1480 more true", "IPv6 frag    next UDP offset 1232 more true id 0x10000"},
	} {
		t.Run(file, func(t *testing.T) {
			out, err := exec.Command(wpg, "preview", repoFile(t, "examples/"+file+".wpg.yaml"), "-n", "10").CombinedOutput()
			if err != nil {
				t.Fatalf("wpg preview: %v\n%s", err, out)
			}
			text := string(out)
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("preview lacks %q\n%s", w, firstLines(text, 40))
				}
			}
			if strings.Contains(text, "  Error ") || (file != "bad-checksums" && strings.Contains(text, "BAD")) {
				t.Errorf("preview reports a problem\n%s", firstLines(text, 60))
			}
		})
	}
}
