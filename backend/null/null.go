// Package null is the "null" backend: frames are rendered into a small set of
// buffers that stay in cache and then dropped. It measures the generator
// alone, the upper bound of every other path. It needs no privileges.
package null

import (
	"context"

	"github.com/wpg-dev/wpg/backend"
)

func init() {
	backend.Register(backend.Registration{
		Name:    "null",
		Kind:    backend.KindReference,
		Summary: "generation only: frames are rendered and dropped (the generator's upper bound)",
		Open:    backend.Factories{Sender: New}.Open,
	})
}

// Sender renders into its own buffers and drops the frames.
type Sender struct {
	slab     []byte
	bufs     [][]byte
	maxFrame int
}

// New opens a null sender with room for o.Batch frames of o.MaxFrame bytes.
func New(_ context.Context, o backend.Options) (backend.Sender, error) {
	if o.MaxFrame <= 0 {
		return nil, backend.ErrorfAt("null", "backend", "frame size %d must be positive", o.MaxFrame)
	}
	batch := o.Batch
	if batch <= 0 {
		batch = 256
	}
	s := &Sender{maxFrame: o.MaxFrame}
	s.slab = make([]byte, batch*o.MaxFrame)
	s.bufs = make([][]byte, batch)
	for i := range s.bufs {
		s.bufs[i] = s.slab[i*o.MaxFrame : (i+1)*o.MaxFrame : (i+1)*o.MaxFrame]
	}
	return s, nil
}

// Reserve hands out the sender's buffers.
func (s *Sender) Reserve(bufs [][]byte) (int, error) {
	n := copy(bufs, s.bufs)
	return n, nil
}

// Commit drops the frames.
func (s *Sender) Commit(lens []int) (int, error) { return len(lens), nil }

// MaxFrame returns the buffer size.
func (s *Sender) MaxFrame() int { return s.maxFrame }

// Info describes the instance.
func (s *Sender) Info() backend.Info {
	return backend.Info{Backend: "null", Mode: "drop", NUMANode: -1}
}

// Flush does nothing: nothing leaves the process.
func (s *Sender) Flush() error { return nil }

// Close releases the buffers.
func (s *Sender) Close() error { s.slab, s.bufs = nil, nil; return nil }
