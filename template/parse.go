package template

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
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
}

type rawStream struct {
	Name      node         `yaml:"name"`
	Count     node         `yaml:"count"`
	Share     node         `yaml:"share"`
	Size      node         `yaml:"size"`
	Signature node         `yaml:"signature"`
	Ethernet  *rawEthernet `yaml:"ethernet"`
	VLAN      *rawVLAN     `yaml:"vlan"`
	QinQ      *rawQinQ     `yaml:"qinq"`
	IPv4      *rawIPv4     `yaml:"ipv4"`
	IPv6      *rawIPv6     `yaml:"ipv6"`
	ARP       *rawARP      `yaml:"arp"`
	UDP       *rawUDP      `yaml:"udp"`
	TCP       *rawTCP      `yaml:"tcp"`
	ICMP      *rawICMP     `yaml:"icmp"`
	ICMPv6    *rawICMP     `yaml:"icmpv6"`
	Payload   *rawPayload  `yaml:"payload"`
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
	Src      node `yaml:"src"`
	Dst      node `yaml:"dst"`
	TTL      node `yaml:"ttl"`
	DSCP     node `yaml:"dscp"`
	ECN      node `yaml:"ecn"`
	ID       node `yaml:"id"`
	DF       node `yaml:"df"`
	Protocol node `yaml:"protocol"`
}

type rawIPv6 struct {
	Src        node `yaml:"src"`
	Dst        node `yaml:"dst"`
	HopLimit   node `yaml:"hop_limit"`
	DSCP       node `yaml:"dscp"`
	ECN        node `yaml:"ecn"`
	FlowLabel  node `yaml:"flow_label"`
	NextHeader node `yaml:"next_header"`
}

type rawARP struct {
	Op  node `yaml:"op"`
	SHA node `yaml:"sha"`
	SPA node `yaml:"spa"`
	THA node `yaml:"tha"`
	TPA node `yaml:"tpa"`
}

type rawUDP struct {
	Src node `yaml:"src"`
	Dst node `yaml:"dst"`
}

type rawTCP struct {
	Src    node `yaml:"src"`
	Dst    node `yaml:"dst"`
	Seq    node `yaml:"seq"`
	Ack    node `yaml:"ack"`
	Flags  node `yaml:"flags"`
	Window node `yaml:"window"`
}

type rawICMP struct {
	Type node `yaml:"type"`
	ID   node `yaml:"id"`
	Seq  node `yaml:"seq"`
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
			return nil, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("%d YAML documents in one template", len(astFile.Docs)), Fix: "put all streams under one `streams:` list in a single document (remove the extra ---)"}
		}
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: "empty template", Fix: "add a `streams:` list, e.g. streams: [{udp: {dst: 9}, ipv4: {}}] (see docs/templates.md)"}
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
	var raw rawFile
	if err := yaml.NodeToValue(p.root, &raw, yaml.Strict()); err != nil {
		return nil, p.yamlErr(err)
	}
	return p.spec(&raw)
}

type parser0 struct {
	file string
	data []byte
	root ast.Node
	seed uint64
}

// yamlErr turns a go-yaml error into a one-line *Error with position,
// field path and, for unknown keys, the keys that are valid there.
func (p *parser0) yamlErr(err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &Error{File: p.file, Msg: firstLine(err.Error()), Fix: "check the YAML syntax", Err: err}
	}
	tk := ye.GetToken()
	e := &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Msg: ye.GetMessage(), Err: err}
	if p.root != nil {
		e.Path = pathAt(p.root, "", tk.Position.Line, tk.Position.Column)
	}
	var unk *yaml.UnknownFieldError
	var dup *yaml.DuplicateKeyError
	var te *yaml.TypeError
	var ute *yaml.UnexpectedNodeTypeError
	switch {
	case errors.As(err, &unk):
		key := strings.TrimSpace(tk.Value)
		parent := parentPath(e.Path)
		valid := validKeys(parent)
		where := parent
		if where == "" {
			where = "the top level"
		}
		e.Msg = fmt.Sprintf("unknown key %q in %s", key, where)
		if len(valid) > 0 {
			e.Fix = "valid keys are " + strings.Join(valid, ", ")
			if s := closest(key, valid); s != "" {
				e.Fix = fmt.Sprintf("did you mean %q? ", s) + e.Fix
			}
		}
		if parent != "" && strings.Count(parent, ".") == 0 && strings.HasPrefix(parent, "streams[") {
			e.Msg = fmt.Sprintf("unknown key or layer %q in %s", key, parent)
		}
	case errors.As(err, &dup), strings.Contains(e.Msg, "already defined"):
		e.Fix = "remove one of the two entries"
	case errors.As(err, &te), errors.As(err, &ute):
		e.Fix = "see docs/templates.md for the shape of " + orTop(e.Path)
		if strings.Contains(e.Msg, "where mapping is expected") || strings.Contains(e.Msg, "into Go struct field") {
			e.Msg = "expected a mapping (key: value pairs) here: " + e.Msg
		}
	default:
		e.Fix = "fix the YAML syntax at this position"
	}
	if tabIndent(p.data, tk.Position.Line) {
		e.Msg = "a tab in the indentation: " + e.Msg
		e.Fix = "indent with spaces, not tabs (YAML does not allow tabs in indentation)"
	}
	return e
}

// tabIndent reports whether line (1-based) of data has a tab in its
// leading white space.
func tabIndent(data []byte, line int) bool {
	for i := 1; i < line && len(data) > 0; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return false
		}
		data = data[j+1:]
	}
	for _, c := range data {
		switch c {
		case '\t':
			return true
		case ' ':
			continue
		}
		return false
	}
	return false
}

func orTop(path string) string {
	if path == "" {
		return "a template"
	}
	return path
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// checkNulls rejects keys written without a value (`udp:`), which would
// otherwise silently drop a layer.
func (p *parser0) checkNulls(n ast.Node, path string) *Error {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if e := p.checkNulls(mv, path); e != nil {
				return e
			}
		}
	case *ast.MappingValueNode:
		k := keyString(n.Key)
		sub := joinPath(path, k)
		if _, null := n.Value.(*ast.NullNode); null || n.Value == nil {
			tk := n.Key.GetToken()
			return &Error{File: p.file, Line: tk.Position.Line, Col: tk.Position.Column, Path: sub,
				Msg: "key without a value", Fix: fmt.Sprintf("give %s a value, or `%s: {}` for a layer with its defaults", k, k)}
		}
		return p.checkNulls(n.Value, sub)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			if e := p.checkNulls(v, fmt.Sprintf("%s[%d]", path, i)); e != nil {
				return e
			}
		}
	}
	return nil
}

