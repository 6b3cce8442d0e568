// Package syncbuf is the one locked byte buffer of wpg: what a child
// process writes (its stderr, a tool's output), kept for readers on other
// goroutines that poll it or quote it in an error.
package syncbuf

import (
	"io"
	"sync"
)

// Buffer collects writes under a mutex. The zero value keeps everything.
// Set the fields before the first Write.
type Buffer struct {
	// Max bounds the bytes kept (0 = no bound): the first Max bytes, or
	// with Tail the last Max bytes. A bounded buffer holds at most Max
	// bytes whatever is written to it.
	Max  int
	Tail bool
	// Pass, when set, receives every write as well (its errors are
	// ignored: the buffer keeps taking writes).
	Pass io.Writer

	mu  sync.Mutex
	buf []byte
}

// Write keeps p (or what the bound allows) and passes it on; it never
// fails.
func (b *Buffer) Write(p []byte) (int, error) {
	if b.Pass != nil {
		b.Pass.Write(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.Max <= 0:
		b.buf = append(b.buf, p...)
	case b.Tail:
		if len(p) >= b.Max {
			b.buf = append(b.buf[:0], p[len(p)-b.Max:]...)
			break
		}
		if drop := len(b.buf) + len(p) - b.Max; drop > 0 {
			b.buf = append(b.buf[:0], b.buf[drop:]...)
		}
		b.buf = append(b.buf, p...)
	default:
		if room := b.Max - len(b.buf); room > 0 {
			b.buf = append(b.buf, p[:min(len(p), room)]...)
		}
	}
	return len(p), nil
}

// String returns what is kept.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Len returns the number of bytes kept.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}
