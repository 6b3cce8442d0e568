// Package all imports every backend so that each registers itself; the wpg
// command and tests that list backends import it.
package all

import (
	_ "github.com/wpg-dev/wpg/backend/cma"      // process_vm_readv/writev
	_ "github.com/wpg-dev/wpg/backend/memcpy"   // in-process copy reference
	_ "github.com/wpg-dev/wpg/backend/null"     // generator only
	_ "github.com/wpg-dev/wpg/backend/pcapfile" // pcap / pcapng files
	_ "github.com/wpg-dev/wpg/backend/pipe"     // pipes and FIFOs
	_ "github.com/wpg-dev/wpg/backend/shm"      // memfd ring
	_ "github.com/wpg-dev/wpg/backend/unix"     // unix stream socket
)
