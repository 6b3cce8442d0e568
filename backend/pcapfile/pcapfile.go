// Package pcapfile is the "pcapfile" backend: frames are written to a pcap
// or pcapng file that Wireshark and tshark read. One worker only.
//
// The file always ends on a whole record: records are collected in a
// buffer that holds whole records only and is written out when it is full,
// at least once a second (checked once per batch, so a crash or kill -9
// loses about the last second), and when the run stops (Ctrl-C, SIGTERM,
// SIGHUP: the engine flushes and closes the backend on every stop). When a
// write fails (a full disk, /dev/full) the file is cut back to its last
// whole record and the sender reports the frames that reached the file.
//
// Each record carries its own timestamp: the frame's scheduled time in a
// paced run, its render time in a flat-out run (the times of a batch spread
// evenly since the previous batch), converted from CLOCK_MONOTONIC to the
// wall clock once at open.
package pcapfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

func init() {
	backend.Register(backend.Registration{
		Name:         "pcapfile",
		Kind:         backend.KindNetwork,
		Summary:      "write a pcap or pcapng file (-o FILE)",
		Open:         backend.Factories{Sender: New}.Open,
		SingleWorker: true,
		Options:      []string{"output", "format"},
		Check: func(o backend.Options) error {
			_, err := Format(o.File.Output, o.File.Format)
			return err
		},
	})
}

// Snaplen is the snapshot length written into the file header.
const Snaplen = 262144

const (
	// bufBytes is the size of the record buffer (larger than the largest
	// record, Snaplen plus its header).
	bufBytes = 1 << 20
	// FlushInterval is the longest records wait in the buffer while frames
	// keep coming: a crash loses about this much of the run.
	FlushInterval = time.Second

	pcapRecHeader = 16 // ts_sec, ts_nsec, incl_len, orig_len
	ngEPBHeader   = 28 // type, length, interface, ts high, ts low, caplen, origlen
	ngEPBTrailer  = 4  // length again
	ngBlockEPB    = 6  // Enhanced Packet Block
)

// Sender writes frames to a capture file.
type Sender struct {
	path     string
	format   string
	ng       bool
	f        *os.File
	slab     []byte
	bufs     [][]byte
	maxFrame int

	// buf holds whole records not yet written to the file.
	buf []byte
	// filed and filedBytes count the frames (and their bytes) whose
	// records reached the file; fileEnd is the file's length in whole
	// records, header included.
	filed, filedBytes uint64
	fileEnd           int64
	lastWrite         int64 // CLOCK_MONOTONIC ns of the last write to the file
	wallOffset        int64 // wall-clock ns minus CLOCK_MONOTONIC ns, at open
	err               error // the first write error; the file takes nothing after it
	closed            bool
}

// Format returns the format for a file name and an explicit --format.
func Format(path, explicit string) (string, error) {
	switch strings.ToLower(explicit) {
	case "pcap", "pcapng":
		return strings.ToLower(explicit), nil
	case "":
		if strings.EqualFold(filepath.Ext(path), ".pcapng") {
			return "pcapng", nil
		}
		return "pcap", nil
	}
	return "", fmt.Errorf("--format %q: choose pcap or pcapng", explicit)
}

