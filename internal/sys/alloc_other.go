//go:build !linux

package sys

// Mapping is memory from Alloc; Close releases it and is idempotent.
type Mapping struct {
	b []byte
}

// SharedMapping is the Mapping that Alloc returns.
type SharedMapping = Mapping

// Bytes returns the memory (nil after Close).
func (m *Mapping) Bytes() []byte {
	if m == nil {
		return nil
	}
	return m.b
}

// Close releases the memory.
func (m *Mapping) Close() error {
	if m != nil {
		m.b = nil
	}
	return nil
}

// Alloc returns size bytes of zeroed memory for what (from the Go heap
// here: wpg's data paths need Linux).
func Alloc(size int, what string) (*SharedMapping, error) {
	if size <= 0 {
		return nil, &AllocError{Bytes: int64(size), What: what, Err: ErrNotSupported}
	}
	b := make([]byte, size)
	TouchWrite(b)
	return &SharedMapping{b: b}, nil
}

// AllocHuge is Alloc here (huge pages are a Linux matter).
func AllocHuge(size int, what string) (*Mapping, error) { return Alloc(size, what) }
