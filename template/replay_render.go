package template

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/frame/pcapread"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/printable"
)

// replay is a compiled replay stream of one worker: the capture read in
// order, the record for this worker's next frame held in next.
type replay struct {
	file    string
	r       *pcapread.Reader
	sum     pcapread.Summary
	w       uint64 // workers: the records k, k+w, … are this worker's
	next    []byte // the next record's bytes
	nextLen int
	nextTS  int64  // its time from the first record (ns)
	pos     uint64 // its index in the file (0-based)
	lap     uint64 // how many times the capture was read through before it
	err     error  // a read failure: the stream ends, the run reports it
	failed  *bool  // the Source's: set on a read failure

	rw     Rewrite
	curs   []cursor // the rewrite fields' cursors, in the order of rwKinds
	kinds  []rwKind
	hi6    [2]uint64 // the fixed upper halves of the IPv6 rewrites
	lapNs  float64   // the time one pass of the capture takes (original timing)
	insert bool      // a VLAN rewrite inserts a tag into untagged frames
}

type rwKind uint8

const (
	rwEthSrc rwKind = iota
	rwEthDst
	rwVLAN
	rwIP4Src
	rwIP4Dst
	rwIP6Src
	rwIP6Dst
	rwSport
	rwDport
)

// compileReplay sets up stream i, a replay, for this worker and adds it to
// the source; it returns the plan detail of the stream.
func (s *Source) compileReplay(st *Stream, i int, o CompileOptions) (string, error) {
	rp := st.Replay
	if rp.summary == nil {
		sum, err := pcapread.Scan(rp.File)
		if err != nil {
			if rp.at != "" {
				return "", rp.captureErr("", i, st.Name, err)
			}
			return "", fmt.Errorf("stream %d (%s): %w", i, printable.Escape(st.Name), err)
		}
		rp.summary = &sum
	}
	sum := *rp.summary
	W := uint64(o.Workers)
	cs := &cstream{id: o.StreamBase + uint16(i), share: int64(st.Share), sig: st.Signature, k: uint64(o.Worker), w: W, seqTag: frame.SeqWord(0, o.Workers)}
	count := st.Count
	if count == 0 {
		count = sum.Records // one pass of the capture
	}
	if count > uint64(o.Worker) {
		cs.left = (count - uint64(o.Worker) + W - 1) / W
	}
	if o.caps != nil { // a segment's share of --count (segment.go)
		cs.left = o.caps[i]
	}
	rpl := &replay{file: rp.File, sum: sum, w: W, rw: rp.Rewrite, next: make([]byte, pcapread.MaxRecord), failed: &s.failed}
	rpl.setupRewrite()
	rpl.start(uint64(o.Worker), W)
	maxN := sum.MaxLen
	if rpl.insert {
		maxN += header.VLANLen
	}
	if st.Timing != nil && st.Timing.Original {
		span := float64(sum.LastNs - sum.FirstNs)
		if sum.Records < 2 || span <= 0 {
			if count > 1 {
				return "", fmt.Errorf("stream %d (%s): capture %s: %d record(s) spanning no time: timing: original has no gaps to reproduce; use timing: rate and a rate", i, printable.Escape(st.Name), printable.Escape(rp.File), sum.Records)
			}
		} else {
			// One pass lasts from the first record to the last, plus one mean gap.
			rpl.lapNs = (span + span/float64(sum.Records-1)) / st.Timing.Speed
		}
	}
	if cs.left > 0 && !o.CheckOnly {
		r, err := pcapread.Open(rp.File)
		if err != nil {
			return "", err
		}
		rpl.r = r
		// Position on this worker's first record (index Worker).
		rpl.pos = ^uint64(0)
		if err := rpl.skip(uint64(o.Worker) + 1); err != nil {
			r.Close()
			return "", err
		}
	}
	cs.rp = rpl
	s.maxFrame = max(s.maxFrame, maxN)
	s.streams = append(s.streams, cs)
	if cs.left > 0 {
		s.active = append(s.active, i)
		s.total += cs.share
	}
	what := "as captured"
	if rp.Rewrite.any() {
		what = "with rewritten fields and checksums fixed"
	}
	if st.Signature {
		what += ", signed where the payload holds the signature"
	}
	return fmt.Sprintf("replayed from %s (%s, %d records, %s; read from disk as sent, %s)", printable.Escape(rp.File), sum.Format, sum.Records, sizeString(int64(sum.Bytes)), what), nil
}

func (rp *replay) setupRewrite() {
	add := func(v *Value, k rwKind) {
		if v != nil {
			rp.kinds = append(rp.kinds, k)
			rp.curs = append(rp.curs, cursor{})
		}
	}
	w := &rp.rw
	add(w.EthSrc, rwEthSrc)
	add(w.EthDst, rwEthDst)
	add(w.VLANID, rwVLAN)
	add(w.IPv4Src, rwIP4Src)
	add(w.IPv4Dst, rwIP4Dst)
	if w.IPv6Src != nil {
		add(&w.IPv6Src.Lo, rwIP6Src)
		rp.hi6[0] = w.IPv6Src.Hi
	}
	if w.IPv6Dst != nil {
		add(&w.IPv6Dst.Lo, rwIP6Dst)
		rp.hi6[1] = w.IPv6Dst.Hi
	}
	add(w.SrcPort, rwSport)
	add(w.DstPort, rwDport)
	rp.insert = w.VLANID != nil
}

