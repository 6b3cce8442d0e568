package template

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

func (p *parser0) spec(raw *rawFile) (*Spec, error) {
	s, err := p.specSeed(raw.Seed)
	if err != nil {
		return nil, err
	}
	if err := p.specCount(len(raw.Streams)); err != nil {
		return nil, err
	}
	s.Streams = make([]Stream, 0, len(raw.Streams)) // one allocation, not a doubling per power of two
	shares := make([]node, len(raw.Streams))
	for i := range raw.Streams {
		if err := p.specStream(s, &raw.Streams[i], i); err != nil {
			return nil, err
		}
		shares[i] = raw.Streams[i].Share
	}
	if err := p.checkTimed(shares, s); err != nil { // timing.go
		return nil, err
	}
	if err := p.portPair(raw, s); err != nil { // mirror_parse.go
		return nil, err
	}
	return s, nil
}

// specSeed begins the Spec with the template's seed.
func (p *parser0) specSeed(seed node) (*Spec, error) {
	s := &Spec{File: p.file, Seed: 1}
	if seed.set() {
		_, v, err := p.atom(seed.n, "seed", ftype{"seed", fUint, 1<<64 - 1, "42"})
		if err != nil {
			return nil, err
		}
		s.Seed = v
	}
	p.seed = s.Seed
	return s, nil
}

// specCount checks the number of streams.
func (p *parser0) specCount(n int) error {
	if n == 0 {
		return p.errAt(nil, "streams", "no streams", "add a `streams:` list with at least one stream, e.g. streams: [{ipv4: {}, udp: {}}]")
	}
	if n > maxStreams {
		return p.errAt(nil, "streams", fmt.Sprintf("%d streams; the signature's stream id is 16 bits", n), fmt.Sprintf("use at most %d streams", maxStreams))
	}
	return nil
}

// specStream adds stream i, read from r, to s (made in its place: a
// Stream is some 600 bytes, and a template may have 65,535).
func (p *parser0) specStream(s *Spec, r *rawStream, i int) error {
	s.Streams = append(s.Streams, Stream{Share: 1, Signature: true})
	st := &s.Streams[len(s.Streams)-1]
	if err := p.streamInto(st, r, "streams["+strconv.Itoa(i)+"]"); err != nil {
		s.Streams = s.Streams[:len(s.Streams)-1]
		return err
	}
	if st.Name == "" {
		st.Name = "stream" + strconv.Itoa(i)
	}
	return nil
}

var (
	macSrc = Fix(0x020000000001)
	macDst = Fix(0x020000000002)
	macBC  = Fix(0xffffffffffff)
	ip4Src = Fix(0xc6120001) // 198.18.0.1
	ip4Dst = Fix(0xc6130001) // 198.19.0.1
)

const ip6Hi uint64 = 0x2001000200000000 // 2001:2::/64 (benchmarking, RFC 5180)

// stream reads r.
func (p *parser0) stream(r *rawStream, path string) (*Stream, error) {
	st := &Stream{Share: 1, Signature: true}
	if err := p.streamInto(st, r, path); err != nil {
		return nil, err
	}
	return st, nil
}

// streamInto reads r into st (a zero Stream but for Share 1 and
// Signature).
func (p *parser0) streamInto(st *Stream, r *rawStream, path string) error {
	if err := p.streamHead(r, path, st); err != nil {
		return err
	}

	// A capture replayed instead of layers, and the stream's own
	// schedule (replay.go, timing.go).
	if r.Pcap.set() {
		if err := p.replayStream(r, path, st); err != nil {
			return err
		}
		if err := p.timing(r, path, st); err != nil {
			return err
		}
		return nil
	}

	// The layer stack (parse_headers.go).
	if err := p.headers(&r.Layers, path, &st.Headers, ""); err != nil {
		return err
	}

	// Payload.
	if r.Payload != nil {
		if err := p.payload(r.Payload, path+".payload", st); err != nil {
			return err
		}
	}

	// Fields that vary as a cross product (parse_tuple.go).
	if r.Tuple.set() {
		if err := p.tuple(r.Tuple, path, st); err != nil {
			return err
		}
	}

	// Frame size last: it is checked against the layers.
	if err := p.frameSize(r, path, st); err != nil {
		return err
	}
	if err := p.checkFragments(path, st); err != nil { // fragment.go
		return err
	}
	if err := p.timing(r, path, st); err != nil { // timing.go
		return err
	}
	return nil
}

