// Package backend defines the data-path interface every wpg backend implements
// and the registry that maps backend names (null, pcapfile, afpacket, pipe, shm,
// …) to their constructors.
//
// A backend is opened once per job (Registration.Open gives an Instance),
// and the instance hands out one Sender per engine worker. Sending is
// zero-copy where the path allows it: the engine asks the backend for writable
// frame buffers with Reserve (slots of a TX ring, of an shm ring, of a DMA
// buffer, or the backend's own staging buffers where the kernel API takes the
// caller's memory), renders frames straight into them, and hands the lengths
// back with Commit. Backends own no goroutines in the hot path and allocate
// nothing per frame.
package backend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// Sender is one worker's transmit side of a data path.
type Sender interface {
	// Reserve fills bufs with up to len(bufs) writable frame buffers and
	// returns how many it filled. Each buffer has len == MaxFrame. It
	// returns 0 and a nil error when the path is momentarily full (the
	// engine retries), and an error when the path is broken (peer gone,
	// interface down).
	Reserve(bufs [][]byte) (int, error)
	// Commit transmits the first len(lens) buffers of the last Reserve,
	// lens[i] being the frame length written into bufs[i]. len(lens) may be
	// smaller than what Reserve returned (the source ran out); the other
	// buffers go back to the backend unsent. It returns the number of
	// frames the path accepted.
	Commit(lens []int) (int, error)
	// MaxFrame is the largest frame a buffer from Reserve can hold.
	MaxFrame() int
	// Info describes the instance for the report (mode, fallbacks, depth).
	Info() Info
	// Flush waits until committed frames have left the process (ring
	// drained, file synced). It is called once at the end of a run.
	Flush() error
	// Close releases every resource; it is idempotent.
	Close() error
}

// Receiver is the receiving side of a data path.
type Receiver interface {
	// Next fills views with received frames (valid until the next call)
	// and returns how many. It waits at most timeout for the first frame
	// and returns 0, nil on timeout; io.EOF when the sender has gone.
	Next(views [][]byte, timeout time.Duration) (int, error)
	Info() Info
	Close() error
}

// Info describes a backend instance for reports and logs.
type Info struct {
	Backend string `json:"backend"`
	// Mode is the way the path runs, e.g. "tx-ring", "sendmmsg", "pcapng".
	Mode string `json:"mode,omitempty"`
	// Reason says why Mode was chosen when it was not the default (a fallback).
	Reason    string `json:"reason,omitempty"`
	Interface string `json:"interface,omitempty"`
	// NUMANode is the NUMA node of the interface or memory; -1 when unknown.
	NUMANode int `json:"numa_node"`
	// RingDepth is the effective number of ring slots, 0 for ring-less paths.
	RingDepth int `json:"ring_depth,omitempty"`
	// Details carries backend-specific facts (pipe size, slot size, …).
	Details map[string]string `json:"details,omitempty"`
	// Hint is advice on a setting that measurably slows this path down,
	// with the flag that changes it, or on a setup that cannot work (a
	// receiver that nothing reached); the report prints it as a note.
	Hint string `json:"hint,omitempty"`
	// Adjusted says, in plain words, which requested settings the backend
	// changed and why ("--ring-depth 3 raised to 32: ..."); the report
	// prints each as a note.
	Adjusted []string `json:"adjusted,omitempty"`
}

// WithDetails returns a copy of i whose Details is a map of its own,
// holding i's entries with room for n more: an Info method adds its live
// counters to the copy, and the Info its backend keeps stays as it was.
func (i Info) WithDetails(n int) Info {
	d := make(map[string]string, len(i.Details)+n)
	maps.Copy(d, i.Details)
	i.Details = d
	return i
}

// Worker is what the engine tells an instance about one worker's sender.
type Worker struct {
	Index int // 0 … Options.Workers-1
	// MaxFrame is the largest frame this worker's source renders: at
	// least Options.MaxFrame when that is set.
	MaxFrame int
}

// Instance is a backend opened for one job: it owns what exists once per
// interface or per process (a peer process, a file, an XDP program, a DPDK
// port, a shared UMEM) and hands out one sender per worker and the
// receiving side. The engine calls NewSender on each worker's pinned
// thread, so memory a sender allocates is first touched there.
type Instance interface {
	// NewSender opens worker w's sender.
	NewSender(w Worker) (Sender, error)
	// NewReceiver opens the receiving side (Registration.Receives).
	NewReceiver() (Receiver, error)
	// Close releases what the instance owns, after its senders and
	// receivers are closed; it is idempotent.
	Close() error
}

// OpenFunc opens a backend instance. ctx is cancelled when the run stops
// (duration, signal, another worker's error): a sender waiting on a peer
// that takes nothing (alive, but stalled) gives up some seconds after that
// instead of holding the run open, and says so in its error.
type OpenFunc func(ctx context.Context, o Options) (Instance, error)

// SenderFactory opens one worker's sender from the job's options, o.MaxFrame
// already raised to the worker's (see Worker); ctx is the instance's.
type SenderFactory func(ctx context.Context, o Options) (Sender, error)

// ReceiverFactory opens a receiver from the job's options.
type ReceiverFactory func(ctx context.Context, o Options) (Receiver, error)

// Factories is the instance of a backend that holds nothing per job: each
// sender and the receiver are opened from the options alone.
// Factories{…}.Open is a Registration's Open.
type Factories struct {
	Sender   SenderFactory
	Receiver ReceiverFactory // nil: no receiving side
}

// Open returns an instance over f for o.
func (f Factories) Open(ctx context.Context, o Options) (Instance, error) {
	return &factoryInstance{ctx: ctx, o: o, f: f}, nil
}

type factoryInstance struct {
	ctx context.Context
	o   Options
	f   Factories
}

func (fi *factoryInstance) NewSender(w Worker) (Sender, error) {
	if fi.f.Sender == nil {
		return nil, fmt.Errorf("this backend has no sending side: %w", errors.ErrUnsupported)
	}
	o := fi.o
	if w.MaxFrame > o.MaxFrame {
		o.MaxFrame = w.MaxFrame
	}
	return fi.f.Sender(fi.ctx, o)
}

func (fi *factoryInstance) NewReceiver() (Receiver, error) {
	if fi.f.Receiver == nil {
		return nil, fmt.Errorf("this backend has no receiving side: %w", errors.ErrUnsupported)
	}
	return fi.f.Receiver(fi.ctx, fi.o)
}

func (fi *factoryInstance) Close() error { return nil }

// PeerReporter is implemented by senders that started or met a receiving
// process and can return its result after Close: a recv.Result as the
// peer protocol's answer carried it (recv.Result.MarshalPeer; the job
// decodes it with recv.UnmarshalPeer and merges the workers' with
// recv.Merge), nil when there is none.
type PeerReporter interface {
	PeerReport() []byte
}
