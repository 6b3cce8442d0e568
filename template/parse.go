package template

import (
	"bytes"
	"context"
	"errors"
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
type node struct{ n *ynode }

// UnmarshalYAML implements yaml.NodeUnmarshalerContext: when go-yaml
// decodes a template (parse.go's reference), the value becomes a ynode
// by the yconv in ctx.
func (x *node) UnmarshalYAML(ctx context.Context, n ast.Node) error {
	if _, null := n.(*ast.NullNode); null {
		return nil
	}
	c, ok := ctx.Value(ctxKey{}).(*yconv)
	if !ok {
		return errors.New("template: a node decoded without its converter")
	}
	x.n = c.node(n).deref()
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
// byte-order mark at the start is ignored, and so is the carriage return
// of a line end of two bytes. The limits of Load (tokens,
// nesting, values after alias expansion, streams) are checked before
// anything is built.
//
// The template is read stream by stream (yscan.go), in memory of the
// order of the Spec it makes: the YAML library (go-yaml) reads only what
// the scanner does not take — the whole file when it is small
// (wholeMax), else a window of it around the stream in question — so that
// its errors keep their messages and positions and what it refuses is
// refused (parse.go's reference and window).
func Parse(file string, data []byte) (*Spec, error) {
	data = normalize(data)
	p := newParser(file, data)
	if len(data) > MaxTemplateBytes {
		return nil, tooBig(file, int64(len(data)))
	}
	if e := p.prescan(data); e != nil {
		return nil, e
	}
	return p.parse()
}

// normalize drops the byte-order mark some editors write and makes line
// ends of two bytes (\r\n) one, as YAML reads them (go-yaml counts
// one after a comment as two lines).
func normalize(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	return data
}

// wholeMax is the largest template that go-yaml reads whole when the
// scanner stops on it: go-yaml holds some 200 bytes per byte of YAML, so
// 256 KB costs at most about 50 MB. A larger template goes to go-yaml a
// window at a time (parse.go's window).
const wholeMax = 256 << 10

func newParser(file string, data []byte) *parser0 {
	return &parser0{file: file, data: data, maxValues: MaxTemplateValues, wholeMax: wholeMax, keptMax: wholeMax, maxWindows: maxWindows}
}

type parser0 struct {
	file string
	data []byte
	root *ynode   // the document's root value
	ast  ast.Node // go-yaml's tree, when go-yaml read the template (yamlErr's paths)
	seed uint64

	// While the streams sequence is streamed (native), streamsSeq holds
	// no items: cur is item curK, the one being read, and itemNull the
	// first null checkNulls found in the items.
	streaming  bool
	streamsSeq *ynode
	cur        *ynode
	curK       int
	itemNull   *Error
	itemAt     [][2]int32 // the items' positions (line, column), for errors after them

	preset     *uint64 // the seed, when written after the streams (native reads them again)
	maxValues  int64   // MaxTemplateValues (lower in tests)
	wholeMax   int     // wholeMax (lower in tests: windows on small files)
	keptMax    int     // the most of the template's bytes a window keeps as written (wholeMax)
	maxWindows int     // maxWindows
}

// parse reads the template with the scanner, and with go-yaml whole where
// the scanner stops on a small template.
func (p *parser0) parse() (*Spec, error) {
	if s, err, done := p.native(); done {
		return s, err
	}
	return p.reference()
}

// reference reads the template as wpg always has: go-yaml's tree, the
// checks on it, go-yaml's decoder (its values turned into ynodes), the
// Spec.
func (p *parser0) reference() (*Spec, error) {
	raw, _, err := p.referenceRaw()
	if err != nil {
		return nil, err
	}
	return p.spec(raw)
}

// Error categories, in the order the reference finds them: a template
// with errors of several gets the first category's first error.
const (
	catSyntax = iota // go-yaml's parser
	catDocs          // no document, or more than one
	catCount         // more than 65535 streams
	catExpand        // more than MaxTemplateValues values
	catNull          // a key without a value
	catTag           // a YAML tag
	catDecode        // go-yaml's decoder
	catSpec          // wpg's reading of the values (the seed, then the streams in order)
	ncat
)

// referenceRaw is reference to the raw values, the error with its
// category.
func (p *parser0) referenceRaw() (*rawFile, int, *Error) {
	astFile, err := parser.ParseBytes(p.data, 0)
	if err != nil {
		return nil, catSyntax, p.yamlErr(err)
	}
	if len(astFile.Docs) != 1 || astFile.Docs[0].Body == nil {
		if len(astFile.Docs) > 1 {
			return nil, catDocs, &Error{File: p.file, Line: 1, Col: 1, Msg: fmt.Sprintf("%d YAML documents in one template", len(astFile.Docs)), Remedy: "put all streams under one `streams:` list in a single document (remove the extra ---)"}
		}
		return nil, catDocs, &Error{File: p.file, Line: 1, Col: 1, Msg: "empty template", Remedy: "add a `streams:` list, e.g. streams: [{udp: {dst: 9}, ipv4: {}}] (see docs/templates.md)"}
	}
	p.ast = astFile.Docs[0].Body
	conv := newYconv(&arena{}, p.ast)
	p.root = conv.node(p.ast)
	if e := p.checkStreamCount(); e != nil {
		return nil, catCount, e
	}
	if e := p.checkExpansion(p.ast); e != nil {
		return nil, catExpand, e
	}
	if e := p.checkNulls(p.root, ""); e != nil {
		return nil, catNull, e
	}
	if e := p.checkTags(p.ast); e != nil { // parse_headers.go
		return nil, catTag, e
	}
	var raw rawFile
	if err := yaml.NewDecoder(bytes.NewReader(nil), yaml.Strict()).DecodeFromNodeContext(conv.context(), p.ast, &raw); err != nil {
		return nil, catDecode, p.yamlErr(err)
	}
	return &raw, 0, nil
}