// streamHead reads the stream's name, count, share and signature into st.
func (p *parser0) streamHead(r *rawStream, path string, st *Stream) error {
	var err error
	if r.Name.set() {
		if st.Name, err = p.text(r.Name, path+".name", "a name"); err != nil {
			return err
		}
	}
	if r.Count.set() {
		if st.Count, err = p.optFixed(r.Count, path+".count", tCount, 0); err != nil {
			return err
		}
	}
	share, err := p.optFixed(r.Share, path+".share", ftype{"share", fUint, 1 << 20, "1"}, 1)
	if err != nil {
		return err
	}
	if share == 0 {
		return p.errAt(r.Share.n, path+".share", "share 0 would never send the stream", "use share: 1 or more (shares are relative weights), or remove the stream")
	}
	st.Share = uint32(share)
	if st.Signature, err = p.optBool(r.Signature, path+".signature", true); err != nil {
		return err
	}
	return nil
}

// frameSize reads the stream's size into st (without one, the smallest
// frame that holds the layers, the signature and the payload as written)
// and checks that its smallest frame holds them.
func (p *parser0) frameSize(r *rawStream, path string, st *Stream) error {
	var err error
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
			return err
		}
	} else {
		// No size: the smallest frame that holds the layers, the
		// signature and the payload as written.
		if minSize > MaxFrameSize {
			return p.errAt(nil, payPath, fmt.Sprintf("%s needs a frame of %d bytes, above the largest frame size %d", payWhat, minSize, MaxFrameSize), fmt.Sprintf("shorten it to at most %d bytes", MaxFrameSize-need))
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
		return p.errAt(r.Size.n, path+".size", fmt.Sprintf("%s below the %d bytes this stream needs (%d of headers%s)", isBelow(sizeWhat(lo)), need, st.HeaderLen(), sig), fix)
	}
	if lo := st.Size.Min(); st.Signature && lo < MinSignedFrame {
		return p.errAt(r.Size.n, path+".size", fmt.Sprintf("%s below the Ethernet minimum of %d bytes: the NIC would pad the frame and the signature would no longer be its last 20 bytes", isBelow(sizeWhat(lo)), MinSignedFrame), sizeFix(MinSignedFrame)+", or signature: false")
	}
	if lo := st.Size.Min(); patNeed > 0 && lo < uint64(need+patNeed) {
		return p.errAt(nil, patPath, fmt.Sprintf("%s does not fit in the %d payload bytes of %s (%d of headers%s)", patWhat, int(lo)-need, smallest(st.Size.Kind, lo), st.HeaderLen(), sigBytes(st.Signature)),
			sizeFix(need+patNeed)+" (or remove size: to size the frame from the payload)")
	}
	for i, f := range st.Payload.Fields {
		room := int(st.Size.Min()) - need
		if f.Offset+f.Width > room {
			fp := fmt.Sprintf("%s.payload.fields[%d]", path, i)
			return p.errAt(nil, fp+".offset", fmt.Sprintf("payload field at offset %d (width %d) ends beyond the %d payload bytes of the smallest frame (size %d)", f.Offset, f.Width, room, st.Size.Min()), "move the field to a lower offset or raise the frame size")
		}
	}
	return nil
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

// HeaderLen is the length of the stream's headers: every layer of the
// stack, tunnels and their inner stacks, raw layers included.
func (st *Stream) HeaderLen() int {
	L := layout{st: st, measure: true}
	return L.stack(&st.Headers, true, 0)
}