// start sets the rewrite cursors for worker packet index k0 of w.
func (rp *replay) start(k0, w uint64) {
	for j, k := range rp.kinds {
		var v *Value
		switch k {
		case rwEthSrc:
			v = rp.rw.EthSrc
		case rwEthDst:
			v = rp.rw.EthDst
		case rwVLAN:
			v = rp.rw.VLANID
		case rwIP4Src:
			v = rp.rw.IPv4Src
		case rwIP4Dst:
			v = rp.rw.IPv4Dst
		case rwIP6Src:
			v = &rp.rw.IPv6Src.Lo
		case rwIP6Dst:
			v = &rp.rw.IPv6Dst.Lo
		case rwSport:
			v = rp.rw.SrcPort
		case rwDport:
			v = rp.rw.DstPort
		}
		rp.curs[j] = newCursor(v, k0, w)
	}
}

// skip reads n records on from the current one, rewinding at the end of
// the capture, and holds the last in next.
func (rp *replay) skip(n uint64) error {
	for range n {
		data, ts, err := rp.r.Next()
		if err == io.EOF {
			if err = rp.r.Rewind(); err == nil {
				rp.lap++
				rp.pos = ^uint64(0)
				data, ts, err = rp.r.Next()
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("capture %s: it has no records any more (was it replaced while sending?)", rp.file)
			}
			rp.err = err
			return err
		}
		rp.pos++
		rp.nextLen = copy(rp.next, data)
		rp.nextTS = ts - rp.sum.FirstNs
	}
	return nil
}

// dueNs is the time of the next frame from the stream's start at the
// capture's own timing.
func (rp *replay) dueNs(speed float64) float64 {
	return float64(rp.lap)*rp.lapNs + float64(rp.nextTS)/speed
}

// render writes the held record into b (rewritten, signed where asked),
// reads the next one, and returns the frame's length, 0 when the capture
// could not be read (rp.err).
func (cs *cstream) renderReplay(b []byte, now uint64) int {
	rp := cs.rp
	if cs.memo != nil {
		cs.memo.forget(b)
	}
	seq := cs.k | cs.seqTag
	cs.k += cs.w
	src := rp.next[:rp.nextLen]
	n := len(src)
	f := b[:n]
	changed := false
	if rp.insert && n >= header.EthernetLen && !header.VLANTagged(src) {
		// A tag of VLAN 0 after the addresses; the capture's EtherType
		// and the rest follow it.
		const addrs = 2 * header.EthernetAddrLen
		copy(b[:addrs], src[:addrs])
		header.Ethernet(b).SetType(header.EtherTypeVLAN)
		header.VLAN(b[header.EthernetLen:]).SetTCI(0, false, 0)
		copy(b[addrs+header.VLANLen:], src[addrs:])
		n += header.VLANLen
		f = b[:n]
		changed = true
	} else {
		copy(f, src)
	}
	if len(rp.kinds) > 0 || cs.sig {
		changed = rp.rewrite(f, seq, now, cs.sig, cs.id) || changed
	}
	_ = changed
	if (cs.left > 1 || cs.unlimited) && rp.skip(rp.w) != nil {
		// The capture can no longer be read: the source ends after this
		// batch (what is left of it repeats this record) and Source.Err
		// says why.
		*rp.failed = true
	}
	return n
}