func keyString(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	return strings.TrimSpace(k.GetToken().Value)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	if path[i] == '[' {
		return path[:i]
	}
	return path[:i]
}

// pathAt returns the field path of the deepest node at line:col.
func pathAt(n ast.Node, path string, line, col int) string {
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if r := pathAt(mv, path, line, col); r != "" {
				return r
			}
		}
	case *ast.MappingValueNode:
		sub := joinPath(path, keyString(n.Key))
		if kt := n.Key.GetToken(); kt != nil && kt.Position.Line == line && kt.Position.Column == col {
			return sub
		}
		if r := pathAt(n.Value, sub, line, col); r != "" {
			return r
		}
		if vt := n.Value.GetToken(); vt != nil && vt.Position.Line == line && vt.Position.Column == col {
			return sub
		}
	case *ast.SequenceNode:
		for i, v := range n.Values {
			sub := fmt.Sprintf("%s[%d]", path, i)
			if r := pathAt(v, sub, line, col); r != "" {
				return r
			}
			if vt := v.GetToken(); vt != nil && vt.Position.Line == line && vt.Position.Column == col {
				return sub
			}
		}
	}
	return ""
}

// lookup finds the node at path (as built by joinPath and [i]).
func lookup(n ast.Node, path string) ast.Node {
	if path == "" {
		return n
	}
	for _, seg := range splitPath(path) {
		switch m := n.(type) {
		case *ast.MappingNode:
			var next ast.Node
			for _, mv := range m.Values {
				if keyString(mv.Key) == seg {
					next = mv.Value
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case *ast.SequenceNode:
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err != nil || i >= len(m.Values) {
				return nil
			}
			n = m.Values[i]
		default:
			return nil
		}
	}
	return n
}

func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				// A key that holds '[' itself ("0[."): not an index.
				break
			}
			j += i
			out = append(out, part[i:j+1])
			part = part[j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// validKeys lists the keys allowed in the mapping at path, from the yaml
// tags of the raw types.
func validKeys(path string) []string {
	t := reflect.TypeOf(rawFile{})
	for _, seg := range splitPath(path) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if strings.HasPrefix(seg, "[") {
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		found := false
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("yaml"); tag == seg {
				t = t.Field(i).Type
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(node{}) {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// closest returns the candidate within edit distance 2 of s, if any.
func closest(s string, cands []string) string {
	best, bestD := "", 3
	for _, c := range cands {
		if d := editDistance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// errAt builds an error positioned at n (or, when n is nil, at the node
// found at path or its nearest ancestor).
func (p *parser0) errAt(n ast.Node, path, msg, fix string) *Error {
	if n == nil {
		for q := path; ; q = parentPath(q) {
			if n = lookup(p.root, q); n != nil || q == "" {
				break
			}
		}
	}
	e := &Error{File: p.file, Path: path, Msg: msg, Fix: fix}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 && !m.IsFlowStyle {
		n = m.Values[0].Key // a block mapping: point at its first key
	}
	if n != nil {
		if tk := n.GetToken(); tk != nil {
			e.Line, e.Col = tk.Position.Line, tk.Position.Column
		}
	}
	return e
}

// keyPos positions an error at the key of path (for layer-level errors).
func (p *parser0) keyErr(path, msg, fix string) *Error {
	parent := lookup(p.root, parentPath(path))
	segs := splitPath(path)
	last := ""
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if m, ok := parent.(*ast.MappingNode); ok {
		for _, mv := range m.Values {
			if keyString(mv.Key) == last {
				return p.errAt(mv.Key, path, msg, fix)
			}
		}
	}
	return p.errAt(nil, path, msg, fix)
}

func scalarText(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}

// text returns the scalar at x, or an error when x holds a list or mapping.
func (p *parser0) text(x node, path, what string) (string, error) {
	if !isScalar(x.n) {
		return "", p.errAt(x.n, path, fmt.Sprintf("expected %s here, found %s", what, strings.ToLower(x.n.Type().String())), "write a single value")
	}
	return strings.TrimSpace(scalarText(x.n)), nil
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.SequenceNode, *ast.MappingValueNode:
		return false
	}
	return true
}

// ftype describes what a field holds.
type ftype struct {
	what    string // "port", "IPv4 address", …
	kind    int    // fUint, fMAC, fIPv4, fIPv6
	max     uint64
	example string
}

const (
	fUint = iota
	fMAC
	fIPv4
	fIPv6
)

var (
	tPort  = ftype{"port", fUint, 65535, "9"}
	tU8    = ftype{"8-bit value", fUint, 255, "64"}
	tU16   = ftype{"16-bit value", fUint, 65535, "1"}
	tU32   = ftype{"32-bit value", fUint, 1<<32 - 1, "1"}
	tDSCP  = ftype{"DSCP", fUint, 63, "46"}
	tECN   = ftype{"ECN", fUint, 3, "0"}
	tPCP   = ftype{"PCP", fUint, 7, "0"}
	tVID   = ftype{"VLAN id", fUint, 4094, "100"}
	tFlow  = ftype{"flow label", fUint, 1<<20 - 1, "1"}
	tSize  = ftype{"frame size", fUint, MaxFrameSize, "64"}
	tCount = ftype{"count", fUint, 1<<63 - 1, "1000"}
	tMAC   = ftype{"MAC address", fMAC, 1<<48 - 1, "02:00:00:00:00:01"}
	tIPv4  = ftype{"IPv4 address", fIPv4, 1<<32 - 1, "198.18.0.1"}
	tIPv6  = ftype{"IPv6 address", fIPv6, 1<<64 - 1, "2001:2::1"}
)

// atom parses one scalar of type t; hi is the upper 64 bits of an IPv6 address.
func (p *parser0) atom(n ast.Node, path string, t ftype) (hi, lo uint64, err error) {
	if !isScalar(n) {
		return 0, 0, p.errAt(n, path, fmt.Sprintf("expected a single %s here, found %s", t.what, strings.ToLower(n.Type().String())), "write a value such as "+t.example)
	}
	s := strings.TrimSpace(scalarText(n))
	switch t.kind {
	case fUint:
		v, perr := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
		if perr != nil {
			if strings.HasPrefix(s, "-") {
				return 0, 0, p.errAt(n, path, fmt.Sprintf("%s %s is negative", t.what, s), fmt.Sprintf("use a value in 0..%d", t.max))
			}
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is not a %s (a whole number)", s, t.what), fmt.Sprintf("use a number in 0..%d, e.g. %s", t.max, t.example))
		}
		if v > t.max {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%s %d is out of range", t.what, v), fmt.Sprintf("use a value in 0..%d", t.max))
		}
		return 0, v, nil
	case fMAC:
		hw, perr := net.ParseMAC(s)
		if perr != nil || len(hw) != 6 {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is not a MAC address", s), "write six hex bytes separated by colons, e.g. "+t.example)
		}
		var v uint64
		for _, b := range hw {
			v = v<<8 | uint64(b)
		}
		return 0, v, nil
	case fIPv4:
		a, perr := netip.ParseAddr(s)
		if perr == nil && a.Is6() && !a.Is4In6() {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is an IPv6 address in an IPv4 field", s), "use an IPv4 address such as 198.18.0.1 (or put it in an ipv6 layer)")
		}
		if perr != nil {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is not an IPv4 address", s), "use dotted decimal such as 198.18.0.1")
		}
		b := a.Unmap().As4()
		return 0, uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3]), nil
	case fIPv6:
		a, perr := netip.ParseAddr(s)
		if perr == nil && a.Is4() {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is an IPv4 address in an IPv6 field", s), "use an IPv6 address such as 2001:2::1 (or put it in an ipv4 layer)")
		}
		if perr != nil {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is not an IPv6 address", s), "use an address such as 2001:2::1")
		}
		b := a.As16()
		for i := range 8 {
			hi = hi<<8 | uint64(b[i])
			lo = lo<<8 | uint64(b[8+i])
		}
		return hi, lo, nil
	}
	return 0, 0, nil
}

var valueKeys = []string{"from", "to", "step", "mode", "seed", "values"}

// value parses a field that may vary per packet: a scalar (fixed), a list
// ([a, b, c], cycled), or a mapping {from, to, step, mode, seed} /
// {values, mode, seed}. It returns the upper 64 bits for IPv6 addresses.
func (p *parser0) value(n ast.Node, path string, t ftype) (Value, uint64, error) {
	switch m := n.(type) {
	case *ast.SequenceNode:
		if len(m.Values) == 0 {
			return Value{}, 0, p.errAt(n, path, "empty list", "give at least one value, or a single value")
		}
		v := Value{Kind: List}
		hi, err := p.list(m, path, t, &v)
		return v, hi, err
	case *ast.MappingNode:
		return p.rangeValue(m, path, t)
	}
	hi, lo, err := p.atom(n, path, t)
	return Fix(lo), hi, err
}

func (p *parser0) list(m *ast.SequenceNode, path string, t ftype, v *Value) (uint64, error) {
	var hi0 uint64
	for i, e := range m.Values {
		hi, lo, err := p.atom(e, fmt.Sprintf("%s[%d]", path, i), t)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			hi0 = hi
		} else if hi != hi0 {
			return 0, p.errAt(e, fmt.Sprintf("%s[%d]", path, i), "IPv6 lists may vary only the lower 64 bits of the address", "keep the first four groups equal in every entry, e.g. 2001:2::1, 2001:2::2")
		}
		v.List = append(v.List, lo)
	}
	return hi0, nil
}

func (p *parser0) rangeValue(m *ast.MappingNode, path string, t ftype) (Value, uint64, error) {
	var from, to, step, mode, seed, values ast.Node
	for _, mv := range m.Values {
		k := keyString(mv.Key)
		switch k {
		case "from":
			from = mv.Value
		case "to":
			to = mv.Value
		case "step":
			step = mv.Value
		case "mode":
			mode = mv.Value
		case "seed":
			seed = mv.Value
		case "values":
			values = mv.Value
		default:
			fix := "a varying field takes from, to, step, mode (increment|decrement|random), seed, or values"
			if s := closest(k, valueKeys); s != "" {
				fix = fmt.Sprintf("did you mean %q? ", s) + fix
			}
			return Value{}, 0, p.errAt(mv.Key, joinPath(path, k), fmt.Sprintf("unknown key %q in a varying %s", k, t.what), fix)
		}
	}
	var v Value
	modeS := ""
	if mode != nil {
		modeS = strings.TrimSpace(scalarText(mode))
		switch modeS {
		case "increment", "decrement", "random":
		default:
			return v, 0, p.errAt(mode, path+".mode", fmt.Sprintf("unknown mode %q", modeS), "use increment, decrement or random")
		}
	}
	v.Seed = p.fieldSeed(path)
	if seed != nil {
		_, s, err := p.atom(seed, path+".seed", ftype{"seed", fUint, 1<<64 - 1, "42"})
		if err != nil {
			return v, 0, err
		}
		v.Seed = s
		if modeS != "random" {
			return v, 0, p.errAt(seed, path+".seed", "seed is only used with mode: random", "add mode: random or remove seed")
		}
	}
	if values != nil {
		seq, ok := values.(*ast.SequenceNode)
		if !ok || len(seq.Values) == 0 {
			return v, 0, p.errAt(values, path+".values", "values must be a non-empty list", "write values: [a, b, c]")
		}
		if from != nil || to != nil || step != nil {
			return v, 0, p.errAt(values, path+".values", "values cannot be combined with from/to/step", "use either values: [...] or from/to")
		}
		v.Kind = List
		if modeS == "random" {
			v.Kind = Random
		} else if modeS != "" {
			return v, 0, p.errAt(mode, path+".mode", fmt.Sprintf("mode %s does not apply to a list of values", modeS), "lists are cycled in order; use mode: random to pick at random")
		}
		hi, err := p.list(seq, path+".values", t, &v)
		return v, hi, err
	}
	if from == nil || to == nil {
		return v, 0, p.errAt(m, path, fmt.Sprintf("a varying %s needs both from and to", t.what), fmt.Sprintf("write {from: %s, to: ...}, a list [a, b], or a single value", t.example))
	}
	hiF, f, err := p.atom(from, path+".from", t)
	if err != nil {
		return v, 0, err
	}
	hiT, tt, err := p.atom(to, path+".to", t)
	if err != nil {
		return v, 0, err
	}
	if hiF != hiT {
		return v, 0, p.errAt(to, path+".to", "IPv6 ranges may vary only the lower 64 bits of the address", "keep the first four groups of from and to equal")
	}
	if modeS == "increment" && f > tt {
		fs, ts := strings.TrimSpace(scalarText(from)), strings.TrimSpace(scalarText(to))
		return v, 0, p.errAt(from, path+".from", fmt.Sprintf("mode: increment counts up from `from` to `to`, but from %s is above to %s", fs, ts),
			fmt.Sprintf("swap them ({from: %s, to: %s}) to count up, or use mode: decrement to count down from %s to %s", ts, fs, fs, ts))
	}
	v.From, v.To = min(f, tt), max(f, tt)
	v.Step = 1
	if step != nil {
		_, s, err := p.atom(step, path+".step", ftype{"step", fUint, 1<<63 - 1, "1"})
		if err != nil {
			return v, 0, err
		}
		if s == 0 {
			return v, 0, p.errAt(step, path+".step", "step 0 would never change the value", "use step: 1 or more (or a fixed value)")
		}
		if modeS == "random" {
			return v, 0, p.errAt(step, path+".step", "step does not apply to mode: random", "remove step")
		}
		v.Step = s
	}
	if modeS != "random" && (v.To-v.From)/v.Step == 1<<64-1 {
		return v, 0, p.errAt(m, path, "the range spans all 2^64 values", "narrow the range by one value, or use mode: random")
	}
	switch {
	case modeS == "random":
		v.Kind = Random
	case modeS == "decrement" || (modeS == "" && f > tt):
		v.Kind = Decrement
	default:
		v.Kind = Increment
	}
	return v, hiF, nil
}

// fieldSeed derives a field's default random seed from the template seed
// and the field path, so that fields vary independently.
func (p *parser0) fieldSeed(path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return mix(p.seed, h.Sum64())
}

// opt parses an optional varying field, def when absent.
func (p *parser0) opt(x node, path string, t ftype, def Value) (Value, error) {
	if !x.set() {
		return def, nil
	}
	v, _, err := p.value(x.n, path, t)
	return v, err
}

// optFixed parses an optional single value, def when absent.
func (p *parser0) optFixed(x node, path string, t ftype, def uint64) (uint64, error) {
	if !x.set() {
		return def, nil
	}
	_, v, err := p.atom(x.n, path, t)
	return v, err
}

func (p *parser0) optBool(x node, path string, def bool) (bool, error) {
	if !x.set() {
		return def, nil
	}
	s, err := p.text(x, path, "true or false")
	if err != nil {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, p.errAt(x.n, path, fmt.Sprintf("%q is not a boolean", s), "write true or false")
}

func (p *parser0) spec(raw *rawFile) (*Spec, error) {
	s := &Spec{File: p.file, Seed: 1}
	if raw.Seed.set() {
		_, v, err := p.atom(raw.Seed.n, "seed", ftype{"seed", fUint, 1<<64 - 1, "42"})
		if err != nil {
			return nil, err
		}
		s.Seed = v
	}
	p.seed = s.Seed
	if len(raw.Streams) == 0 {
		return nil, p.errAt(nil, "streams", "no streams", "add a `streams:` list with at least one stream, e.g. streams: [{ipv4: {}, udp: {}}]")
	}
	if len(raw.Streams) > maxStreams {
		return nil, p.errAt(nil, "streams", fmt.Sprintf("%d streams; the signature's stream id is 16 bits", len(raw.Streams)), fmt.Sprintf("use at most %d streams", maxStreams))
	}
	for i := range raw.Streams {
		st, err := p.stream(&raw.Streams[i], fmt.Sprintf("streams[%d]", i))
		if err != nil {
			return nil, err
		}
		if st.Name == "" {
			st.Name = fmt.Sprintf("stream%d", i)
		}
		s.Streams = append(s.Streams, *st)
	}
	return s, nil
}

var (
	macSrc = Fix(0x020000000001)
	macDst = Fix(0x020000000002)
	macBC  = Fix(0xffffffffffff)
	ip4Src = Fix(0xc6120001) // 198.18.0.1
	ip4Dst = Fix(0xc6130001) // 198.19.0.1
)

const ip6Hi uint64 = 0x2001000200000000 // 2001:2::/64 (benchmarking, RFC 5180)

func (p *parser0) stream(r *rawStream, path string) (*Stream, error) {
	st := &Stream{Share: 1, Signature: true}
	var err error
	if r.Name.set() {
		if st.Name, err = p.text(r.Name, path+".name", "a name"); err != nil {
			return nil, err
		}
	}
	if r.Count.set() {
		if st.Count, err = p.optFixed(r.Count, path+".count", tCount, 0); err != nil {
			return nil, err
		}
	}
	share, err := p.optFixed(r.Share, path+".share", ftype{"share", fUint, 1 << 20, "1"}, 1)
	if err != nil {
		return nil, err
	}
	if share == 0 {
		return nil, p.errAt(r.Share.n, path+".share", "share 0 would never send the stream", "use share: 1 or more (shares are relative weights), or remove the stream")
	}
	st.Share = uint32(share)
	if st.Signature, err = p.optBool(r.Signature, path+".signature", true); err != nil {
		return nil, err
	}

	// Layer stack checks first: they explain more than field errors would.
	l3 := 0
	for _, x := range []bool{r.IPv4 != nil, r.IPv6 != nil, r.ARP != nil} {
		if x {
			l3++
		}
	}
	if l3 > 1 {
		return nil, p.errAt(nil, path, "a stream has at most one of ipv4, ipv6 and arp", "split the layers into two streams")
	}
	l4 := 0
	for _, x := range []bool{r.UDP != nil, r.TCP != nil, r.ICMP != nil, r.ICMPv6 != nil} {
		if x {
			l4++
		}
	}
	if l4 > 1 {
		return nil, p.errAt(nil, path, "a stream has at most one of udp, tcp, icmp and icmpv6", "split the layers into two streams")
	}
	if r.VLAN != nil && r.QinQ != nil {
		return nil, p.keyErr(path+".qinq", "vlan and qinq are exclusive", "use vlan for one 802.1Q tag or qinq {outer, inner} for two")
	}
	switch {
	case (r.UDP != nil || r.TCP != nil) && r.IPv4 == nil && r.IPv6 == nil:
		l := "udp"
		if r.TCP != nil {
			l = "tcp"
		}
		return nil, p.keyErr(path+"."+l, l+" needs an IP layer", "add ipv4: {} or ipv6: {} to the stream")
	case r.ICMP != nil && r.IPv4 == nil:
		fix := "add ipv4: {} to the stream"
		if r.IPv6 != nil {
			fix = "with ipv6, use icmpv6 instead of icmp"
		}
		return nil, p.keyErr(path+".icmp", "icmp (ICMPv4) needs an ipv4 layer", fix)
	case r.ICMPv6 != nil && r.IPv6 == nil:
		fix := "add ipv6: {} to the stream"
		if r.IPv4 != nil {
			fix = "with ipv4, use icmp instead of icmpv6"
		}
		return nil, p.keyErr(path+".icmpv6", "icmpv6 needs an ipv6 layer", fix)
	}

	// Ethernet.
	eth := r.Ethernet
	if eth == nil {
		eth = &rawEthernet{}
	}
	ep := path + ".ethernet"
	defDst := macDst
	if r.ARP != nil {
		defDst = macBC
	}
	if st.Ethernet.Src, err = p.opt(eth.Src, ep+".src", tMAC, macSrc); err != nil {
		return nil, err
	}
	if st.Ethernet.Dst, err = p.opt(eth.Dst, ep+".dst", tMAC, defDst); err != nil {
		return nil, err
	}
	et, err := p.optFixed(eth.Type, ep+".type", ftype{"EtherType", fUint, 0xffff, "0x88b5"}, 0)
	if err != nil {
		return nil, err
	}
	if eth.Type.set() && l3 > 0 {
		return nil, p.errAt(eth.Type.n, ep+".type", "type is set from the ipv4/ipv6/arp layer", "remove ethernet.type (it is only for raw payload streams)")
	}
	if eth.Type.set() && et < 0x0600 {
		return nil, p.errAt(eth.Type.n, ep+".type", fmt.Sprintf("EtherType %#04x is a length, not a type", et), "use a value >= 0x0600, e.g. 0x88b5")
	}
	st.Ethernet.Type = uint16(et)

	// VLAN tags.
	if r.VLAN != nil {
		v, err := p.vlan(r.VLAN, path+".vlan", header.EtherTypeVLAN)
		if err != nil {
			return nil, err
		}
		st.VLANs = []VLAN{v}
	}
	if r.QinQ != nil {
		if r.QinQ.Outer == nil || r.QinQ.Inner == nil {
			return nil, p.keyErr(path+".qinq", "qinq needs both outer and inner tags", "write qinq: {outer: {id: 100}, inner: {id: 200}}")
		}
		o, err := p.vlan(r.QinQ.Outer, path+".qinq.outer", header.EtherTypeQinQ)
		if err != nil {
			return nil, err
		}
		in, err := p.vlan(r.QinQ.Inner, path+".qinq.inner", header.EtherTypeVLAN)
		if err != nil {
			return nil, err
		}
		st.VLANs = []VLAN{o, in}
	}

	// Layer 3.
	if r.IPv4 != nil {
		if st.IPv4, err = p.ipv4(r.IPv4, path+".ipv4", l4 > 0); err != nil {
			return nil, err
		}
	}
	if r.IPv6 != nil {
		if st.IPv6, err = p.ipv6(r.IPv6, path+".ipv6", l4 > 0); err != nil {
			return nil, err
		}
	}
	if r.ARP != nil {
		if st.ARP, err = p.arp(r.ARP, path+".arp", st.Ethernet.Src); err != nil {
			return nil, err
		}
	}

	// Layer 4.
	switch {
	case r.UDP != nil:
		u := &UDP{}
		if u.Src, err = p.opt(r.UDP.Src, path+".udp.src", tPort, Fix(1024)); err != nil {
			return nil, err
		}
		if u.Dst, err = p.opt(r.UDP.Dst, path+".udp.dst", tPort, Fix(9)); err != nil {
			return nil, err
		}
		st.UDP = u
	case r.TCP != nil:
		if st.TCP, err = p.tcp(r.TCP, path+".tcp"); err != nil {
			return nil, err
		}
	case r.ICMP != nil:
		if st.ICMP, err = p.icmp(r.ICMP, path+".icmp"); err != nil {
			return nil, err
		}
	case r.ICMPv6 != nil:
		if st.ICMP, err = p.icmp(r.ICMPv6, path+".icmpv6"); err != nil {
			return nil, err
		}
	}

	// Payload.
	if r.Payload != nil {
		if err := p.payload(r.Payload, path+".payload", st); err != nil {
			return nil, err
		}
	}

	// Frame size last: it is checked against the layers.
	need := st.HeaderLen()
	if st.Signature {
		need += frame.SignatureLen
	}
	// The payload as written: the pattern (or text) must fit once, and
	// every field, in the payload of the smallest frame.
	patNeed := len(st.Payload.Pattern)
	payNeed, payWhat, payPath := patNeed, "", ""
	if patNeed > 0 {
		payWhat, payPath = fmt.Sprintf("the %d-byte payload pattern", patNeed), path+".payload.pattern"
		if r.Payload.Text.set() {
			payWhat, payPath = fmt.Sprintf("the %d-byte payload text", patNeed), path+".payload.text"
		}
	}
	patWhat, patPath := payWhat, payPath
	for i, f := range st.Payload.Fields {
		if f.Offset+f.Width > payNeed {
			payNeed = f.Offset + f.Width
			payWhat, payPath = fmt.Sprintf("payload field %d (offset %d, width %d)", i, f.Offset, f.Width), fmt.Sprintf("%s.payload.fields[%d].offset", path, i)
		}
	}
	minSize := uint64(max(64, need+payNeed))
	if r.Size.set() {
		if st.Size, err = p.size(r.Size.n, path+".size"); err != nil {
			return nil, err
		}
	} else {
		// No size: the smallest frame that holds the layers, the
		// signature and the payload as written.
		if minSize > MaxFrameSize {
			return nil, p.errAt(nil, payPath, fmt.Sprintf("%s needs a frame of %d bytes, above the largest frame size %d", payWhat, minSize, MaxFrameSize), fmt.Sprintf("shorten it to at most %d bytes", MaxFrameSize-need))
		}
		st.Size = Fix(minSize)
	}
	// sizeWhat names the smallest size as the template wrote it.
	sizeWhat := func(lo uint64) string {
		switch {
		case st.Size.Kind == Weighted && isScalar(r.Size.n):
			return fmt.Sprintf("size: imix (%s) has frames of %d bytes", imixString(st.Size), lo)
		case st.Size.Kind == Weighted:
			return fmt.Sprintf("the smallest IMIX size, %d,", lo)
		case st.Size.Kind != Fixed:
			return fmt.Sprintf("the smallest frame size, %d,", lo)
		}
		return fmt.Sprintf("frame size %d", lo)
	}
	// sizeFix says how to raise the smallest size to at least n.
	sizeFix := func(n int) string {
		if st.Size.Kind == Weighted {
			return "use a custom IMIX whose sizes are all at least " + strconv.Itoa(n) + ", e.g. size: " + imixFor(st.Size, n, len(st.VLANs))
		}
		return fmt.Sprintf("use a size of at least %d", n)
	}
	if lo := st.Size.Min(); lo < uint64(need) {
		sig := ""
		fix := sizeFix(need)
		if st.Signature {
			sig = fmt.Sprintf(" + %d of signature", frame.SignatureLen)
			fix += fmt.Sprintf(", or signature: false (then %d)", need-frame.SignatureLen)
		}
		return nil, p.errAt(r.Size.n, path+".size", fmt.Sprintf("%s below the %d bytes this stream needs (%d of headers%s)", isBelow(sizeWhat(lo)), need, st.HeaderLen(), sig), fix)
	}
	if lo := st.Size.Min(); st.Signature && lo < MinSignedFrame {
		return nil, p.errAt(r.Size.n, path+".size", fmt.Sprintf("%s below the Ethernet minimum of %d bytes: the NIC would pad the frame and the signature would no longer be its last 20 bytes", isBelow(sizeWhat(lo)), MinSignedFrame), sizeFix(MinSignedFrame)+", or signature: false")
	}
	if lo := st.Size.Min(); patNeed > 0 && lo < uint64(need+patNeed) {
		return nil, p.errAt(nil, patPath, fmt.Sprintf("%s does not fit in the %d payload bytes of %s (%d of headers%s)", patWhat, int(lo)-need, smallest(st.Size.Kind, lo), st.HeaderLen(), sigBytes(st.Signature)),
			sizeFix(need+patNeed)+" (or remove size: to size the frame from the payload)")
	}
	for i, f := range st.Payload.Fields {
		room := int(st.Size.Min()) - need
		if f.Offset+f.Width > room {
			fp := fmt.Sprintf("%s.payload.fields[%d]", path, i)
			return nil, p.errAt(nil, fp+".offset", fmt.Sprintf("payload field at offset %d (width %d) ends beyond the %d payload bytes of the smallest frame (size %d)", f.Offset, f.Width, room, st.Size.Min()), "move the field to a lower offset or raise the frame size")
		}
	}
	return st, nil
}

// isBelow turns "frame size 60" into "frame size 60 is" and "the
// smallest frame size, 60," into "the smallest frame size, 60, is".
func isBelow(what string) string {
	if strings.HasSuffix(what, ",") {
		return what + " is"
	}
	if strings.HasPrefix(what, "size: imix") {
		return what + ","
	}
	return what + " is"
}

// smallest names the smallest frame of a size: "a 64-byte frame", "the
// smallest frame (64 bytes)".
func smallest(k Kind, lo uint64) string {
	if k == Fixed {
		return fmt.Sprintf("a %d-byte frame", lo)
	}
	return fmt.Sprintf("the smallest frame (%d bytes)", lo)
}

func sigBytes(sig bool) string {
	if sig {
		return fmt.Sprintf(" + %d of signature", frame.SignatureLen)
	}
	return ""
}

// imixString writes the sizes and weights of an IMIX: "7 × 64, 4 × 594, 1 × 1514".
func imixString(v Value) string {
	parts := make([]string, len(v.Sizes))
	for i := range v.Sizes {
		parts[i] = fmt.Sprintf("%d × %d", v.Weights[i], v.Sizes[i])
	}
	return strings.Join(parts, ", ")
}

// imixFor writes a custom IMIX like v whose sizes are at least n (and,
// with VLAN tags, whose largest size grows by the tags).
func imixFor(v Value, n, tags int) string {
	parts := make([]string, len(v.Sizes))
	for i, sz := range v.Sizes {
		if i == len(v.Sizes)-1 && len(v.Sizes) > 1 && sz+uint64(tags*header.VLANLen) <= MaxFrameSize {
			sz += uint64(tags * header.VLANLen)
		}
		parts[i] = fmt.Sprintf("%d: %d", max(sz, uint64(n)), v.Weights[i])
	}
	return "{imix: {" + strings.Join(parts, ", ") + "}}"
}

// HeaderLen is the length of the stream's headers: Ethernet, VLAN tags,
// layer 3 and layer 4.
func (st *Stream) HeaderLen() int {
	n := header.EthernetLen + header.VLANLen*len(st.VLANs)
	switch {
	case st.IPv4 != nil:
		n += header.IPv4MinLen
	case st.IPv6 != nil:
		n += header.IPv6Len
	case st.ARP != nil:
		n += header.ARPLen
	}
	switch {
	case st.UDP != nil:
		n += header.UDPLen
	case st.TCP != nil:
		n += header.TCPMinLen
	case st.ICMP != nil:
		n += header.ICMPEchoLen
	}
	return n
}

func (p *parser0) vlan(r *rawVLAN, path string, defTPID uint16) (VLAN, error) {
	v := VLAN{}
	var err error
	if !r.ID.set() {
		return v, p.keyErr(path, "a VLAN tag needs an id", "write id: 100 (1..4094)")
	}
	if v.ID, err = p.opt(r.ID, path+".id", tVID, Fix(1)); err != nil {
		return v, err
	}
	pcp, err := p.optFixed(r.PCP, path+".pcp", tPCP, 0)
	if err != nil {
		return v, err
	}
	v.PCP = uint8(pcp)
	if v.DEI, err = p.optBool(r.DEI, path+".dei", false); err != nil {
		return v, err
	}
	tpid, err := p.optFixed(r.TPID, path+".tpid", ftype{"TPID", fUint, 0xffff, "0x8100"}, uint64(defTPID))
	if err != nil {
		return v, err
	}
	v.TPID = uint16(tpid)
	return v, nil
}

func (p *parser0) ipv4(r *rawIPv4, path string, hasL4 bool) (*IPv4, error) {
	h := &IPv4{}
	var err error
	if h.Src, err = p.opt(r.Src, path+".src", tIPv4, ip4Src); err != nil {
		return nil, err
	}
	if h.Dst, err = p.opt(r.Dst, path+".dst", tIPv4, ip4Dst); err != nil {
		return nil, err
	}
	if h.TTL, err = p.opt(r.TTL, path+".ttl", tU8, Fix(64)); err != nil {
		return nil, err
	}
	if h.DSCP, err = p.opt(r.DSCP, path+".dscp", tDSCP, Fix(0)); err != nil {
		return nil, err
	}
	if h.ID, err = p.opt(r.ID, path+".id", tU16, Fix(0)); err != nil {
		return nil, err
	}
	ecn, err := p.optFixed(r.ECN, path+".ecn", tECN, 0)
	if err != nil {
		return nil, err
	}
	h.ECN = uint8(ecn)
	if h.DF, err = p.optBool(r.DF, path+".df", true); err != nil {
		return nil, err
	}
	proto, err := p.optFixed(r.Protocol, path+".protocol", tU8, 0)
	if err != nil {
		return nil, err
	}
	if r.Protocol.set() && hasL4 {
		return nil, p.errAt(r.Protocol.n, path+".protocol", "protocol is set from the udp/tcp/icmp layer", "remove ipv4.protocol (it is only for raw payload over IPv4)")
	}
	h.Protocol = uint8(proto)
	return h, nil
}

func (p *parser0) ip6(x node, path string, def IPv6Addr) (IPv6Addr, error) {
	if !x.set() {
		return def, nil
	}
	v, hi, err := p.value(x.n, path, tIPv6)
	return IPv6Addr{Hi: hi, Lo: v}, err
}

func (p *parser0) ipv6(r *rawIPv6, path string, hasL4 bool) (*IPv6, error) {
	h := &IPv6{}
	var err error
	if h.Src, err = p.ip6(r.Src, path+".src", IPv6Addr{ip6Hi, Fix(1)}); err != nil {
		return nil, err
	}
	if h.Dst, err = p.ip6(r.Dst, path+".dst", IPv6Addr{ip6Hi, Fix(2)}); err != nil {
		return nil, err
	}
	if h.HopLimit, err = p.opt(r.HopLimit, path+".hop_limit", tU8, Fix(64)); err != nil {
		return nil, err
	}
	if h.DSCP, err = p.opt(r.DSCP, path+".dscp", tDSCP, Fix(0)); err != nil {
		return nil, err
	}
	if h.FlowLabel, err = p.opt(r.FlowLabel, path+".flow_label", tFlow, Fix(0)); err != nil {
		return nil, err
	}
	ecn, err := p.optFixed(r.ECN, path+".ecn", tECN, 0)
	if err != nil {
		return nil, err
	}
	h.ECN = uint8(ecn)
	nh, err := p.optFixed(r.NextHeader, path+".next_header", tU8, 0)
	if err != nil {
		return nil, err
	}
	if r.NextHeader.set() && hasL4 {
		return nil, p.errAt(r.NextHeader.n, path+".next_header", "next_header is set from the udp/tcp/icmpv6 layer", "remove ipv6.next_header (it is only for raw payload over IPv6)")
	}
	h.NextHeader = uint8(nh)
	return h, nil
}

func (p *parser0) arp(r *rawARP, path string, ethSrc Value) (*ARP, error) {
	a := &ARP{Op: header.ARPRequest}
	var err error
	if r.Op.set() {
		s, err := p.text(r.Op, path+".op", "request or reply")
		if err != nil {
			return nil, err
		}
		switch s {
		case "request", "1":
			a.Op = header.ARPRequest
		case "reply", "2":
			a.Op = header.ARPReply
		default:
			return nil, p.errAt(r.Op.n, path+".op", fmt.Sprintf("unknown ARP operation %q", s), "use request or reply")
		}
	}
	if a.SHA, err = p.opt(r.SHA, path+".sha", tMAC, ethSrc); err != nil {
		return nil, err
	}
	defTHA := Fix(0)
	if a.Op == header.ARPReply {
		defTHA = macDst
	}
	if a.THA, err = p.opt(r.THA, path+".tha", tMAC, defTHA); err != nil {
		return nil, err
	}
	if a.SPA, err = p.opt(r.SPA, path+".spa", tIPv4, ip4Src); err != nil {
		return nil, err
	}
	if a.TPA, err = p.opt(r.TPA, path+".tpa", tIPv4, ip4Dst); err != nil {
		return nil, err
	}
	return a, nil
}

var tcpFlagNames = []string{"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr"}

func (p *parser0) tcp(r *rawTCP, path string) (*TCP, error) {
	t := &TCP{Flags: header.TCPSyn, Window: 65535}
	var err error
	if t.Src, err = p.opt(r.Src, path+".src", tPort, Fix(1024)); err != nil {
		return nil, err
	}
	if t.Dst, err = p.opt(r.Dst, path+".dst", tPort, Fix(9)); err != nil {
		return nil, err
	}
	if t.Seq, err = p.opt(r.Seq, path+".seq", tU32, Fix(0)); err != nil {
		return nil, err
	}
	if t.Ack, err = p.opt(r.Ack, path+".ack", tU32, Fix(0)); err != nil {
		return nil, err
	}
	w, err := p.optFixed(r.Window, path+".window", tU16, 65535)
	if err != nil {
		return nil, err
	}
	t.Window = uint16(w)
	if r.Flags.set() {
		var items []ast.Node
		if seq, ok := r.Flags.n.(*ast.SequenceNode); ok {
			items = seq.Values
		} else {
			items = []ast.Node{r.Flags.n}
		}
		t.Flags = 0
		for i, it := range items {
			fp := fmt.Sprintf("%s.flags[%d]", path, i)
			if !isScalar(it) {
				return nil, p.errAt(it, fp, "a TCP flag must be a name", "write flags: [syn, ack]")
			}
			name := strings.ToLower(strings.TrimSpace(scalarText(it)))
			bit := slices.Index(tcpFlagNames, name)
			if bit < 0 {
				return nil, p.errAt(it, fp, fmt.Sprintf("unknown TCP flag %q", name), "use "+strings.Join(tcpFlagNames, ", "))
			}
			t.Flags |= 1 << bit
		}
	}
	return t, nil
}

func (p *parser0) icmp(r *rawICMP, path string) (*ICMP, error) {
	c := &ICMP{}
	var err error
	if r.Type.set() {
		s, err := p.text(r.Type, path+".type", "echo-request or echo-reply")
		if err != nil {
			return nil, err
		}
		switch s {
		case "echo-request":
		case "echo-reply":
			c.Reply = true
		default:
			return nil, p.errAt(r.Type.n, path+".type", fmt.Sprintf("unsupported ICMP type %q", s), "use echo-request or echo-reply")
		}
	}
	if c.ID, err = p.opt(r.ID, path+".id", tU16, Fix(1)); err != nil {
		return nil, err
	}
	if c.Seq, err = p.opt(r.Seq, path+".seq", tU16, Value{Kind: Increment, From: 0, To: 65535, Step: 1}); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser0) payload(r *rawPayload, path string, st *Stream) error {
	if r.Pattern.set() && r.Text.set() {
		return p.errAt(r.Text.n, path+".text", "pattern and text are exclusive", "use pattern (hex bytes) or text, not both")
	}
	if r.Pattern.set() {
		s, err := p.text(r.Pattern, path+".pattern", "a hex byte string")
		if err != nil {
			return err
		}
		s = strings.NewReplacer(" ", "", ":", "", "0x", "").Replace(s)
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 {
			return p.errAt(r.Pattern.n, path+".pattern", fmt.Sprintf("%q is not a hex byte pattern", scalarText(r.Pattern.n)), `write hex bytes, e.g. pattern: "deadbeef"`)
		}
		st.Payload.Pattern = b
	}
	if r.Text.set() {
		if !isScalar(r.Text.n) {
			return p.errAt(r.Text.n, path+".text", "expected text here", `write text: "hello"`)
		}
		st.Payload.Pattern = []byte(scalarText(r.Text.n))
	}
	for i, f := range r.Fields {
		fp := fmt.Sprintf("%s.fields[%d]", path, i)
		if !f.Offset.set() || !f.Value.set() {
			return p.errAt(nil, fp, "a payload field needs offset and value", "write {offset: 0, width: 4, value: {from: 0, to: 1000}}")
		}
		off, err := p.optFixed(f.Offset, fp+".offset", ftype{"offset", fUint, MaxFrameSize, "0"}, 0)
		if err != nil {
			return err
		}
		w, err := p.optFixed(f.Width, fp+".width", ftype{"width", fUint, 4, "4"}, 1)
		if err != nil {
			return err
		}
		if w != 1 && w != 2 && w != 4 {
			return p.errAt(f.Width.n, fp+".width", fmt.Sprintf("width %d is not supported", w), "use 1, 2 or 4 bytes")
		}
		t := ftype{fmt.Sprintf("%d-byte value", w), fUint, 1<<(8*w) - 1, "1"}
		v, _, err := p.value(f.Value.n, fp+".value", t)
		if err != nil {
			return err
		}
		for j, g := range st.Payload.Fields {
			if int(off) < g.Offset+g.Width && g.Offset < int(off)+int(w) {
				return p.errAt(f.Offset.n, fp+".offset", fmt.Sprintf("overlaps payload field %d", j), "give each field its own bytes")
			}
		}
		st.Payload.Fields = append(st.Payload.Fields, PayloadField{Offset: int(off), Width: int(w), Value: v})
	}
	return nil
}

// DefaultIMIX is the simple IMIX: 7 × 64, 4 × 594, 1 × 1514 bytes. The
// classic large size, 1518, counts the 4-byte FCS, which wpg's frame sizes
// leave out: 1514 is the largest untagged frame a 1500-byte MTU carries.
var DefaultIMIX = struct{ Sizes, Weights []uint64 }{[]uint64{64, 594, 1514}, []uint64{7, 4, 1}}

const maxIMIXPeriod = 1 << 20

func (p *parser0) size(n ast.Node, path string) (Value, error) {
	if isScalar(n) && strings.TrimSpace(scalarText(n)) == "imix" {
		return weighted(DefaultIMIX.Sizes, DefaultIMIX.Weights), nil
	}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 && keyString(m.Values[0].Key) == "imix" {
		ip := path + ".imix"
		if len(m.Values) > 1 {
			return Value{}, p.errAt(m.Values[1].Key, joinPath(path, keyString(m.Values[1].Key)), "imix takes no other keys", "write size: {imix: {64: 7, 594: 4, 1514: 1}}")
		}
		wm, ok := m.Values[0].Value.(*ast.MappingNode)
		if !ok || len(wm.Values) == 0 {
			return Value{}, p.errAt(m.Values[0].Value, ip, "imix weights must be a mapping of size: weight", "write size: {imix: {64: 7, 594: 4, 1514: 1}} or size: imix for that default")
		}
		var sizes, weights []uint64
		var total uint64
		for _, mv := range wm.Values {
			k := keyString(mv.Key)
			_, sz, err := p.atom(mv.Key, ip+"."+k, tSize)
			if err != nil {
				return Value{}, err
			}
			_, w, err := p.atom(mv.Value, ip+"."+k, ftype{"IMIX weight", fUint, maxIMIXPeriod, "7"})
			if err != nil {
				return Value{}, err
			}
			if w == 0 {
				continue
			}
			sizes = append(sizes, sz)
			weights = append(weights, w)
			total += w
		}
		if total == 0 {
			return Value{}, p.errAt(wm, ip, "all imix weights are 0", "give at least one size a weight of 1 or more")
		}
		if total > maxIMIXPeriod {
			return Value{}, p.errAt(wm, ip, fmt.Sprintf("imix weights add up to %d", total), fmt.Sprintf("use small whole-number weights (total at most %d), e.g. 7, 4, 1", maxIMIXPeriod))
		}
		return weighted(sizes, weights), nil
	}
	v, _, err := p.value(n, path, tSize)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && strings.Contains(te.Msg, "is not a frame size") {
			te.Fix = "use a number of bytes such as 64, a range {from: 64, to: 1514}, a list [64, 128], imix, or {imix: {64: 7, 594: 4, 1514: 1}}"
		}
	}
	return v, err
}

func weighted(sizes, weights []uint64) Value {
	return Value{Kind: Weighted, List: interleave(sizes, weights), Sizes: sizes, Weights: weights, From: slices.Min(sizes), To: slices.Max(sizes)}
}
