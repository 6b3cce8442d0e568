// Package pcapfile is the "pcapfile" backend: frames are written to a pcap
// or pcapng file that Wireshark and tshark read. The file is valid whenever
// the run stops, including after Ctrl-C or SIGTERM (the engine flushes and
// closes the backend on every stop). One worker only.
package pcapfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:         "pcapfile",
		Kind:         backend.KindNetwork,
		Summary:      "write a pcap or pcapng file (-o FILE)",
		NewSender:    New,
		SingleWorker: true,
	})
}

// Snaplen is the snapshot length written into the file header.
const Snaplen = 262144

// Sender writes frames to a capture file.
type Sender struct {
	path     string
	format   string
	f        *os.File
	bw       *bufio.Writer
	pw       *pcapgo.Writer
	nw       *pcapgo.NgWriter
	slab     []byte
	bufs     [][]byte
	maxFrame int
	written  uint64
	closed   bool
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

// New creates (or truncates) o.Output and writes the file header.
func New(_ context.Context, o backend.Options) (backend.Sender, error) {
	if o.Output == "" {
		return nil, errors.New("pcapfile: no output file: add -o FILE.pcap")
	}
	if o.Workers > 1 {
		return nil, fmt.Errorf("pcapfile writes one file from one worker, got --workers %d: use --workers 1", o.Workers)
	}
	if o.MaxFrame <= 0 || o.MaxFrame > Snaplen {
		return nil, fmt.Errorf("pcapfile: frame size %d is outside 1…%d", o.MaxFrame, Snaplen)
	}
	format, err := Format(o.Output, o.Format)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(o.Output)
	if err != nil {
		return nil, fmt.Errorf("pcapfile: create output: %w", err)
	}
	s := &Sender{path: o.Output, format: format, f: f, bw: bufio.NewWriterSize(f, 1<<20), maxFrame: o.MaxFrame}
	if format == "pcapng" {
		s.nw, err = pcapgo.NewNgWriter(s.bw, layers.LinkTypeEthernet)
	} else {
		s.pw = pcapgo.NewWriterNanos(s.bw)
		err = s.pw.WriteFileHeader(Snaplen, layers.LinkTypeEthernet)
	}
	if err != nil {
		f.Close()
		os.Remove(o.Output)
		return nil, fmt.Errorf("pcapfile: write header of %s: %w", o.Output, err)
	}
	batch := max(o.Batch, 1)
	s.slab = make([]byte, batch*o.MaxFrame)
	s.bufs = make([][]byte, batch)
	for i := range s.bufs {
		s.bufs[i] = s.slab[i*o.MaxFrame : (i+1)*o.MaxFrame : (i+1)*o.MaxFrame]
	}
	return s, nil
}

// Reserve hands out staging buffers.
func (s *Sender) Reserve(bufs [][]byte) (int, error) { return copy(bufs, s.bufs), nil }

// Commit appends the frames to the file, all with the same timestamp.
func (s *Sender) Commit(lens []int) (int, error) {
	ci := gopacket.CaptureInfo{Timestamp: time.Now()}
	for i, l := range lens {
		ci.CaptureLength, ci.Length = l, l
		var err error
		if s.nw != nil {
			err = s.nw.WritePacket(ci, s.bufs[i][:l])
		} else {
			err = s.pw.WritePacket(ci, s.bufs[i][:l])
		}
		if err != nil {
			return i, fmt.Errorf("pcapfile: write %s: %w", s.path, err)
		}
		s.written++
	}
	return len(lens), nil
}

// MaxFrame returns the largest frame.
func (s *Sender) MaxFrame() int { return s.maxFrame }

// Info describes the file.
func (s *Sender) Info() backend.Info {
	return backend.Info{Backend: "pcapfile", Mode: s.format, NUMANode: -1,
		Details: map[string]string{"file": s.path}}
}

// Flush writes buffered records and syncs the file.
func (s *Sender) Flush() error {
	if s.closed {
		return nil
	}
	if s.nw != nil {
		if err := s.nw.Flush(); err != nil {
			return fmt.Errorf("pcapfile: flush %s: %w", s.path, err)
		}
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("pcapfile: flush %s: %w", s.path, err)
	}
	return nil
}

// Close flushes and closes the file; it is idempotent.
func (s *Sender) Close() error {
	if s.closed {
		return nil
	}
	err := s.Flush()
	s.closed = true
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("pcapfile: close %s: %w", s.path, cerr)
	}
	return err
}
