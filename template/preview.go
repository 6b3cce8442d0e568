package template

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/printable"
)

// PreviewFrame is one rendered frame decoded layer by layer (for wpg
// preview and the web UI).
type PreviewFrame struct {
	Index  int            `json:"index"`
	Stream int            `json:"stream"` // -1 when the stream has no signature
	Name   string         `json:"stream_name,omitempty"`
	Seq    uint64         `json:"seq"`
	Len    int            `json:"len"`
	Layers []PreviewLayer `json:"layers"`
	Bytes  []byte         `json:"bytes"`
}

// PreviewLayer is one decoded layer: its name and a one-line summary.
type PreviewLayer struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// Preview renders the first n frames of spec exactly as worker 0 of 1
// sends them (streaming plan, transmit time 0) and decodes them.
func Preview(spec *Spec, n int) ([]PreviewFrame, error) {
	src, err := Compile(spec, CompileOptions{Plan: PlanStream})
	if err != nil {
		return nil, err
	}
	defer src.Close() // a replay's capture
	mem := make([]byte, n*src.MaxFrame())
	bufs := make([][]byte, n)
	lens := make([]int, n)
	for i := range bufs {
		bufs[i] = mem[i*src.MaxFrame() : (i+1)*src.MaxFrame()]
	}
	m := src.Render(bufs, lens, 0)
	out := make([]PreviewFrame, 0, m)
	for i := range m {
		f := bufs[i][:lens[i]]
		pf := PreviewFrame{Index: i, Stream: -1, Len: len(f), Bytes: f, Layers: Decode(f)}
		if sig, ok := frame.ParseSignature(f); ok && int(sig.Stream) < len(spec.Streams) && spec.Streams[sig.Stream].Signature {
			pf.Stream, pf.Seq, pf.Name = int(sig.Stream), sig.Seq, spec.Streams[sig.Stream].Name
		}
		out = append(out, pf)
	}
	return out, nil
}

func csumNote(ok bool) string {
	if ok {
		return "ok"
	}
	return "BAD"
}

// Decode describes frame f layer by layer (gopacket decodes up to the
// transport layer; what follows is shown as payload; checksums are verified).
func Decode(f []byte) []PreviewLayer {
	p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
	var out []PreviewLayer
	add := func(name, format string, a ...any) {
		out = append(out, PreviewLayer{name, fmt.Sprintf(format, a...)})
	}
	var l3 []byte
	var l3v6 bool
	var rest []byte
	for _, l := range p.Layers() {
		rest = l.LayerPayload()
		done := true
		switch x := l.(type) {
		case *layers.Ethernet:
			add("Ethernet", "%s → %s type %s (%#04x)", x.SrcMAC, x.DstMAC, x.EthernetType, uint16(x.EthernetType))
			done = false
		case *layers.Dot1Q:
			add("802.1Q", "vlan %d pcp %d dei %v type %s (%#04x)", x.VLANIdentifier, x.Priority, x.DropEligible, x.Type, uint16(x.Type))
			done = false
		case *layers.IPv4:
			l3, l3v6 = x.Contents, false
			frag := ""
			if x.Flags&layers.IPv4MoreFragments != 0 || x.FragOffset != 0 {
				frag = fmt.Sprintf(" fragment offset %d more %v", int(x.FragOffset)*8, x.Flags&layers.IPv4MoreFragments != 0)
			}
			add("IPv4", "%s → %s proto %s ttl %d dscp %d ecn %d id %d df %v len %d%s checksum %#04x %s",
				x.SrcIP, x.DstIP, x.Protocol, x.TTL, x.TOS>>2, x.TOS&3, x.Id, x.Flags&layers.IPv4DontFragment != 0, x.Length, frag, x.Checksum, csumNote(header.Checksum(x.Contents, 0) == 0))
			done = false
		case *layers.IPv6Fragment:
			add("IPv6 frag", "next %s offset %d more %v id %#x", x.NextHeader, int(x.FragmentOffset)*8, x.MoreFragments, x.Identification)
		case *layers.IPv6:
			l3, l3v6 = x.Contents, true
			add("IPv6", "%s → %s next %s hop_limit %d dscp %d flow_label %d payload_len %d",
				x.SrcIP, x.DstIP, x.NextHeader, x.HopLimit, x.TrafficClass>>2, x.FlowLabel, x.Length)
			done = false
		case *layers.UDP:
			note := "none"
			if x.Checksum != 0 || l3v6 {
				note = csumNote(l4ok(l3, l3v6, header.ProtoUDP, seg(x.Contents, x.Payload)))
			}
			add("UDP", "%d → %d len %d checksum %#04x %s", x.SrcPort, x.DstPort, x.Length, x.Checksum, note)
			// gopacket decodes VXLAN (4789) and Geneve (6081) after UDP.
			done = x.NextLayerType() != layers.LayerTypeVXLAN && x.NextLayerType() != layers.LayerTypeGeneve
		case *layers.MPLS:
			add("MPLS", "label %d tc %d bottom %v ttl %d", x.Label, x.TrafficClass, x.StackBottom, x.TTL)
			done = false
		case *layers.GRE:
			var parts []string
			if x.ChecksumPresent {
				parts = append(parts, fmt.Sprintf("checksum %#04x %s", x.Checksum, csumNote(header.Checksum(seg(x.Contents, x.Payload), 0) == 0)))
			}
			if x.KeyPresent {
				parts = append(parts, fmt.Sprintf("key %d", x.Key))
			}
			if x.SeqPresent {
				parts = append(parts, fmt.Sprintf("seq %d", x.Seq))
			}
			add("GRE", "protocol %s (%#04x)%s", x.Protocol, uint16(x.Protocol), prefixed(parts))
			done = false
		case *layers.VXLAN:
			add("VXLAN", "vni %d", x.VNI)
			done = false
		case *layers.Geneve:
			add("Geneve", "vni %d protocol %s (%#04x) options %d bytes", x.VNI, x.Protocol, uint16(x.Protocol), int(x.OptionsLength)*4)
			done = false
		case *layers.TCP:
			var flags []string
			for _, fl := range []struct {
				on   bool
				name string
			}{{x.FIN, "fin"}, {x.SYN, "syn"}, {x.RST, "rst"}, {x.PSH, "psh"}, {x.ACK, "ack"}, {x.URG, "urg"}, {x.ECE, "ece"}, {x.CWR, "cwr"}} {
				if fl.on {
					flags = append(flags, fl.name)
				}
			}
			var opts []string
			for _, o := range x.Options {
				switch o.OptionType {
				case layers.TCPOptionKindMSS:
					opts = append(opts, fmt.Sprintf("mss %d", binary.BigEndian.Uint16(o.OptionData)))
				case layers.TCPOptionKindWindowScale:
					opts = append(opts, fmt.Sprintf("wscale %d", o.OptionData[0]))
				case layers.TCPOptionKindSACKPermitted:
					opts = append(opts, "sack_permitted")
				case layers.TCPOptionKindTimestamps:
					opts = append(opts, fmt.Sprintf("tsval %d tsecr %d", binary.BigEndian.Uint32(o.OptionData), binary.BigEndian.Uint32(o.OptionData[4:])))
				}
			}
			optText := ""
			if len(opts) > 0 {
				optText = " options [" + strings.Join(opts, ", ") + "]"
			}
			add("TCP", "%d → %d seq %d ack %d flags [%s] window %d%s checksum %#04x %s", x.SrcPort, x.DstPort, x.Seq, x.Ack, strings.Join(flags, ","), x.Window, optText, x.Checksum,
				csumNote(l4ok(l3, l3v6, header.ProtoTCP, seg(x.Contents, x.Payload))))
		case *layers.ICMPv4:
			add("ICMPv4", "%s id %d seq %d checksum %#04x %s", x.TypeCode, x.Id, x.Seq, x.Checksum, csumNote(header.Checksum(seg(x.Contents, x.Payload), 0) == 0))
		case *layers.ICMPv6:
			add("ICMPv6", "%s checksum %#04x %s", x.TypeCode, x.Checksum, csumNote(l4ok(l3, true, header.ProtoICMPv6, seg(x.Contents, x.Payload))))
			done = false
		case *layers.ICMPv6Echo:
			add("ICMPv6 echo", "id %d seq %d", x.Identifier, x.SeqNumber)
		case *layers.ARP:
			op := "request"
			if x.Operation == layers.ARPReply {
				op = "reply"
			}
			add("ARP", "%s who-has %s tell %s (sha %s tha %s)", op, net.IP(x.DstProtAddress), net.IP(x.SourceProtAddress), net.HardwareAddr(x.SourceHwAddress), net.HardwareAddr(x.DstHwAddress))
			rest = f[headerBytes(p):]
		case *gopacket.DecodeFailure:
			// A type gopacket does not know (raw EtherType or protocol) is
			// payload; anything else is a malformed frame.
			rest = x.LayerContents()
			if !strings.HasPrefix(x.Error().Error(), "Unable to decode") {
				add("Error", "%v", x.Error())
				rest = nil
			}
		default: // raw payload or an application layer gopacket guessed from a port
			rest = seg(l.LayerContents(), l.LayerPayload())
		}
		if done {
			break
		}
	}
	if len(rest) > 0 {
		add("Payload", "%d bytes%s", len(rest), sigNote(f))
	}
	return out
}

