package template

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxFrameSize is the largest frame size a template may ask for (jumbo).
const MaxFrameSize = 9216

// MinSignedFrame is the smallest frame that may carry the signature: the
// Ethernet minimum without FCS. Shorter frames are padded on the wire, and
// the receiver looks for the signature in the last 20 bytes.
const MinSignedFrame = 60

// node captures a YAML value as it was written (with its position), so
// that values are checked and reported by wpg, not by reflection.
type node struct{ n ast.Node }

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (x *node) UnmarshalYAML(n ast.Node) error {
	if _, null := n.(*ast.NullNode); null {
		return nil
	}
	x.n = n
	return nil
}

func (x node) set() bool { return x.n != nil }

type rawFile struct {
	Seed    node        `yaml:"seed"`
	Streams []rawStream `yaml:"streams"`
	// Reverse and Ports are for port pairs (mirror.go).
	Reverse []rawStream `yaml:"reverse"`
	Ports   *rawPorts   `yaml:"ports"`
}

type rawPorts struct {
	TX *rawPort `yaml:"tx"`
	RX *rawPort `yaml:"rx"`
}

type rawPort struct {
	SrcIP   node `yaml:"src_ip"`
	Gateway node `yaml:"gateway"`
}

type rawStream struct {
	Name      node `yaml:"name"`
	Count     node `yaml:"count"`
	Share     node `yaml:"share"`
	Size      node `yaml:"size"`
	Signature node `yaml:"signature"`
	// The stream's layer keys, as a tunnel's inner stack has them.
	Layers  rawHeaders  `yaml:",inline"`
	Payload *rawPayload `yaml:"payload"`
	Tuple   node        `yaml:"tuple"`
	// The stream's own schedule and a capture to replay (timing.go, replay.go).
	Rate   node      `yaml:"rate"`
	Delay  node      `yaml:"delay"`
	Burst  *rawBurst `yaml:"burst"`
	Pcap   node      `yaml:"pcap"`
	Timing node      `yaml:"timing"`
	Speed  node      `yaml:"speed"`
}

// rawHeaders are the layer keys of a tunnel's inner stack, and (inline)
// of a stream.
type rawHeaders struct {
	Ethernet *rawEthernet `yaml:"ethernet"`
	VLAN     *rawVLAN     `yaml:"vlan"`
	QinQ     *rawQinQ     `yaml:"qinq"`
	MPLS     []rawMPLS    `yaml:"mpls"`
	IPv4     *rawIPv4     `yaml:"ipv4"`
	IPv6     *rawIPv6     `yaml:"ipv6"`
	ARP      *rawARP      `yaml:"arp"`
	UDP      *rawUDP      `yaml:"udp"`
	TCP      *rawTCP      `yaml:"tcp"`
	ICMP     *rawICMP     `yaml:"icmp"`
	ICMPv6   *rawICMP     `yaml:"icmpv6"`
	GRE      *rawGRE      `yaml:"gre"`
	VXLAN    *rawVXLAN    `yaml:"vxlan"`
	Geneve   *rawVXLAN    `yaml:"geneve"`
	Raw      []rawRaw     `yaml:"raw"`
}

type rawMPLS struct {
	Label node `yaml:"label"`
	TC    node `yaml:"tc"`
	TTL   node `yaml:"ttl"`
}

type rawGRE struct {
	Key      node        `yaml:"key"`
	Seq      node        `yaml:"seq"`
	Checksum node        `yaml:"checksum"`
	Inner    *rawHeaders `yaml:"inner"`
}

type rawVXLAN struct {
	VNI   node        `yaml:"vni"`
	Inner *rawHeaders `yaml:"inner"`
}

type rawRaw struct {
	After node `yaml:"after"`
	Hex   node `yaml:"hex"`
	Type  node `yaml:"type"`
}

type rawEthernet struct {
	Src  node `yaml:"src"`
	Dst  node `yaml:"dst"`
	Type node `yaml:"type"`
}

type rawVLAN struct {
	ID   node `yaml:"id"`
	PCP  node `yaml:"pcp"`
	DEI  node `yaml:"dei"`
	TPID node `yaml:"tpid"`
}

type rawQinQ struct {
	Outer *rawVLAN `yaml:"outer"`
	Inner *rawVLAN `yaml:"inner"`
}

