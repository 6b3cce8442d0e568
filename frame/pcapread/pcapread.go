// Package pcapread reads the Ethernet frames of a pcap or pcapng capture
// one record at a time, from disk, for replay: memory stays bounded by the
// largest record whatever the size of the file. Errors name the file and
// the record (and, for pcap, its byte offset), so that a truncated or
// damaged capture says where it ends.
//
// Privileges: none; it only reads the file it is given.
package pcapread

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/internal/printable"
)

// MaxRecord is the largest record a capture may hold (bytes captured): a
// jumbo frame. Larger records are usually several TCP segments merged by
// GRO/TSO before the capture point.
const MaxRecord = 9216

// MinRecord is the smallest record replayed: an Ethernet header.
const MinRecord = header.EthernetLen

// Format is pcap or pcapng.
type Format string

// Formats a capture can be in.
const (
	Pcap   Format = "pcap"
	PcapNG Format = "pcapng"
)

// RecordError is a problem with one record of a capture (or its file
// header, Record 0).
type RecordError struct {
	File string
	// Record counts from 1; 0 is the file header.
	Record uint64
	// Offset is the record's byte offset in a pcap file, -1 when unknown
	// (pcapng).
	Offset int64
	Err    error
}

// Error names the file, the record and what is wrong with it.
func (e *RecordError) Error() string {
	where := "file header"
	if e.Record > 0 {
		where = fmt.Sprintf("record %d", e.Record)
		if e.Offset >= 0 {
			where += fmt.Sprintf(" (at byte %d)", e.Offset)
		}
	}
	return fmt.Sprintf("capture %s: %s: %v", e.File, where, e.Err)
}

// Unwrap returns the underlying error (ErrTruncated, an I/O error, …).
func (e *RecordError) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by the error of a record cut short by the end of
// the file.
var ErrTruncated = errors.New("truncated: the file ends inside this record (an interrupted capture? tcpdump -w was killed before it flushed)")

// Reader reads the records of one capture in order. It is not safe for
// concurrent use; open one per goroutine.
type Reader struct {
	file   string
	f      *os.File
	format Format
	pcap   *pcapgo.Reader
	ng     *pcapgo.NgReader
	rec    uint64
	off    int64 // the offset of the record being read (pcap)
	pos    int64 // the offset of the next record (pcap)
	short  bool  // the last record was captured shorter than it was
}

// Open opens a capture and reads its file header.
func Open(path string) (*Reader, error) {
	// Refuse what is not a regular file before opening it: opening a FIFO
	// waits for a writer, so wpg would hang there, deaf to Ctrl-C.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("capture %s: not a regular file (%s): give a pcap or pcapng file", path, printable.FileKind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return nil, fmt.Errorf("capture %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("capture %s: not a regular file (%s): give a pcap or pcapng file", path, printable.FileKind(fi.Mode()))
	}
	r := &Reader{file: path, f: f}
	if err := r.start(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// start reads the file header from the start of the file.
func (r *Reader) start() error {
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("capture %s: %w", r.file, err)
	}
	br := bufio.NewReaderSize(r.f, 64<<10)
	magic, err := br.Peek(4)
	if err != nil {
		if err == io.EOF && len(magic) == 0 {
			return &RecordError{File: r.file, Offset: 0, Err: errors.New("empty file: no pcap or pcapng header")}
		}
		return &RecordError{File: r.file, Offset: 0, Err: fmt.Errorf("%d bytes: too short for a pcap or pcapng header", len(magic))}
	}
	r.rec, r.off, r.pos = 0, 0, 24 // a pcap file header is 24 bytes
	r.pcap, r.ng = nil, nil
	switch m := binary.BigEndian.Uint32(magic); m {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		r.format = Pcap
		r.pcap, err = pcapgo.NewReader(br)
		if err == nil && r.pcap.LinkType() != layers.LinkTypeEthernet {
			err = fmt.Errorf("link type %s (%d): replay needs Ethernet frames (link type 1); capture on an Ethernet interface, not -i any (Linux cooked)", r.pcap.LinkType(), r.pcap.LinkType())
		}
	case 0x0a0d0d0a:
		r.format = PcapNG
		// A record of an interface whose link type is not the first's
		// is an error (Next), where pcapgo would skip it unsaid.
		r.ng, err = pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{ErrorOnMismatchingLinkType: true})
		if err == nil && r.ng.LinkType() != layers.LinkTypeEthernet {
			err = fmt.Errorf("link type %s (%d): replay needs Ethernet frames (link type 1); capture on an Ethernet interface, not -i any (Linux cooked)", r.ng.LinkType(), r.ng.LinkType())
		}
	default:
		return &RecordError{File: r.file, Offset: 0, Err: fmt.Errorf("magic %#08x: not a pcap or pcapng file", m)}
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = errHeaderTruncated{}
		}
		return &RecordError{File: r.file, Offset: 0, Err: err}
	}
	return nil
}

// errHeaderTruncated is ErrTruncated for a file that ends before its
// header does: ErrTruncated's "inside this record" named a record that
// is not there.
type errHeaderTruncated struct{}

func (errHeaderTruncated) Error() string {
	return "truncated: the file ends inside its header, before any record (an interrupted capture? tcpdump -w was killed before it flushed)"
}

// Is makes errors.Is(err, ErrTruncated) hold.
func (errHeaderTruncated) Is(target error) bool { return target == ErrTruncated }

// Format says whether the file is pcap or pcapng.
func (r *Reader) Format() Format { return r.format }

