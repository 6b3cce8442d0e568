package sys

import "unsafe"

// Addr returns the address of *p as an integer, for hashing a buffer's
// identity (e.g. which TX-ring slot it is). It does not keep p alive: a
// caller that compares identities later must also hold p itself.
func Addr(p *byte) uintptr { return uintptr(unsafe.Pointer(p)) }
