package template

import (
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

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

// valid says which values t takes, for the fix of an error.
func (t ftype) valid() string {
	if t == tSize {
		// 0 is no frame size: the smallest depends on the stream's layers,
		// and a size below it has an error of its own that names it.
		return fmt.Sprintf("use a frame size of at most %d bytes (jumbo), e.g. %s", t.max, t.example)
	}
	return fmt.Sprintf("use a value in 0..%d", t.max)
}

// step reads the step of a range at path: a whole number, 1 or more.
func (p *parser0) step(n *ynode, path string) (uint64, error) {
	_, s, err := p.atom(n, path+".step", ftype{"step", fUint, 1<<63 - 1, "1"})
	if err != nil {
		return 0, err
	}
	if s == 0 {
		return 0, p.errAt(n, path+".step", "step 0 would never change the value", "use step: 1 or more (or a fixed value)")
	}
	return s, nil
}

// atom parses one scalar of type t; hi is the upper 64 bits of an IPv6 address.
func (p *parser0) atom(n *ynode, path string, t ftype) (hi, lo uint64, err error) {
	n = n.deref()
	if !isScalar(n) {
		if a, k, v, ok := splitAddress(n, t); ok {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("YAML reads %s in a list inside a flow mapping ({...}) as the mapping {%s: %s}, not as an address", a, k, v), fmt.Sprintf("quote the address: %q", a))
		}
		return 0, 0, p.errAt(n, path, fmt.Sprintf("expected a single %s here, found %s", t.what, n.typeName()), "write a value such as "+t.example)
	}
	s := strings.TrimSpace(scalarText(n))
	switch t.kind {
	case fUint:
		v, perr := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
		if perr != nil {
			if strings.HasPrefix(s, "-") {
				return 0, 0, p.errAt(n, path, fmt.Sprintf("%s %s is negative", t.what, s), t.valid())
			}
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%q is not a %s (a whole number)", s, t.what), fmt.Sprintf("use a number in 0..%d, e.g. %s", t.max, t.example))
		}
		if v > t.max {
			return 0, 0, p.errAt(n, path, fmt.Sprintf("%s %d is out of range", t.what, v), t.valid())
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

// splitAddress recognises an IPv6 or MAC address (field type t) that YAML
// read as a mapping: in a list inside a flow mapping, go-yaml reads
// [2001:2::1] as [{2001: 2::1}] and [02:00:00:00:00:01] as
// [{02: 00:00:00:00:01}]. n is such a mapping when it has one pair whose
// key is hex digits and whose key, colon and value make an address of
// type t; a is that address, k and v the key and value.
func splitAddress(n *ynode, t ftype) (a, k, v string, ok bool) {
	if t.kind != fIPv6 && t.kind != fMAC || n.kind != yMapping || n.n != 1 {
		return "", "", "", false
	}
	kn, vn := n.first, n.first.next
	if kn.kind != yScalar || vn.kind != yScalar || vn.flags&yNull != 0 || kn.text == "" ||
		strings.TrimLeft(kn.text, "0123456789abcdefABCDEF") != "" {
		return "", "", "", false
	}
	a = kn.text + ":" + vn.text
	if t.kind == fIPv6 {
		_, err := netip.ParseAddr(a)
		ok = err == nil
	} else {
		hw, err := net.ParseMAC(a)
		ok = err == nil && len(hw) == 6
	}
	return a, kn.text, vn.text, ok
}

var valueKeys = []string{"from", "to", "step", "mode", "seed", "values"}

// value parses a field that may vary per packet: a scalar (fixed), a list
// ([a, b, c], cycled), or a mapping {from, to, step, mode, seed} /
// {values, mode, seed}. It returns the upper 64 bits for IPv6 addresses.
func (p *parser0) value(n *ynode, path string, t ftype) (Value, uint64, error) {
	n = n.deref()
	switch n.kind {
	case ySequence:
		if n.n == 0 {
			return Value{}, 0, p.errAt(n, path, "empty list", "give at least one value, or a single value")
		}
		v := Value{Kind: List}
		hi, err := p.list(n, path, t, &v)
		return v, hi, err
	case yMapping:
		return p.rangeValue(n, path, t)
	}
	if (t.kind == fIPv4 || t.kind == fIPv6) && isScalar(n) && strings.Contains(scalarText(n), "/") {
		return p.cidr(n, path, t)
	}
	hi, lo, err := p.atom(n, path, t)
	return Fix(lo), hi, err
}

// cidr parses a prefix (198.18.1.0/24, 2001:2::/120) as the range of its
// host addresses, counting up: for IPv4 prefixes up to /30 without the
// network and broadcast addresses, for IPv6 without the all-zeros
// (subnet-router anycast) address; /31, /32 and /128 are every address.
func (p *parser0) cidr(n *ynode, path string, t ftype) (Value, uint64, error) {
	s := strings.TrimSpace(scalarText(n))
	pfx, err := netip.ParsePrefix(s)
	bitsOf := 32
	if t.kind == fIPv6 {
		bitsOf = 128
	}
	if err != nil || pfx.Addr().BitLen() != bitsOf {
		return Value{}, 0, p.errAt(n, path, fmt.Sprintf("%q is not an %s prefix", s, t.what[:4]), "write a prefix such as "+map[int]string{32: "198.18.1.0/24", 128: "2001:2::/120"}[bitsOf])
	}
	if pfx.Masked() != pfx {
		return Value{}, 0, p.errAt(n, path, fmt.Sprintf("%s has host bits set", s), fmt.Sprintf("write the prefix as %s (or a range {from: %s, to: ...})", pfx.Masked(), pfx.Addr()))
	}
	host := bitsOf - pfx.Bits()
	if t.kind == fIPv6 && host > 64 {
		return Value{}, 0, p.errAt(n, path, fmt.Sprintf("%s spans more than the lower 64 bits of the address", s), "use a prefix of /64 or longer (ranges vary the interface identifier)")
	}
	b := pfx.Addr().As16()
	var hi, lo uint64
	if t.kind == fIPv6 {
		for i := range 8 {
			hi = hi<<8 | uint64(b[i])
			lo = lo<<8 | uint64(b[8+i])
		}
	} else {
		a := pfx.Addr().As4()
		lo = uint64(a[0])<<24 | uint64(a[1])<<16 | uint64(a[2])<<8 | uint64(a[3])
	}
	var last uint64
	if host == 64 {
		last = lo | (1<<64 - 1)
	} else {
		last = lo | (1<<uint(host) - 1)
	}
	first := lo
	switch {
	case t.kind == fIPv4 && host >= 2:
		first, last = lo+1, last-1
	case t.kind == fIPv6 && host >= 1:
		first = lo + 1
	}
	if first == last {
		return Fix(first), hi, nil
	}
	if last-first == 1<<64-1 {
		last-- // Value ranges span fewer than 2^64 values
	}
	return Value{Kind: Increment, From: first, To: last, Step: 1}, hi, nil
}

func (p *parser0) list(m *ynode, path string, t ftype, v *Value) (uint64, error) {
	var hi0 uint64
	v.List = make([]uint64, 0, m.n)
	for i, e := range m.items() {
		hi, lo, err := p.atom(e, path, t)
		if err != nil {
			// The element's path only for its error: a list of a million
			// values makes no million paths.
			_, _, err = p.atom(e, fmt.Sprintf("%s[%d]", path, i), t)
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

func (p *parser0) rangeValue(m *ynode, path string, t ftype) (Value, uint64, error) {
	var from, to, step, mode, seed, values *ynode
	for key, val := range m.pairs() {
		k := key.text
		switch k {
		case "from":
			from = val
		case "to":
			to = val
		case "step":
			step = val
		case "mode":
			mode = val
		case "seed":
			seed = val
		case "values":
			values = val
		default:
			fix := "a varying field takes from, to, step, mode (increment|decrement|random), seed, or values"
			if s := closest(k, valueKeys); s != "" {
				fix = fmt.Sprintf("did you mean %q? ", s) + fix
			}
			return Value{}, 0, p.errAt(key, joinPath(path, k), fmt.Sprintf("unknown key %q in a varying %s", k, t.what), fix)
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
		seq := values
		if seq.kind != ySequence || seq.n == 0 {
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
	if from != nil && to == nil && (t.kind == fIPv4 || t.kind == fIPv6) && isScalar(from) && strings.Contains(scalarText(from), "/") {
		// {from: 198.18.0.0/16, mode: random}: the prefix's host range.
		if step != nil && modeS == "random" {
			return v, 0, p.errAt(step, path+".step", "step does not apply to mode: random", "remove step")
		}
		r, hi, err := p.cidr(from, path+".from", t)
		if err != nil || r.Kind == Fixed {
			return r, hi, err
		}
		r.Seed = v.Seed
		switch modeS {
		case "random":
			r.Kind = Random
		case "decrement":
			r.Kind = Decrement
		}
		if step != nil {
			s, err := p.step(step, path)
			if err != nil {
				return v, 0, err
			}
			r.Step = s
		}
		return r, hi, nil
	}
	if from == nil || to == nil {
		fix := fmt.Sprintf("write {from: %s, to: ...}, a list [a, b], or a single value", t.example)
		if t.kind == fIPv4 || t.kind == fIPv6 {
			fix = fmt.Sprintf("write {from: %s, to: ...}, a prefix (%s/24 or {from: %s/24, mode: random}), a list [a, b], or a single value", t.example, strings.TrimSuffix(t.example, ".1")+".0", strings.TrimSuffix(t.example, ".1")+".0")
			if t.kind == fIPv6 {
				fix = "write {from: 2001:2::1, to: ...}, a prefix (2001:2::/120 or {from: 2001:2::/120, mode: random}), a list [a, b], or a single value"
			}
		}
		return v, 0, p.errAt(m, path, fmt.Sprintf("a varying %s needs both from and to", t.what), fix)
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
		s, err := p.step(step, path)
		if err != nil {
			return v, 0, err
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
