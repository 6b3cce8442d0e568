package template

import (
	"encoding/binary"
	"fmt"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// IPv6 fragment extension header (RFC 8200 §4.5).
const (
	ipv6FragLen         = 8
	protoIPv6Frag uint8 = 44
)

// fragGeom is how a stream's datagrams are cut: the frame of n bytes
// (the datagram as it would be sent whole) has its IP header at l3; the
// first hdr bytes (everything up to the end of the IP header) start every
// fragment, followed (IPv6: after a fragment header) by data bytes of the
// datagram's IP payload, the last fragment by last bytes.
type fragGeom struct {
	n, l3, hdr  int
	v6          bool
	data, count int
	last        int
}

// Fragmented reports whether the stream sends its datagrams cut into IP
// fragments (more than one frame a datagram).
func (st *Stream) Fragmented() bool {
	g := st.fragments()
	return g != nil && g.count > 1
}

// fragments returns the stream's fragment geometry, nil when it sends
// whole datagrams.
func (st *Stream) fragments() *fragGeom {
	var fr *Fragment
	g := &fragGeom{n: int(st.Size.Max()), l3: -1}
	switch {
	case st.IPv4 != nil && st.IPv4.Fragment != nil:
		fr = st.IPv4.Fragment
	case st.IPv6 != nil && st.IPv6.Fragment != nil:
		fr, g.v6 = st.IPv6.Fragment, true
	default:
		return nil
	}
	for _, h := range newLayout(st, 0).hdrs {
		if h.kind == hIPv4 || h.kind == hIPv6 {
			g.l3 = h.off
			break
		}
	}
	ipLen := header.IPv4MinLen
	room := fr.MTU - header.IPv4MinLen
	if g.v6 {
		ipLen, room = header.IPv6Len, fr.MTU-header.IPv6Len-ipv6FragLen
	}
	g.hdr = g.l3 + ipLen
	g.data = room &^ 7
	payload := g.n - g.hdr
	g.count = (payload + g.data - 1) / g.data
	g.last = payload - (g.count-1)*g.data
	return g
}

// frameLen is the length of fragment j's frame.
func (g *fragGeom) frameLen(j int) int {
	n := g.hdr + g.data
	if j == g.count-1 {
		n = g.hdr + g.last
	}
	if g.v6 {
		n += ipv6FragLen
	}
	return n
}

// mean is the mean frame length of the fragments.
func (g *fragGeom) mean() float64 {
	t := 0
	for j := range g.count {
		t += g.frameLen(j)
	}
	return float64(t) / float64(g.count)
}

// checkFragments checks a fragmented stream once its size is known.
func (p *parser0) checkFragments(path string, st *Stream) error {
	g := st.fragments()
	if g == nil {
		return nil
	}
	fp := path + ".ipv4.fragment"
	if g.v6 {
		fp = path + ".ipv6.fragment"
	}
	if st.Size.Kind != Fixed {
		return p.errAt(nil, path+".size", "a fragmented stream has one frame size (its datagram's)", "give size a single value, e.g. size: 3000, or use one stream per size")
	}
	if g.count < 2 {
		return p.errAt(nil, fp+".mtu", fmt.Sprintf("the %d-byte datagram (a %d-byte frame) fits in one packet of this mtu", g.n-g.l3, g.n), fmt.Sprintf("raise size above %d, or lower the mtu", g.hdr+g.data))
	}
	if st.Signature && (g.frameLen(g.count-1) < MinSignedFrame || g.last < frame.SignatureLen) {
		grow := max(MinSignedFrame-g.frameLen(g.count-1), frame.SignatureLen-g.last)
		return p.errAt(nil, path+".size", fmt.Sprintf("the last fragment would be a %d-byte frame with %d bytes of data: too short to carry the signature as its last 20 bytes (a frame of at least %d)", g.frameLen(g.count-1), g.last, MinSignedFrame),
			fmt.Sprintf("use a size of %d (or signature: false)", g.n+grow))
	}
	return nil
}

// fragger cuts the datagrams a stream renders into fragments.
type fragger struct {
	g      *fragGeom
	dg     []byte // the datagram being cut, rendered whole
	j      int    // the next fragment
	inside bool   // rendering the datagram (renderOne's usual path)
	id     *Value // IPv6 identification
	k      uint64 // the datagram's packet index
	bad    bool   // IPv4 header checksum: bad on request
}

func newFragger(st *Stream) *fragger {
	g := st.fragments()
	if g == nil {
		return nil
	}
	f := &fragger{g: g, dg: make([]byte, g.n)}
	if g.v6 {
		f.id = &st.IPv6.Fragment.ID
	} else {
		f.bad = st.IPv4.Checksum == ChecksumBad
	}
	return f
}

// renderFragment writes the stream's next fragment into b: every count
// frames it first renders the next datagram whole (fields, checksums,
// signature at transmit time now), then cuts it.
func (cs *cstream) renderFragment(b []byte, now, nowSum uint64) int {
	f := cs.fr
	g := f.g
	if f.j == 0 {
		f.k = cs.k
		f.inside = true
		cs.renderOne(f.dg, now, nowSum)
		f.inside = false
	}
	j := f.j
	if f.j++; f.j == g.count {
		f.j = 0
	}
	start := g.hdr + j*g.data
	end := min(start+g.data, g.n)
	more := uint16(0)
	if end < g.n {
		more = 1
	}
	off := uint16((j * g.data) / 8)
	if cs.memo != nil {
		cs.memo.forget(b) // b no longer holds a stream image a later frame could patch
	}
	copy(b[:g.hdr], f.dg[:g.hdr])
	if g.v6 {
		ip := header.IPv6(b[g.l3:])
		fh := b[g.hdr : g.hdr+ipv6FragLen]
		fh[0], fh[1] = ip.NextHeader(), 0
		binary.BigEndian.PutUint16(fh[2:], off<<3|more)
		binary.BigEndian.PutUint32(fh[4:], uint32(f.id.At(f.k)))
		ip.SetNextHeader(protoIPv6Frag)
		ip.SetPayloadLength(uint16(ipv6FragLen + end - start))
		return g.hdr + ipv6FragLen + copy(b[g.hdr+ipv6FragLen:], f.dg[start:end])
	}
	ip := header.IPv4(b[g.l3:])
	ip.SetTotalLength(uint16(header.IPv4MinLen + end - start))
	binary.BigEndian.PutUint16(ip[6:], more<<13|off) // DF clear
	ip.SetChecksum(0)
	c := ip.CalculateChecksum()
	if f.bad {
		c = badSum(c, false)
	}
	ip.SetChecksum(c)
	return g.hdr + copy(b[g.hdr:], f.dg[start:end])
}