// New creates (or truncates) o.File.Output and writes the file header.
func New(_ context.Context, o backend.Options) (backend.Sender, error) {
	if o.File.Output == "" {
		return nil, backend.Errorf("pcapfile", "no output file: add -o FILE.pcap")
	}
	if o.Workers > 1 {
		return nil, backend.ErrorfAt("pcapfile", fmt.Sprintf("writes one file from one worker, got --workers %d", o.Workers), "use --workers 1")
	}
	if o.MaxFrame <= 0 || o.MaxFrame > Snaplen {
		return nil, backend.Errorf("pcapfile", "frame size %d is outside 1…%d", o.MaxFrame, Snaplen)
	}
	format, err := Format(o.File.Output, o.File.Format)
	if err != nil {
		return nil, err
	}
	var hdr bytes.Buffer
	if format == "pcapng" {
		nw, err := pcapgo.NewNgWriter(&hdr, layers.LinkTypeEthernet) // nanosecond timestamps (if_tsresol 9)
		if err == nil {
			err = nw.Flush()
		}
		if err != nil {
			return nil, backend.Errorf("pcapfile", "pcapng header: %w", err)
		}
	} else if err := pcapgo.NewWriterNanos(&hdr).WriteFileHeader(Snaplen, layers.LinkTypeEthernet); err != nil {
		return nil, backend.Errorf("pcapfile", "pcap header: %w", err)
	}
	f, err := os.Create(o.File.Output)
	if err != nil {
		return nil, createError(o.File.Output, err)
	}
	if _, err := f.Write(hdr.Bytes()); err != nil {
		if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
			os.Remove(o.File.Output) // a header-less file (never a device such as /dev/full)
		}
		f.Close()
		return nil, fmt.Errorf("-o %s: write the file header: %w%s", o.File.Output, err, spaceFix(err))
	}
	now := sys.MonotonicNs()
	s := &Sender{path: o.File.Output, format: format, ng: format == "pcapng", f: f, maxFrame: o.MaxFrame,
		buf: make([]byte, 0, bufBytes), fileEnd: int64(hdr.Len()), lastWrite: now,
		wallOffset: time.Now().UnixNano() - now}
	batch := max(o.Batch, 1)
	s.slab = make([]byte, batch*o.MaxFrame)
	s.bufs = make([][]byte, batch)
	for i := range s.bufs {
		s.bufs[i] = s.slab[i*o.MaxFrame : (i+1)*o.MaxFrame : (i+1)*o.MaxFrame]
	}
	return s, nil
}

// createError says why the output file could not be created, where, and
// what to do about it; it unwraps to the system error.
func createError(path string, err error) error {
	dir := filepath.Dir(path)
	fix := "give a path in a directory you can write to"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			fix = fmt.Sprintf("the directory %s takes no new files (a kernel file system such as /proc or /sys): give a path on a disk or tmpfs", dir)
		} else {
			fix = fmt.Sprintf("the directory %s does not exist: create it (mkdir -p %s) or give another path", dir, dir)
		}
	case errors.Is(err, fs.ErrPermission):
		fix = fmt.Sprintf("no permission to write %s: give a path in a directory you can write to (or run as its owner)", path)
	case errors.Is(err, syscall.EISDIR):
		fix = "that is a directory: give a file name such as " + filepath.Join(path, "out.pcap")
	case errors.Is(err, syscall.EROFS):
		fix = "that file system is read-only: give a path on a writable one"
	case errors.Is(err, syscall.ENOSPC):
		fix = "that file system is full: free space or give a path on another one"
	}
	return fmt.Errorf("-o %s: cannot create the capture file: %w: %s", path, err, fix)
}

// spaceFix is the advice that follows a write error.
func spaceFix(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return ": the file system is full: free space, write to another one, or send fewer frames (--count, --duration)"
	case errors.Is(err, syscall.EDQUOT):
		return ": the disk quota is used up: free space or write elsewhere"
	case errors.Is(err, syscall.EFBIG):
		return ": the file is larger than the file system allows: send fewer frames (--count, --duration)"
	}
	return ""
}

// Reserve hands out staging buffers.
func (s *Sender) Reserve(bufs [][]byte) (int, error) { return copy(bufs, s.bufs), nil }

// Commit appends the frames to the file, all stamped with the time of the
// call; the engine calls CommitAt instead, with one time per frame.
func (s *Sender) Commit(lens []int) (int, error) {
	return s.commit(lens, nil, sys.MonotonicNs())
}

// CommitAt appends the frames to the file, frame i stamped with sentNs[i]
// (CLOCK_MONOTONIC ns). It implements engine.TimedSender.
func (s *Sender) CommitAt(lens []int, sentNs []int64) (int, error) {
	return s.commit(lens, sentNs, 0)
}

func (s *Sender) commit(lens []int, sentNs []int64, at int64) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for i, l := range lens {
		rec := pcapRecHeader + l
		if s.ng {
			rec = ngEPBHeader + (l+3)&^3 + ngEPBTrailer
		}
		if len(s.buf)+rec > cap(s.buf) {
			if err := s.write(); err != nil {
				return i, err
			}
		}
		ts := at
		if sentNs != nil {
			ts = sentNs[i]
		}
		s.appendRecord(s.bufs[i][:l], ts+s.wallOffset)
	}
	if now := sys.MonotonicNs(); now-s.lastWrite >= FlushInterval.Nanoseconds() {
		if err := s.write(); err != nil {
			return len(lens), err
		}
	}
	return len(lens), nil
}