// Next returns the next record's bytes and its timestamp (ns since the
// Unix epoch). data is valid until the next call and must not be kept.
// It returns io.EOF after the last record; any other error is a
// *RecordError naming the record. Next does not allocate.
func (r *Reader) Next() (data []byte, tsNs int64, err error) {
	r.off = r.pos
	r.rec++
	var ci struct {
		cap, length int
		ts          int64
	}
	if r.pcap != nil {
		d, c, e := r.pcap.ZeroCopyReadPacketData()
		data, err = d, e
		ci.cap, ci.length, ci.ts = c.CaptureLength, c.Length, c.Timestamp.UnixNano()
	} else {
		d, c, e := r.ng.ZeroCopyReadPacketData()
		data, err = d, e
		ci.cap, ci.length, ci.ts = c.CaptureLength, c.Length, c.Timestamp.UnixNano()
	}
	if err != nil {
		if err == io.EOF { // nothing of a next record: the end
			r.rec--
			return nil, 0, io.EOF
		}
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
			err = ErrTruncated
		case errors.Is(err, pcapgo.ErrNgLinkTypeMismatch):
			err = r.mixedLinkErr()
		}
		return nil, 0, r.recErr(err)
	}
	switch {
	case len(data) > MaxRecord:
		return nil, 0, r.recErr(fmt.Errorf("%d bytes, above the largest frame of %d: segments merged by GRO/TSO? capture with offloads off (ethtool -K IFACE gro off tso off gso off)", len(data), MaxRecord))
	case len(data) < MinRecord:
		return nil, 0, r.recErr(fmt.Errorf("%d bytes, shorter than an Ethernet header (%d)", len(data), MinRecord))
	}
	r.short = ci.cap < ci.length
	r.pos += 16 + int64(len(data)) // a pcap record header is 16 bytes
	return data, ci.ts, nil
}

// mixedLinkErr says why a pcapng record of another interface than the
// first, of another link type, cannot be replayed, naming the file's
// interfaces that are not Ethernet.
func (r *Reader) mixedLinkErr() error {
	var others []string
	for i := range r.ng.NInterfaces() {
		if in, err := r.ng.Interface(i); err == nil && in.LinkType != layers.LinkTypeEthernet {
			name := ""
			if in.Name != "" {
				name = " (" + printable.Escape(in.Name) + ")"
			}
			others = append(others, fmt.Sprintf("interface %d%s: link type %s (%d)", i, name, in.LinkType, in.LinkType))
		}
	}
	return fmt.Errorf("captured on an interface of another link type than the first's (%s): replay needs Ethernet frames (link type 1) only; keep the first interface's records with `tshark -r FILE -Y 'frame.interface_id == 0' -w ETH.pcapng`",
		strings.Join(others, "; "))
}

func (r *Reader) recErr(err error) error {
	off := r.off
	if r.pcap == nil {
		off = -1
	}
	return &RecordError{File: r.file, Record: r.rec, Offset: off, Err: err}
}

// Record is the number of the record Next returned last (from 1).
func (r *Reader) Record() uint64 { return r.rec }

// Short reports whether the record Next returned last was captured
// shorter than it was on the wire (the capture's snap length).
func (r *Reader) Short() bool { return r.short }

// Rewind goes back to the first record.
func (r *Reader) Rewind() error { return r.start() }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Summary describes a whole capture.
type Summary struct {
	Format  Format
	Records uint64
	// Bytes is the sum of the records' captured lengths; MaxLen the
	// largest.
	Bytes  uint64
	MaxLen int
	// MaxUntagged is the largest record without an 802.1Q/802.1ad tag (0
	// when every record is tagged).
	MaxUntagged int
	// Truncated counts records captured shorter than they were on the
	// wire (a snap length): they are replayed as captured.
	Truncated uint64
	// FirstNs and LastNs are the first and last timestamps; Backwards
	// counts records stamped earlier than the one before.
	FirstNs, LastNs int64
	Backwards       uint64
	// MaxGapNs is the longest time from one record to the next, and
	// MaxGapRecord that next record (from 1; 0: no gap).
	MaxGapNs     int64
	MaxGapRecord uint64
	// Signed counts records that end in a wpg signature (its magic in
	// the last frame.SignatureLen bytes): a capture of wpg's own traffic,
	// whose frames a wpg receiver would count by their old signatures.
	Signed uint64
}

// Scan reads a capture from end to end and summarises it, failing on the
// first bad record.
func Scan(path string) (Summary, error) {
	r, err := Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer r.Close()
	s := Summary{Format: r.format}
	prev := int64(0)
	for {
		data, ts, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		if s.Records == 0 {
			s.FirstNs = ts
		} else if ts < prev {
			s.Backwards++
		} else if ts-prev > s.MaxGapNs {
			s.MaxGapNs, s.MaxGapRecord = ts-prev, s.Records+1
		}
		prev, s.LastNs = ts, ts
		s.Records++
		s.Bytes += uint64(len(data))
		s.MaxLen = max(s.MaxLen, len(data))
		if !header.VLANTagged(data) {
			s.MaxUntagged = max(s.MaxUntagged, len(data))
		}
		if r.short {
			s.Truncated++
		}
		if _, ok := frame.ParseSignature(data); ok {
			s.Signed++
		}
	}
	if s.Records == 0 {
		return s, &RecordError{File: path, Record: 0, Offset: -1, Err: errors.New("no records: the capture is empty")}
	}
	return s, nil
}
