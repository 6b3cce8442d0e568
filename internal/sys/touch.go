package sys

// TouchWrite writes a zero byte into every page of b, which must be fresh
// (all zero) memory that no other process writes yet. On virtual machines
// the first write to a page costs tens of microseconds even after
// MAP_POPULATE (measured here: ~18 µs per 4 KiB page); doing it at set-up
// keeps that out of timed runs.
func TouchWrite(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}

// TouchRead reads one byte of every page of b (faulting the mapping in
// without writing to memory another process may be using) and returns
// their sum so that the loads are not optimised away.
func TouchRead(b []byte) byte {
	var s byte
	for i := 0; i < len(b); i += 4096 {
		s += b[i]
	}
	return s
}
