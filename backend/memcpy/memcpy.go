// Package memcpy is wpg's memory-bandwidth reference for the local paths:
// each frame the engine renders into a staging buffer is copied into a
// destination buffer in the same process with Go's copy (which uses
// `rep movsb`/vector moves, the same as glibc memcpy for these sizes). No
// second process, no system call: what a local path achieves is reported
// as a ratio to this.
//
// No privileges. Portable.
package memcpy

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/sys"
)

func init() {
	backend.Register(backend.Registration{
		Name:    "memcpy",
		Kind:    backend.KindReference,
		Summary: "copy into a local buffer: the memory-bandwidth reference for the local paths",
		Open:    backend.Factories{Sender: newSender}.Open,
		Payload: true,
	})
}

// budget bounds the staging and destination buffers: small frames go in
// batches of up to 64 KiB, a large frame alone, so that, as in the C
// reference (memlocal: one source and one destination buffer of the
// frame's size), source and destination are each one frame's worth.
const budget = 64 << 10

type sender struct {
	maxFrame int
	src      backend.Staging
	dst      []byte
	mem      *sys.SharedMapping // src and dst, back to back
	frames   uint64
	bytes    uint64
	sink     byte
}

func newSender(_ context.Context, o backend.Options) (backend.Sender, error) {
	if err := o.NeedMaxFrame("memcpy"); err != nil {
		return nil, err
	}
	s := &sender{maxFrame: o.MaxFrame, src: backend.Staging{MaxFrame: o.MaxFrame, PerCall: max(1, min(budget/o.MaxFrame, max(o.Batch, 1)))}}
	// Both buffers from one mapping, faulted in and written now, so that
	// the timed run copies into resident memory (as the C reference's
	// warm iterations do), and a size the system cannot give is a clear
	// error rather than the runtime's fatal "out of memory".
	half := s.src.PerCall * o.MaxFrame
	var err error
	if s.mem, err = sys.Alloc(2*half, fmt.Sprintf("the memcpy source and destination buffers (2 × %d bytes)", half)); err != nil {
		return nil, backend.Errorf("memcpy", "%w", err)
	}
	b := s.mem.Bytes()
	s.src.Mem, s.dst = b[:half:half], b[half:]
	return s, nil
}

func (s *sender) Reserve(bufs [][]byte) (int, error) { return s.src.Reserve(bufs), nil }

func (s *sender) Commit(lens []int) (int, error) {
	n := s.src.Take(lens)
	mf := s.maxFrame
	for i := 0; i < n; i++ {
		off := i * mf
		copy(s.dst[off:off+lens[i]], s.src.Mem[off:off+lens[i]])
		s.bytes += uint64(lens[i])
	}
	// Read one byte back so the copies cannot be dropped as dead stores.
	if n > 0 {
		s.sink ^= s.dst[(n-1)*mf]
	}
	s.frames += uint64(n)
	return n, nil
}

func (s *sender) MaxFrame() int { return s.maxFrame }

func (s *sender) Info() backend.Info {
	return backend.Info{Backend: "memcpy", Mode: "copy", NUMANode: -1, Details: map[string]string{
		"frames_per_batch": strconv.Itoa(s.src.PerCall),
		"copied_bytes":     strconv.FormatUint(s.bytes, 10),
		"copy":             "Go copy() from the rendered staging buffer into a private destination",
	}}
}

func (s *sender) Flush() error { return nil }

func (s *sender) Close() error {
	s.src.Mem, s.dst = nil, nil
	return s.mem.Close()
}
