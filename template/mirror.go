package template

import (
	"fmt"

	"github.com/wpg-dev/wpg/internal/printable"
	"github.com/wpg-dev/wpg/nexthop"
)

// Ports are a template's port addresses (ports: in the YAML): the
// address and gateway of the sending port (TX) and of the receiving one
// (RX), which a bidirectional run sends from too. nil fields: not given.
type Ports struct {
	TX, RX *nexthop.Port
}

// Mirror returns the streams of a port pair's reverse direction (B→A,
// wpg send --bidir): the template's own reverse: streams when it has
// them, else every stream mirrored: its Ethernet, IPv4/IPv6 and UDP/TCP
// source and destination swapped, a tunnel's inner stack too, everything
// else (sizes, counts, shares, rates, varying fields) as it is. A stream
// that replays a capture or carries ARP has no mirror: an *Error naming
// it, and how to give the reverse streams instead.
func Mirror(spec *Spec) (*Spec, error) {
	m := &Spec{File: spec.File, Seed: spec.Seed, Ports: spec.Ports}
	if len(spec.Reverse) > 0 {
		m.Streams = append([]Stream(nil), spec.Reverse...)
		return m, nil
	}
	m.Streams = make([]Stream, len(spec.Streams))
	for i := range spec.Streams {
		st := spec.Streams[i]
		why := ""
		switch {
		case st.Replay != nil:
			why = "it replays a capture (pcap:), whose frames go as captured"
		case st.ARP != nil || (st.Tunnel != nil && st.Tunnel.Inner.ARP != nil):
			why = "it carries ARP, which has no reverse direction"
		}
		if why != "" {
			return nil, &Error{File: spec.File, Path: fmt.Sprintf("streams[%d]", i),
				Msg:    fmt.Sprintf("stream %q cannot be mirrored for the reverse direction: %s", printable.Escape(st.Name), why),
				Remedy: "give the reverse direction's streams under a reverse: list in the template (docs/templates.md), or send one way (drop --bidir)"}
		}
		mirrorHeaders(&st.Headers)
		m.Streams[i] = st
	}
	return m, nil
}

// mirrorHeaders swaps the sources and destinations of a layer stack, in
// place: the stack is a copy whose layers are shared with the original,
// so each swapped layer is copied first.
func mirrorHeaders(h *Headers) {
	h.Ethernet.Src, h.Ethernet.Dst = h.Ethernet.Dst, h.Ethernet.Src
	h.IPv4 = swapped(h.IPv4, func(x *IPv4) { x.Src, x.Dst = x.Dst, x.Src })
	h.IPv6 = swapped(h.IPv6, func(x *IPv6) { x.Src, x.Dst = x.Dst, x.Src })
	h.UDP = swapped(h.UDP, func(x *UDP) { x.Src, x.Dst = x.Dst, x.Src })
	h.TCP = swapped(h.TCP, func(x *TCP) { x.Src, x.Dst = x.Dst, x.Src })
	h.Tunnel = swapped(h.Tunnel, func(t *Tunnel) { mirrorHeaders(&t.Inner) })
}

// swapped returns a copy of the layer *x that swap has changed (nil for
// nil): the original stays as it was.
func swapped[T any](x *T, swap func(*T)) *T {
	if x == nil {
		return nil
	}
	c := *x
	swap(&c)
	return &c
}
