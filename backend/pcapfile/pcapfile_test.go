package pcapfile_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/pcapfile"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// readAll reads every record of a pcap or pcapng file, failing on a
// record cut short.
func readAll(t *testing.T, path string) []gopacket.CaptureInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type reader interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var r reader
	if strings.HasSuffix(path, ".pcapng") {
		r, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	} else {
		r, err = pcapgo.NewReader(f)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []gopacket.CaptureInfo
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v (the file must end on a whole record)", path, len(out), err)
		}
		if len(data) != ci.CaptureLength {
			t.Fatalf("record %d: %d bytes, header says %d", len(out), len(data), ci.CaptureLength)
		}
		out = append(out, ci)
	}
}

func open(t *testing.T, path string, batch, size int) *pcapfile.Sender {
	t.Helper()
	s, err := pcapfile.New(context.Background(), backend.Options{MaxFrame: size, Batch: batch, Workers: 1, File: backend.FileOptions{Output: path}})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*pcapfile.Sender)
}

// commit writes n frames of size bytes in batches through CommitAt, frame
// k stamped at base + k µs; it returns the first error.
func commit(s *pcapfile.Sender, n, batch, size int, base int64) error {
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	stamps := make([]int64, batch)
	for k := 0; k < n; {
		m, _ := s.Reserve(bufs[:min(batch, n-k)])
		for i := range m {
			lens[i] = size
			stamps[i] = base + int64(k+i)*1000
			bufs[i][0] = byte(k + i)
		}
		if _, err := s.CommitAt(lens[:m], stamps[:m]); err != nil {
			return err
		}
		k += m
	}
	return nil
}

// TestRecordsCarryTheirOwnTimeAndCountWhenFiled: every record has the
// time CommitAt gave it (not one time per batch), and a frame counts as
// delivered once its record reached the file, not when it was buffered.
func TestRecordsCarryTheirOwnTimeAndCountWhenFiled(t *testing.T) {
	for _, name := range []string{"out.pcap", "out.pcapng"} {
		path := filepath.Join(t.TempDir(), name)
		s := open(t, path, 64, 101) // an odd size: pcapng pads
		if err := commit(s, 200, 64, 101, 5e9); err != nil {
			t.Fatal(err)
		}
		if f, _ := s.Delivered(); f != 0 {
			t.Errorf("%s: %d frames delivered while still buffered, want 0", name, f)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if f, b := s.Delivered(); f != 200 || b != 200*101 {
			t.Errorf("%s: delivered %d frames %d bytes, want 200 and %d", name, f, b, 200*101)
		}
		recs := readAll(t, path)
		if len(recs) != 200 {
			t.Fatalf("%s: %d records, want 200", name, len(recs))
		}
		for k := 1; k < len(recs); k++ {
			if gap := recs[k].Timestamp.Sub(recs[k-1].Timestamp); gap.Nanoseconds() != 1000 {
				t.Fatalf("%s: gap %d → %d is %v, want the 1µs between their stamps", name, k-1, k, gap)
			}
		}
		if recs[0].Length != 101 {
			t.Errorf("%s: length %d", name, recs[0].Length)
		}
	}
}

// TestFullFileSystemKeepsWholeRecordsAndCountsThem: on a full tmpfs the
// sender reports the frames whose records reached the file, which ends on
// a whole record, and the error says what happened and what to do.
func TestFullFileSystemKeepsWholeRecordsAndCountsThem(t *testing.T) {
	testbed.RequireRoot(t)
	testbed.RequireTool(t, "mount", "mount")
	for _, name := range []string{"full.pcap", "full.pcapng"} {
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "wpg-test", dir).CombinedOutput(); err != nil {
			testbed.Skip(t, "mount a tmpfs: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", dir).Run() })
		path := filepath.Join(dir, name)
		s := open(t, path, 64, 1000)
		err := commit(s, 10000, 64, 1000, 1e9)
		if err == nil {
			err = s.Close()
		}
		s.Close()
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "whole frames") {
			t.Fatalf("%s: error %v, want ENOSPC saying how many whole frames the file holds", name, err)
		}
		frames, bytes := s.Delivered()
		recs := readAll(t, path)
		if uint64(len(recs)) != frames || frames == 0 || bytes != frames*1000 {
			t.Fatalf("%s: delivered %d frames (%d bytes), the file holds %d", name, frames, bytes, len(recs))
		}
		t.Logf("%s: %d frames reached the file: %v", name, frames, err)
	}
}

// TestDevFullIsAnErrorAtOpen: nothing can be written to /dev/full, and
// the sender says so before the run instead of counting frames.
func TestDevFullIsAnErrorAtOpen(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		testbed.Skip(t, "needs /dev/full: %v", err)
	}
	_, err := pcapfile.New(context.Background(), backend.Options{MaxFrame: 64, Batch: 8, Workers: 1, File: backend.FileOptions{Output: "/dev/full"}})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "-o /dev/full") {
		t.Fatalf("error %v, want ENOSPC naming -o /dev/full", err)
	}
}

// TestCreateErrorsSayWhereAndHow: an output that cannot be created names
// the flag and the path and says what to do.
func TestCreateErrorsSayWhereAndHow(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "no", "such", "x.pcap"): "mkdir -p",
		dir:                "give a file name",
		"/proc/forbidden":  "kernel file system",
		"/proc/x/y/z.pcap": "does not exist",
	} {
		_, err := pcapfile.New(context.Background(), backend.Options{MaxFrame: 64, Batch: 8, Workers: 1, File: backend.FileOptions{Output: path}})
		if err == nil || !strings.Contains(err.Error(), "-o "+path) || !strings.Contains(err.Error(), want) {
			t.Errorf("-o %s: error %v, want the flag, the path and %q", path, err, want)
		}
	}
}

// TestCommitDoesNotAllocate: the per-batch path (records into the buffer,
// a write when it is full) allocates nothing.
func TestCommitDoesNotAllocate(t *testing.T) {
	for _, name := range []string{"a.pcap", "a.pcapng"} {
		s := open(t, filepath.Join(t.TempDir(), name), 64, 1501)
		bufs := make([][]byte, 64)
		lens := make([]int, 64)
		stamps := make([]int64, 64)
		for i := range lens {
			lens[i] = 1501
		}
		n, _ := s.Reserve(bufs)
		if a := testing.AllocsPerRun(200, func() { s.CommitAt(lens[:n], stamps[:n]) }); a != 0 {
			t.Errorf("%s: %v allocations per CommitAt", name, a)
		}
		if a := testing.AllocsPerRun(200, func() { s.Commit(lens[:n]) }); a != 0 {
			t.Errorf("%s: %v allocations per Commit", name, a)
		}
		s.Close()
	}
}