// prefixed joins parts after a space, "" for none.
func prefixed(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

// seg returns contents followed by payload (they are adjacent in the frame).
func seg(contents, payload []byte) []byte { return contents[:len(contents)+len(payload)] }

// headerBytes is the length of the decoded headers up to and including ARP
// (gopacket leaves the padding that follows ARP out of every layer).
func headerBytes(p gopacket.Packet) int {
	n := 0
	for _, l := range p.Layers() {
		n += len(l.LayerContents())
		if l.LayerType() == layers.LayerTypeARP {
			break
		}
	}
	return n
}

func sigNote(f []byte) string {
	if s, ok := frame.ParseSignature(f); ok {
		return fmt.Sprintf(", wpg signature: stream %d seq %d tx %d", s.Stream, s.Seq, s.TxNs)
	}
	return ""
}

func l4ok(l3 []byte, v6 bool, proto uint8, seg []byte) bool {
	if len(l3) == 0 {
		return false
	}
	var pseudo uint64
	if v6 {
		pseudo = header.IPv6(l3).PseudoSum(proto, len(seg))
	} else {
		pseudo = header.PseudoSumIPv4(l3[12:16], l3[16:20], proto, len(seg))
	}
	return header.Checksum(seg, pseudo) == 0
}

// WriteText prints the frame: a title line, one line per layer and a hex dump.
func (pf *PreviewFrame) WriteText(w io.Writer) error {
	title := fmt.Sprintf("frame %d: %d bytes", pf.Index, pf.Len)
	if pf.Stream >= 0 {
		title = fmt.Sprintf("frame %d: stream %d (%s) seq %d, %d bytes", pf.Index, pf.Stream, printable.Escape(pf.Name), pf.Seq, pf.Len)
	}
	var b strings.Builder
	b.WriteString(title + "\n")
	for _, l := range pf.Layers {
		fmt.Fprintf(&b, "  %-12s %s\n", l.Name, l.Summary)
	}
	for _, line := range strings.Split(strings.TrimRight(hex.Dump(pf.Bytes), "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
