package template

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/wpg-dev/wpg/frame/pcapread"
	"github.com/wpg-dev/wpg/internal/printable"
)

// Replay takes a stream's frames from a capture file (pcap or pcapng)
// instead of a layer stack: the records in order, looping the capture when
// the stream's count asks for more, read from disk as they are sent.
type Replay struct {
	// File is the capture's path; a relative path in a template is taken
	// from the template's directory.
	File string
	// Rewrite lists the fields written over the captured ones; the rest
	// of every frame goes as captured.
	Rewrite Rewrite

	summary *pcapread.Summary // set by LoadCaptures
	// at is where the template names the capture ("t.wpg.yaml:3:11:
	// streams[0].pcap"), for errors; "" for wpg send --pcap.
	at string
	// dir is the template's directory a relative pcap: path was joined
	// to ("" for an absolute one).
	dir string
}

// Summary returns what LoadCaptures found in the capture (its records,
// sizes, timestamps); ok is false before LoadCaptures read it.
func (r *Replay) Summary() (sum pcapread.Summary, ok bool) {
	if r.summary == nil {
		return sum, false
	}
	return *r.summary, true
}

// captureErr wraps a capture's error for stream i: with the template's
// file:line:col of its pcap key when the stream came from a template, and
// for a missing file where a relative path was looked for.
func (rp *Replay) captureErr(tmpl string, i int, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) && rp.dir != "" {
		err = fmt.Errorf("%w (a relative pcap: path is taken from the template's directory, %s): check the name, or give an absolute path", err, printable.Escape(rp.dir))
	}
	return &CaptureError{Template: tmpl, Stream: i, Name: name, Err: err, at: rp.at}
}

// Rewrite is the fields a replay writes over the captured frames, each
// with the same per-packet variations as a template's fields (packet k of
// the stream gets value k). nil leaves a field as captured. A field is
// written only where the frame has that layer; the IPv4 header checksum
// and the UDP/TCP checksum are recomputed in a frame that was changed.
type Rewrite struct {
	EthSrc, EthDst   *Value // MAC addresses
	VLANID           *Value // the outer tag's id; an untagged frame gets an 802.1Q tag
	IPv4Src, IPv4Dst *Value
	IPv6Src, IPv6Dst *IPv6Addr
	SrcPort, DstPort *Value // UDP or TCP
}

func (w *Rewrite) any() bool {
	return w.EthSrc != nil || w.EthDst != nil || w.VLANID != nil || w.IPv4Src != nil || w.IPv4Dst != nil ||
		w.IPv6Src != nil || w.IPv6Dst != nil || w.SrcPort != nil || w.DstPort != nil
}

// LoadCaptures reads every capture the spec's streams replay from end to
// end, once, checking each record, and keeps what Compile needs (record
// count, sizes, first and last time), so that the workers' Compile does
// not read the files again. The first bad record is an error naming it.
func (s *Spec) LoadCaptures() error {
	for i := range s.Streams {
		rp := s.Streams[i].Replay
		if rp == nil || rp.summary != nil {
			continue
		}
		sum, err := pcapread.Scan(rp.File)
		if err != nil {
			return rp.captureErr(s.File, i, s.Streams[i].Name, err)
		}
		rp.summary = &sum
		if sum.MaxUntagged > 0 {
			// The largest untagged frame, for the MTU check (MaxUntagged).
			s.Streams[i].Size = Fix(uint64(max(sum.MaxUntagged, 64)))
		}
	}
	return nil
}

// CaptureError is a capture a stream replays that cannot be read; Err
// names the file and, for a bad record, the record (pcapread.RecordError).
type CaptureError struct {
	Template string
	Stream   int
	Name     string
	Err      error

	at string // file:line:col: path of the pcap key, when known
}

// Error names the template (with the line and column of the stream's
// pcap key, when known), the stream and the capture's problem.
func (e *CaptureError) Error() string {
	if e.at != "" {
		return fmt.Sprintf("%s: stream %d (%s): %v", e.at, e.Stream, printable.Escape(e.Name), e.Err)
	}
	return fmt.Sprintf("template %s: stream %d (%s): %v", printable.Escape(e.Template), e.Stream, printable.Escape(e.Name), e.Err)
}

// Unwrap returns the capture's error (a *pcapread.RecordError for a bad
// record).
func (e *CaptureError) Unwrap() error { return e.Err }

// replayStream parses a stream with pcap: FILE.
func (p *parser0) replayStream(r *rawStream, path string, st *Stream) error {
	file, err := p.text(r.Pcap, path+".pcap", "a file name")
	if err != nil {
		return err
	}
	if file == "" {
		return p.errAt(r.Pcap.n, path+".pcap", "empty file name", "write pcap: capture.pcap (relative to the template's directory)")
	}
	dir := ""
	if !filepath.IsAbs(file) {
		dir = filepath.Dir(p.file)
		file = filepath.Join(dir, file)
	}
	rp := &Replay{File: file, dir: dir}
	if e := p.errAt(r.Pcap.n, path+".pcap", "", ""); e != nil {
		rp.at = strings.TrimSuffix(e.Error(), ": ")
	}
	// The signature changes the frame: only where asked.
	if st.Signature, err = p.optBool(r.Signature, path+".signature", false); err != nil {
		return err
	}
	for _, k := range []struct {
		set  bool
		name string
	}{{r.Size.set(), "size"}, {r.Layers.QinQ != nil, "qinq"}, {r.Layers.ARP != nil, "arp"}, {r.Layers.ICMP != nil, "icmp"}, {r.Layers.ICMPv6 != nil, "icmpv6"}, {r.Payload != nil, "payload"}} {
		if k.set {
			return p.keyErr(path+"."+k.name, k.name+" does not apply to a replayed capture: its frames are sent as captured", "remove "+k.name+" (a replay rewrites ethernet src/dst, vlan id, ipv4/ipv6 src/dst and udp/tcp ports)")
		}
	}
	if err := p.replayRewrite(&r.Layers, path, &rp.Rewrite); err != nil {
		return err
	}
	st.Replay = rp
	st.Size = Fix(64) // until the capture is read (Compile): only for rates and limits
	return nil
}

