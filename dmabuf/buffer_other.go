//go:build !linux

package dmabuf

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// Buffer is a mapped DMA buffer; DMA buffers need Linux.
type Buffer struct {
	Driver, Name, Node, CacheMode, SyncVia string
	Size                                   int
	PhysAddr                               *uint64
	OSync, Coherent                        bool
	SyncMode                               *int
	SizeLimitMB                            *int64
	Device                                 *Device
}

// Syncer brackets CPU access to a Buffer; DMA buffers need Linux.
type Syncer struct {
	Stats Stats
}

// NewSyncer returns a Syncer that fails every call.
func (b *Buffer) NewSyncer() *Syncer { return &Syncer{} }

// Stats returns zero counts.
func (b *Buffer) Stats() Stats { return Stats{} }

// BeginWrite is not supported outside Linux.
func (y *Syncer) BeginWrite(off, n int) error { return unsupported() }

// EndWrite is not supported outside Linux.
func (y *Syncer) EndWrite(off, n int) error { return unsupported() }

// BeginRead is not supported outside Linux.
func (y *Syncer) BeginRead(off, n int) error { return unsupported() }

// EndRead is not supported outside Linux.
func (y *Syncer) EndRead(off, n int) error { return unsupported() }

func unsupported() error {
	return fmt.Errorf("dmabuf: DMA buffers need Linux, not %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Open is not supported outside Linux.
func Open(o Options) (*Buffer, error) { return nil, unsupported() }

// Attach is not supported outside Linux.
func Attach(fd int, size int, driver, syncVia string, forCPU int) (*Buffer, error) {
	return nil, unsupported()
}

// Bench is not supported outside Linux.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchReport, error) { return nil, unsupported() }

// Bytes returns nil.
func (b *Buffer) Bytes() []byte { return nil }

// Fd returns -1.
func (b *Buffer) Fd() int { return -1 }

// SyncForCPUFd returns -1.
func (b *Buffer) SyncForCPUFd() int { return -1 }

// BeginWrite is not supported outside Linux.
func (b *Buffer) BeginWrite(off, n int) error { return unsupported() }

// EndWrite is not supported outside Linux.
func (b *Buffer) EndWrite(off, n int) error { return unsupported() }

// BeginRead is not supported outside Linux.
func (b *Buffer) BeginRead(off, n int) error { return unsupported() }

// EndRead is not supported outside Linux.
func (b *Buffer) EndRead(off, n int) error { return unsupported() }

// SyncForDevice is not supported outside Linux.
func (b *Buffer) SyncForDevice(off, n int, dir Direction) error { return unsupported() }

// SyncForCPU is not supported outside Linux.
func (b *Buffer) SyncForCPU(off, n int, dir Direction) error { return unsupported() }

// Close does nothing.
func (b *Buffer) Close() error { return nil }