type rawIPv4 struct {
	Src      node         `yaml:"src"`
	Dst      node         `yaml:"dst"`
	TTL      node         `yaml:"ttl"`
	DSCP     node         `yaml:"dscp"`
	ECN      node         `yaml:"ecn"`
	ID       node         `yaml:"id"`
	DF       node         `yaml:"df"`
	Protocol node         `yaml:"protocol"`
	Checksum node         `yaml:"checksum"`
	Fragment *rawFragment `yaml:"fragment"`
}

type rawFragment struct {
	MTU node `yaml:"mtu"`
	ID  node `yaml:"id"`
}

type rawIPv6 struct {
	Src        node         `yaml:"src"`
	Dst        node         `yaml:"dst"`
	HopLimit   node         `yaml:"hop_limit"`
	DSCP       node         `yaml:"dscp"`
	ECN        node         `yaml:"ecn"`
	FlowLabel  node         `yaml:"flow_label"`
	NextHeader node         `yaml:"next_header"`
	Fragment   *rawFragment `yaml:"fragment"`
}

type rawARP struct {
	Op  node `yaml:"op"`
	SHA node `yaml:"sha"`
	SPA node `yaml:"spa"`
	THA node `yaml:"tha"`
	TPA node `yaml:"tpa"`
}

type rawUDP struct {
	Src      node `yaml:"src"`
	Dst      node `yaml:"dst"`
	Checksum node `yaml:"checksum"`
}

type rawTCP struct {
	Src      node           `yaml:"src"`
	Dst      node           `yaml:"dst"`
	Seq      node           `yaml:"seq"`
	Ack      node           `yaml:"ack"`
	Flags    node           `yaml:"flags"`
	Window   node           `yaml:"window"`
	Options  *rawTCPOptions `yaml:"options"`
	Checksum node           `yaml:"checksum"`
}

type rawTCPOptions struct {
	MSS        node `yaml:"mss"`
	WScale     node `yaml:"wscale"`
	SACK       node `yaml:"sack_permitted"`
	Timestamps node `yaml:"timestamps"`
	TSVal      node `yaml:"tsval"`
	TSEcr      node `yaml:"tsecr"`
}

type rawICMP struct {
	Type     node `yaml:"type"`
	ID       node `yaml:"id"`
	Seq      node `yaml:"seq"`
	Checksum node `yaml:"checksum"`
}

type rawPayload struct {
	Pattern node              `yaml:"pattern"`
	Text    node              `yaml:"text"`
	Fields  []rawPayloadField `yaml:"fields"`
}

type rawPayloadField struct {
	Offset node `yaml:"offset"`
	Width  node `yaml:"width"`
	Value  node `yaml:"value"`
}

// Parse decodes a *.wpg.yaml template. file names the template in error
// messages. Parsing is strict: unknown keys, values of the wrong kind or
// out of range, and layer stacks that do not fit the frame size are errors
// (*Error) naming file:line:column, the field path, and a fix. A UTF-8
// byte-order mark at the start is ignored. The limits of Load (tokens,
// nesting, values after alias expansion, streams) are checked before
// anything is built.
func Parse(file string, data []byte) (*Spec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // the BOM some editors write
	p := &parser0{file: file, data: data}
	if len(data) > MaxTemplateBytes {
		return nil, tooBig(file, int64(len(data)))
	}
	if e := p.prescan(data); e != nil {
		return nil, e
	}
	astFile, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, p.yamlErr(err)
	}
	if len(astFile.Docs) != 1 || astFile.Docs[0].Body == nil {
		if len(astFile.Docs) > 1 {
			return nil, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("%d YAML documents in one template", len(astFile.Docs)), Remedy: "put all streams under one `streams:` list in a single document (remove the extra ---)"}
		}
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: "empty template", Remedy: "add a `streams:` list, e.g. streams: [{udp: {dst: 9}, ipv4: {}}] (see docs/templates.md)"}
	}
	p.root = astFile.Docs[0].Body
	if e := p.checkStreamCount(p.root); e != nil {
		return nil, e
	}
	if e := p.checkExpansion(p.root); e != nil {
		return nil, e
	}
	if e := p.checkNulls(p.root, ""); e != nil {
		return nil, e
	}
	if e := p.checkTags(p.root); e != nil { // parse_headers.go
		return nil, e
	}
	var raw rawFile
	if !decodeRaw(p.root, &raw) { // decode.go; go-yaml for the rest and its positioned errors
		if err := yaml.NodeToValue(p.root, &raw, yaml.Strict()); err != nil {
			return nil, p.yamlErr(err)
		}
	}
	return p.spec(&raw)
}

type parser0 struct {
	file string
	data []byte
	root ast.Node
	seed uint64
}