// replayRewrite reads the fields a replay writes over the captured frames from
// the stream's layer keys r into w: ethernet src/dst, vlan id, ipv4/ipv6
// src/dst, udp/tcp ports; another field of those layers is an error.
func (p *parser0) replayRewrite(r *rawHeaders, path string, w *Rewrite) error {
	var err error
	only := func(what string, set ...bool) error {
		for _, s := range set {
			if s {
				return p.keyErr(path+"."+what, "a replay rewrites only some fields of "+what, "keep only the fields a replay rewrites: ethernet src/dst, vlan id, ipv4/ipv6 src/dst, udp/tcp src/dst")
			}
		}
		return nil
	}
	val := func(x node, fp string, t ftype) (*Value, error) {
		if !x.set() {
			return nil, nil
		}
		v, _, err := p.value(x.n, fp, t)
		if err != nil {
			return nil, err
		}
		return &v, nil
	}
	if e := r.Ethernet; e != nil {
		if err := only("ethernet", e.Type.set()); err != nil {
			return err
		}
		if w.EthSrc, err = val(e.Src, path+".ethernet.src", tMAC); err != nil {
			return err
		}
		if w.EthDst, err = val(e.Dst, path+".ethernet.dst", tMAC); err != nil {
			return err
		}
	}
	if v := r.VLAN; v != nil {
		if err := only("vlan", v.PCP.set(), v.DEI.set(), v.TPID.set()); err != nil {
			return err
		}
		if !v.ID.set() {
			return p.keyErr(path+".vlan", "a VLAN rewrite needs an id", "write vlan: {id: 100}")
		}
		if w.VLANID, err = val(v.ID, path+".vlan.id", tVID); err != nil {
			return err
		}
	}
	if ip := r.IPv4; ip != nil {
		if err := only("ipv4", ip.TTL.set(), ip.DSCP.set(), ip.ECN.set(), ip.ID.set(), ip.DF.set(), ip.Protocol.set()); err != nil {
			return err
		}
		if w.IPv4Src, err = val(ip.Src, path+".ipv4.src", tIPv4); err != nil {
			return err
		}
		if w.IPv4Dst, err = val(ip.Dst, path+".ipv4.dst", tIPv4); err != nil {
			return err
		}
	}
	if ip := r.IPv6; ip != nil {
		if err := only("ipv6", ip.HopLimit.set(), ip.DSCP.set(), ip.ECN.set(), ip.FlowLabel.set(), ip.NextHeader.set()); err != nil {
			return err
		}
		for _, a := range []struct {
			x   node
			dst **IPv6Addr
			n   string
		}{{ip.Src, &w.IPv6Src, "src"}, {ip.Dst, &w.IPv6Dst, "dst"}} {
			if a.x.set() {
				v, err := p.ip6(a.x, path+".ipv6."+a.n, IPv6Addr{})
				if err != nil {
					return err
				}
				*a.dst = &v
			}
		}
	}
	if r.UDP != nil && r.TCP != nil {
		return p.errAt(nil, path, "a replay rewrites ports under udp or tcp, not both", "use one of them: it rewrites the ports of UDP and TCP frames alike")
	}
	var src, dst node
	if r.UDP != nil {
		src, dst = r.UDP.Src, r.UDP.Dst
	}
	if t := r.TCP; t != nil {
		if err := only("tcp", t.Seq.set(), t.Ack.set(), t.Flags.set(), t.Window.set()); err != nil {
			return err
		}
		src, dst = t.Src, t.Dst
	}
	l4 := "udp"
	if r.TCP != nil {
		l4 = "tcp"
	}
	if w.SrcPort, err = val(src, path+"."+l4+".src", tPort); err != nil {
		return err
	}
	if w.DstPort, err = val(dst, path+"."+l4+".dst", tPort); err != nil {
		return err
	}
	return nil
}

// ReplaySpec is the spec of `wpg send --pcap FILE`: one stream replaying
// the capture as captured (no rewrite, no signature), once through. With
// original it keeps the capture's own timing, its gaps divided by speed (a
// speed of 0 is 1); without, the stream shares the run's --rate like any
// other.
func ReplaySpec(file string, original bool, speed float64) *Spec {
	st := Stream{Name: filepath.Base(file), Share: 1, Size: Fix(64), Replay: &Replay{File: file}}
	if original {
		if speed <= 0 {
			speed = 1
		}
		st.Timing = &Timing{Original: true, Speed: speed}
	}
	return &Spec{File: file, Seed: 1, Streams: []Stream{st}}
}
