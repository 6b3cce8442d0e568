package nexthop

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"

	"github.com/wpg-dev/wpg/header"
)

var (
	vlan100 = []Tag{{TPID: header.EtherTypeVLAN, ID: 100}}
	qinq    = []Tag{{TPID: header.EtherTypeQinQ, ID: 10}, {TPID: header.EtherTypeVLAN, ID: 100}}
)

// checkTags decodes b and checks that it carries tags, outer first, and
// then the EtherType typ.
func checkTags(t *testing.T, b []byte, tags []Tag, typ layers.EthernetType) {
	t.Helper()
	p := decode(t, b)
	var got []Tag
	for _, l := range p.Layers() {
		if q, ok := l.(*layers.Dot1Q); ok {
			got = append(got, Tag{ID: q.VLANIdentifier})
		}
	}
	if len(got) != len(tags) {
		t.Fatalf("%d tags in % x, want %s", len(got), b, FormatTags(tags))
	}
	for i, tg := range tags {
		if binary.BigEndian.Uint16(b[12+4*i:]) != tg.TPID || got[i].ID != tg.ID {
			t.Fatalf("tag %d of % x, want %s", i, b, FormatTags(tags))
		}
	}
	if et := layers.EthernetType(binary.BigEndian.Uint16(b[12+4*len(tags):])); et != typ {
		t.Fatalf("EtherType %v after the tags, want %v", et, typ)
	}
}

// The agent's ARP request and reply, tagged 802.1Q and QinQ, carry the
// tag stack before the ARP packet (gopacket reads them), and parse reads
// them back past the tags.
func TestTaggedARPFrames(t *testing.T) {
	me, gw := netip.MustParseAddr("198.18.100.1"), netip.MustParseAddr("198.18.100.254")
	for _, tags := range [][]Tag{vlan100, qinq} {
		t.Run(FormatTags(tags), func(t *testing.T) {
			req, err := arpFrame(tags, 1, macA, me, nil, gw)
			if err != nil {
				t.Fatal(err)
			}
			checkTags(t, req, tags, layers.EthernetTypeARP)
			a := decode(t, req).Layer(layers.LayerTypeARP).(*layers.ARP)
			if a.Operation != 1 || netip.AddrFrom4([4]byte(a.DstProtAddress)) != gw {
				t.Fatalf("request: %+v", a)
			}
			m, ok := parse(req)
			if !ok || m.kind != kindRequest || m.Sender != me || m.Target != gw || m.MAC.String() != macA.String() || m.From.String() != macA.String() {
				t.Fatalf("parse(request) = %+v, %v", m, ok)
			}
			rep, err := arpFrame(tags, 2, macR, gw, macA, me)
			if err != nil {
				t.Fatal(err)
			}
			checkTags(t, rep, tags, layers.EthernetTypeARP)
			m, ok = parse(rep)
			if !ok || m.kind != kindReply || m.Sender != gw || m.MAC.String() != macR.String() {
				t.Fatalf("parse(reply) = %+v, %v", m, ok)
			}
		})
	}
}

// The agent's Neighbor Solicitation and Advertisement, tagged, with a
// valid ICMPv6 checksum, and parse reads them back past the tags.
func TestTaggedNDFrames(t *testing.T) {
	me, gw := netip.MustParseAddr("2001:2:0:a100::1"), netip.MustParseAddr("2001:2:0:a100::fe")
	for _, tags := range [][]Tag{vlan100, qinq} {
		t.Run(FormatTags(tags), func(t *testing.T) {
			ns, err := solicit(tags, macA, me, gw)
			if err != nil {
				t.Fatal(err)
			}
			checkTags(t, ns, tags, layers.EthernetTypeIPv6)
			if _, ok := decode(t, ns).Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation); !ok {
				t.Fatal("no solicitation after the tags")
			}
			if !checksumOK(t, slices.Delete(slices.Clone(ns), 12, 12+4*len(tags))) {
				t.Fatal("solicitation: bad ICMPv6 checksum")
			}
			q, ok := parse(ns)
			if !ok || q.kind != kindRequest || q.Target != gw || q.Sender != me || q.MAC.String() != macA.String() {
				t.Fatalf("parse(solicitation) = %+v, %v", q, ok)
			}
			na, err := advertise(tags, macR, gw, q)
			if err != nil {
				t.Fatal(err)
			}
			checkTags(t, na, tags, layers.EthernetTypeIPv6)
			m, ok := parse(na)
			if !ok || m.kind != kindReply || m.Target != gw || m.MAC.String() != macR.String() {
				t.Fatalf("parse(advertisement) = %+v, %v", m, ok)
			}
		})
	}
}

