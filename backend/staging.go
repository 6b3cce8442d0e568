package backend

// NeedMaxFrame is the error of a sender of backend name opened without
// o.MaxFrame ("shm: MaxFrame not set"), or nil: a payload path sizes its
// slots or buffers from it.
func (o Options) NeedMaxFrame(name string) error {
	if o.MaxFrame <= 0 {
		return Errorf(name, "MaxFrame not set")
	}
	return nil
}

// Staging is a sender's own frame buffers, for a path whose system call
// or copy takes the caller's memory (unix's write, memcpy's copy):
// Reserve hands out up to PerCall buffers of MaxFrame bytes, back to back
// in Mem, and Take ends the reservation when they are committed.
type Staging struct {
	Mem      []byte // PerCall × MaxFrame bytes
	MaxFrame int
	PerCall  int
	reserved int
}

// Reserve fills bufs with up to PerCall buffers and returns how many.
func (s *Staging) Reserve(bufs [][]byte) int {
	n := min(len(bufs), s.PerCall)
	for i := 0; i < n; i++ {
		bufs[i] = s.Mem[i*s.MaxFrame : (i+1)*s.MaxFrame : (i+1)*s.MaxFrame]
	}
	s.reserved = n
	return n
}

// Take ends the reservation and returns how many of its buffers lens
// commits: len(lens), at most the number Reserve handed out.
func (s *Staging) Take(lens []int) int {
	n := min(len(lens), s.reserved)
	s.reserved = 0
	return n
}