// rewrite writes the rewrite fields (advancing their cursors) and the
// signature into frame f and fixes the checksums of the layers it changed.
func (rp *replay) rewrite(f []byte, seq, now uint64, sig bool, id uint16) bool {
	// Walk the headers.
	l3, et := header.EthernetLen, header.Ethernet(f).Type()
	vlan := -1
	for t := 0; t < 2 && header.IsVLAN(et) && len(f) >= l3+header.VLANLen; t++ {
		if vlan < 0 {
			vlan = l3
		}
		et = header.VLAN(f[l3:]).Type()
		l3 += header.VLANLen
	}
	ip4, ip6 := -1, -1
	l4, proto, end := -1, uint8(0), len(f)
	switch {
	case et == header.EtherTypeIPv4 && len(f) >= l3+header.IPv4MinLen:
		h := header.IPv4(f[l3:])
		ihl := h.IHL()
		if ihl >= header.IPv4MinLen && len(f) >= l3+ihl {
			ip4 = l3
			proto = h.Protocol()
			end = min(len(f), l3+int(h.TotalLength()))
			if h.FragmentOffset() == 0 { // the first fragment (or none) holds the L4 header
				l4 = l3 + ihl
			}
		}
	case et == header.EtherTypeIPv6 && len(f) >= l3+header.IPv6Len:
		ip6 = l3
		h := header.IPv6(f[l3:])
		proto = h.NextHeader()
		end = min(len(f), l3+header.IPv6Len+int(h.PayloadLength()))
		l4 = l3 + header.IPv6Len
	}
	if proto != header.ProtoUDP && proto != header.ProtoTCP {
		l4 = -1
	}
	l4hdr := header.UDPLen
	if proto == header.ProtoTCP {
		l4hdr = header.TCPMinLen
		if l4 >= 0 && len(f) >= l4+13 {
			l4hdr = max(header.TCPMinLen, int(f[l4+12]>>4)*4)
		}
	}
	if l4 >= 0 && end < l4+l4hdr {
		l4 = -1
	}
	ipChanged, l4Changed := false, false
	for j, k := range rp.kinds {
		x := rp.curs[j].next()
		switch k {
		case rwEthSrc:
			put48(f[6:], x)
		case rwEthDst:
			put48(f[0:], x)
		case rwVLAN:
			if vlan >= 0 {
				tci := binary.BigEndian.Uint16(f[vlan:]) // vlan is the TCI's offset
				binary.BigEndian.PutUint16(f[vlan:], tci&0xf000|uint16(x))
			}
		case rwIP4Src, rwIP4Dst:
			if ip4 >= 0 {
				off := ip4 + 12
				if k == rwIP4Dst {
					off = ip4 + 16
				}
				binary.BigEndian.PutUint32(f[off:], uint32(x))
				ipChanged, l4Changed = true, true
			}
		case rwIP6Src, rwIP6Dst:
			if ip6 >= 0 {
				off, hi := ip6+8, rp.hi6[0]
				if k == rwIP6Dst {
					off, hi = ip6+24, rp.hi6[1]
				}
				binary.BigEndian.PutUint64(f[off:], hi)
				binary.BigEndian.PutUint64(f[off+8:], x)
				l4Changed = true
			}
		case rwSport, rwDport:
			if l4 >= 0 {
				off := l4
				if k == rwDport {
					off = l4 + 2
				}
				binary.BigEndian.PutUint16(f[off:], uint16(x))
				l4Changed = true
			}
		}
	}
	if sig && l4 >= 0 && end == len(f) && end-(l4+l4hdr) >= frame.SignatureLen {
		s := f[end-frame.SignatureLen:]
		binary.BigEndian.PutUint16(s[0:], frame.SignatureMagic)
		binary.BigEndian.PutUint16(s[2:], id)
		binary.BigEndian.PutUint64(s[4:], seq)
		binary.BigEndian.PutUint64(s[12:], now)
		l4Changed = true
	}
	if ipChanged {
		h := f[ip4 : ip4+header.IPv4(f[ip4:]).IHL()]
		binary.BigEndian.PutUint16(h[10:], 0)
		binary.BigEndian.PutUint16(h[10:], header.Checksum(h, 0))
	}
	if l4Changed && l4 >= 0 {
		fixL4(f, ip4, ip6, l4, end, proto)
	}
	return ipChanged || l4Changed
}

// fixL4 recomputes the UDP or TCP checksum of the segment f[l4:end]. A
// UDP/IPv4 checksum of zero (none) stays zero. A segment cut short by the
// capture's snap length cannot be summed: its checksum is left.
func fixL4(f []byte, ip4, ip6, l4, end int, proto uint8) {
	c := l4 + 6
	if proto == header.ProtoTCP {
		c = l4 + 16
	}
	var ipLen int
	var pseudo uint64
	if ip4 >= 0 {
		ipLen = ip4 + int(binary.BigEndian.Uint16(f[ip4+2:]))
		if proto == header.ProtoUDP && binary.BigEndian.Uint16(f[c:]) == 0 {
			return
		}
		pseudo = header.PseudoSumIPv4(f[ip4+12:ip4+16], f[ip4+16:ip4+20], proto, end-l4)
	} else {
		ipLen = ip6 + header.IPv6Len + int(binary.BigEndian.Uint16(f[ip6+4:]))
		pseudo = header.PseudoSumIPv6(f[ip6+8:ip6+24], f[ip6+24:ip6+40], proto, end-l4)
	}
	if ipLen > len(f) {
		return // truncated by the snap length
	}
	binary.BigEndian.PutUint16(f[c:], 0)
	x := header.Checksum(f[l4:end], pseudo)
	if x == 0 && proto == header.ProtoUDP {
		x = 0xffff
	}
	binary.BigEndian.PutUint16(f[c:], x)
}

func put48(b []byte, x uint64) {
	binary.BigEndian.PutUint16(b[0:], uint16(x>>32))
	binary.BigEndian.PutUint32(b[2:], uint32(x))
}

// closeReplays closes the capture files of the source's replay streams.
func (s *Source) closeReplays() {
	for _, cs := range s.streams {
		if cs.rp != nil && cs.rp.r != nil {
			cs.rp.r.Close()
			cs.rp.r = nil
		}
	}
}

// Err returns the error that ended a replay stream early (its capture
// could not be read any more), nil otherwise. The engine reports it as
// the worker's error.
func (s *Source) Err() error {
	for _, cs := range s.streams {
		if cs.rp != nil && cs.rp.err != nil {
			return cs.rp.err
		}
	}
	return nil
}

// Close closes the capture files a replay stream reads.
func (s *Source) Close() error {
	s.closeReplays()
	return nil
}