// runFilter runs a classic BPF program on frame b as Linux does, the
// VLAN tag in the frame's metadata being meta (nil: none): the
// instructions tagFilter uses.
func runFilter(t *testing.T, prog []bpf.Instruction, b []byte, meta *Tag) bool {
	t.Helper()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		switch in := prog[pc].(type) {
		case bpf.LoadAbsolute:
			if int(in.Off)+in.Size > len(b) {
				return false // Linux: out of the frame ends the program, dropping it
			}
			switch in.Size {
			case 1:
				a = uint32(b[in.Off])
			case 2:
				a = uint32(binary.BigEndian.Uint16(b[in.Off:]))
			default:
				t.Fatalf("load of %d bytes", in.Size)
			}
		case bpf.LoadExtension:
			switch in.Num {
			case bpf.ExtVLANTagPresent:
				a = 0
				if meta != nil {
					a = 1
				}
			case bpf.ExtVLANTag:
				a = 0
				if meta != nil {
					a = uint32(meta.ID) | 5<<13 // a priority, which the filter ignores
				}
			case bpf.ExtVLANProto:
				a = 0
				if meta != nil {
					a = uint32(meta.TPID)
				}
			default:
				t.Fatalf("extension %v", in.Num)
			}
		case bpf.ALUOpConstant:
			if in.Op != bpf.ALUOpAnd {
				t.Fatalf("ALU op %v", in.Op)
			}
			a &= in.Val
		case bpf.JumpIf:
			var c bool
			switch in.Cond {
			case bpf.JumpEqual:
				c = a == in.Val
			case bpf.JumpNotEqual:
				c = a != in.Val
			default:
				t.Fatalf("jump %v", in.Cond)
			}
			if c {
				pc += int(in.SkipTrue)
			} else {
				pc += int(in.SkipFalse)
			}
		case bpf.RetConstant:
			return in.Val > 0
		default:
			t.Fatalf("instruction %#v", in)
		}
	}
	t.Fatal("the program runs off its end")
	return false
}

// stripOuter is b as the kernel hands it to a socket after taking its
// outer tag into the metadata.
func stripOuter(b []byte) ([]byte, *Tag) {
	tg := Tag{TPID: binary.BigEndian.Uint16(b[12:]), ID: binary.BigEndian.Uint16(b[14:]) & 0xfff}
	return slices.Delete(slices.Clone(b), 12, 16), &tg
}

// The socket filter of a tagged port passes the neighbour messages of its
// own tag stack, whether the outer tag is in the frame or in the
// metadata, and drops those of another VLAN, untagged ones, and the
// port's other traffic; an untagged port's drops every tagged frame.
func TestTagFilter(t *testing.T) {
	me, gw := netip.MustParseAddr("198.18.100.1"), netip.MustParseAddr("198.18.100.254")
	me6, gw6 := netip.MustParseAddr("2001:2::1"), netip.MustParseAddr("2001:2::fe")
	other := []Tag{{TPID: header.EtherTypeVLAN, ID: 200}}
	otherQ := []Tag{{TPID: header.EtherTypeQinQ, ID: 10}, {TPID: header.EtherTypeVLAN, ID: 101}}
	for _, port := range [][]Tag{nil, vlan100, qinq} {
		for _, v4 := range []bool{true, false} {
			prog := tagFilter(port, v4)
			if _, err := bpf.Assemble(prog); err != nil {
				t.Fatalf("%s: %v", FormatTags(port), err)
			}
			for _, tags := range [][]Tag{nil, vlan100, qinq, other, otherQ, qinq[:1]} {
				var frames = map[string][]byte{}
				arpReq, _ := arpFrame(tags, 1, macR, gw, nil, me)
				ns, _ := solicit(tags, macR, gw6, me6)
				na, _ := advertise(tags, macR, gw6, message{Sender: me6, MAC: macA, From: macA})
				echo := slices.Clone(ns)
				header.ICMP(echo[14+4*len(tags)+header.IPv6Len:]).SetTypeCode(header.ICMPv6EchoRequest, 0)
				udp := slices.Clone(ns)
				header.IPv6(udp[14+4*len(tags):]).SetNextHeader(header.ProtoUDP)
				frames["ARP"], frames["solicitation"], frames["advertisement"], frames["echo request"], frames["UDP"] = arpReq, ns, na, echo, udp
				for name, f := range frames {
					mine := slices.Equal(tags, port) && (name == "ARP") == v4 && (name != "echo request" && name != "UDP")
					if got := runFilter(t, prog, f, nil); got != mine {
						t.Errorf("port %s (v4 %v): %s %s in the frame: passed %v, want %v", FormatTags(port), v4, FormatTags(tags), name, got, mine)
					}
					if len(tags) == 0 {
						continue
					}
					s, meta := stripOuter(f)
					if got := runFilter(t, prog, s, meta); got != mine {
						t.Errorf("port %s (v4 %v): %s %s, the outer tag in the metadata: passed %v, want %v", FormatTags(port), v4, FormatTags(tags), name, got, mine)
					}
				}
			}
		}
	}
}

func TestFormatTags(t *testing.T) {
	for _, c := range []struct {
		tags []Tag
		want string
	}{{nil, "untagged"}, {vlan100, "802.1Q 100"}, {qinq, "802.1ad 10 + 802.1Q 100"}, {[]Tag{{0x9100, 7}}, "0x9100 7"}} {
		if got := FormatTags(c.tags); got != c.want {
			t.Errorf("FormatTags(%v) = %q, want %q", c.tags, got, c.want)
		}
	}
}
