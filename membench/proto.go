package membench

import (
	"encoding/binary"

	"github.com/wpg-dev/wpg/internal/wire"
)

// The importer (the process that measures) and the exporter (the peer that
// owns the memory, started as `wpg membench --peer` with no other
// arguments) talk over a SOCK_SEQPACKET unix socket inherited as fd 3; the
// pipe for the PIPE method is fd 4. One message per packet in the framing
// of the peer protocol (internal/wire: a kind, a version, a typed body):
// a request (kindRequest) answered by one reply (kindReply).

// Kinds and version of membench's messages (internal/wire).
const (
	kindRequest  = "wpg.membench.request"
	kindReply    = "wpg.membench.reply"
	protoVersion = 1
)

// encodeRequest and encodeReply frame a message as one packet.
func encodeRequest(r request) ([]byte, error) { return wire.Encode(kindRequest, protoVersion, r) }
func encodeReply(r reply) ([]byte, error)     { return wire.Encode(kindReply, protoVersion, r) }

// decodeRequest and decodeReply read one packet, refusing another kind or
// version.
func decodeRequest(b []byte) (request, error) {
	var r request
	err := wire.Decode(b, kindRequest, protoVersion, &r)
	return r, err
}

func decodeReply(b []byte) (reply, error) {
	var r reply
	err := wire.Decode(b, kindReply, protoVersion, &r)
	return r, err
}

type request struct {
	Op     string `json:"op"` // hello, alloc, pipe, free, bye
	Method Method `json:"method,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	Ops    int64  `json:"ops,omitempty"` // pipe: how many buffers to write
	CPU    int    `json:"cpu,omitempty"` // hello: CPU to pin to, -1 none
	THP    bool   `json:"thp,omitempty"` // alloc: madvise(MADV_HUGEPAGE) private buffers
}

type reply struct {
	OK    bool   `json:"ok"`
	Err   string `json:"err,omitempty"`
	Pid   int    `json:"pid,omitempty"`
	Sum   uint64 `json:"sum,omitempty"`
	Addr  uint64 `json:"addr,omitempty"`
	Segid int64  `json:"segid,omitempty"`
	// NotAvailable marks an Err that means "this machine cannot run the
	// method" rather than a failure.
	NotAvailable bool `json:"not_available,omitempty"`
}

const (
	peerCtlFD  = 3
	peerPipeFD = 4
	maxMsg     = 64 << 10
)

// fill writes a deterministic pattern derived from seed into b: every
// 8-byte word differs from its neighbours and from the same word of a
// buffer filled with another seed.
func fill(b []byte, seed uint64) {
	x := seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	i := 0
	for ; i+64 <= len(b); i += 64 {
		w := b[i : i+64 : i+64]
		binary.LittleEndian.PutUint64(w[0:], mix(x+uint64(i)))
		binary.LittleEndian.PutUint64(w[8:], mix(x+uint64(i+8)))
		binary.LittleEndian.PutUint64(w[16:], mix(x+uint64(i+16)))
		binary.LittleEndian.PutUint64(w[24:], mix(x+uint64(i+24)))
		binary.LittleEndian.PutUint64(w[32:], mix(x+uint64(i+32)))
		binary.LittleEndian.PutUint64(w[40:], mix(x+uint64(i+40)))
		binary.LittleEndian.PutUint64(w[48:], mix(x+uint64(i+48)))
		binary.LittleEndian.PutUint64(w[56:], mix(x+uint64(i+56)))
	}
	for ; i < len(b); i++ {
		b[i] = byte(mix(x+uint64(i&^7)) >> (8 * (i & 7)))
	}
}

func mix(v uint64) uint64 {
	v *= 0xBF58476D1CE4E5B9
	return v ^ v>>31
}