// appendRecord adds one record to the buffer (which has room for it).
func (s *Sender) appendRecord(frame []byte, wallNs int64) {
	l := len(frame)
	b := s.buf
	if s.ng {
		total := ngEPBHeader + (l+3)&^3 + ngEPBTrailer
		b = binary.LittleEndian.AppendUint32(b, ngBlockEPB)
		b = binary.LittleEndian.AppendUint32(b, uint32(total))
		b = binary.LittleEndian.AppendUint32(b, 0) // interface 0
		b = binary.LittleEndian.AppendUint32(b, uint32(uint64(wallNs)>>32))
		b = binary.LittleEndian.AppendUint32(b, uint32(wallNs))
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
		b = append(b, frame...)
		var pad [3]byte
		b = append(b, pad[:(4-l&3)&3]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(total))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(wallNs/1e9))
		b = binary.LittleEndian.AppendUint32(b, uint32(wallNs%1e9))
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
		b = append(b, frame...)
	}
	s.buf = b
}

// write writes the buffered records to the file. On an error it counts
// the whole records that reached the file, cuts off a partial one, and
// keeps the error: the file takes nothing after it.
func (s *Sender) write() error {
	if s.err != nil {
		return s.err
	}
	s.lastWrite = sys.MonotonicNs()
	if len(s.buf) == 0 {
		return nil
	}
	n, err := s.f.Write(s.buf)
	frames, fbytes, whole := s.records(s.buf[:n])
	s.filed += frames
	s.filedBytes += fbytes
	s.fileEnd += int64(whole)
	if err == nil && n < len(s.buf) {
		err = errors.New("short write")
	}
	if err != nil {
		msg := fmt.Sprintf("the file holds the %d whole frames written before", s.filed)
		if whole < n {
			if terr := s.f.Truncate(s.fileEnd); terr == nil {
				msg += fmt.Sprintf(" (a partial record after them was cut off at byte %d)", s.fileEnd)
			} else {
				msg += fmt.Sprintf(", and a partial record after them could not be cut off: %v", terr)
			}
		}
		s.err = backend.Errorf("pcapfile", "%w%s; %s", err, spaceFix(err), msg)
		s.buf = s.buf[:0]
		return s.err
	}
	s.buf = s.buf[:0]
	return nil
}

// records counts the whole records at the start of b: frames, their frame
// bytes, and the bytes those records take.
func (s *Sender) records(b []byte) (frames, fbytes uint64, whole int) {
	for {
		var rec, l int
		if s.ng {
			if len(b)-whole < ngEPBHeader {
				return
			}
			rec = int(binary.LittleEndian.Uint32(b[whole+4:]))
			l = int(binary.LittleEndian.Uint32(b[whole+20:]))
		} else {
			if len(b)-whole < pcapRecHeader {
				return
			}
			l = int(binary.LittleEndian.Uint32(b[whole+8:]))
			rec = pcapRecHeader + l
		}
		if len(b)-whole < rec {
			return
		}
		whole += rec
		frames++
		fbytes += uint64(l)
	}
}

// Delivered returns the frames, and their bytes, whose records reached
// the file (not those still in the buffer, nor those a failed write
// lost). It implements engine.Deliverer.
func (s *Sender) Delivered() (frames, bytes uint64) { return s.filed, s.filedBytes }

// MaxFrame returns the largest frame.
func (s *Sender) MaxFrame() int { return s.maxFrame }

// Info describes the file.
func (s *Sender) Info() backend.Info {
	return backend.Info{Backend: "pcapfile", Mode: s.format, NUMANode: -1,
		Details: map[string]string{"file": s.path}}
}

// Flush writes the buffered records to the file.
func (s *Sender) Flush() error {
	if s.closed {
		return nil
	}
	return s.write()
}

// Close flushes and closes the file; it is idempotent.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	err := s.Flush()
	s.closed = true
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = backend.Errorf("pcapfile", "close %s: %w%s", s.path, cerr, spaceFix(cerr))
	}
	return err
}
