package peer

import (
	"encoding/json"
	"io"

	"github.com/wpg-dev/wpg/internal/wire"
)

// ProtocolVersion is the version of the peer protocol (docs/local-paths.md,
// "Peer protocol"); a message of another version is refused.
const ProtocolVersion = 1

// Message kinds of the peer protocol.
const (
	KindRequest = "wpg.recv.request"
	KindAccept  = "wpg.recv.accept"
	KindAnswer  = "wpg.recv.answer"
	// KindProgress is the receiver's live counts (RecvProgress), sent
	// only to a sender whose request asked for them (ProgressMs), between
	// the accept and the answer.
	KindProgress = "wpg.recv.progress"
)

// RecvRequest is the first message on the control connection: what the
// sender asks of its receiver. Zero fields leave the receiver's own
// settings (or defaults); a non-zero field that contradicts a setting the
// receiver was started with is refused.
type RecvRequest struct {
	// Backend is the sender's local path (shm, cma, xpmem, unix, pipe).
	Backend string `json:"backend"`
	// PID is the sender's process id.
	PID int `json:"pid"`
	// MaxFrame is the largest payload frame in bytes.
	MaxFrame int `json:"max_frame,omitempty"`
	// Verify is the payload verification mode (on, sample, off; "" = on).
	Verify string `json:"verify,omitempty"`
	// Expect is the number of frames to expect (0 = until the sender goes).
	Expect uint64 `json:"expect,omitempty"`
	// Slots is the ring's slot count (shm; 0 = the sender's hello says).
	Slots int `json:"slots,omitempty"`
	// RecvMode is the receiving mode (shm: inplace or copy).
	RecvMode string `json:"recv_mode,omitempty"`
	// BusyWait asks the receiver to poll instead of sleeping (shm).
	BusyWait bool `json:"busy_wait,omitempty"`
	// Batch is the frames taken per call (0 = the receiver's).
	Batch int `json:"batch,omitempty"`
	// ProgressMs asks the receiver for a RecvProgress about every that
	// many milliseconds (at least MinProgressMs; 0 = none, what a sender
	// of before progress messages asks by leaving it out). A receiver
	// that does not know the field sends none.
	ProgressMs int `json:"progress_ms,omitempty"`
}

// MinProgressMs is the shortest progress period a receiver honours
// (RecvRequest.ProgressMs); a shorter one is taken as this.
const MinProgressMs = 100

// RecvProgress is the receiver's counts so far (totals, as in its
// recv.Result) and the one-way latency of the frames since its previous
// progress message, sent while it receives. A message that cannot be
// written at once is dropped, never waited for: counts are totals, so a
// later message makes up for it (its latency window is lost).
type RecvProgress struct {
	// ElapsedNs is the time since the receiver's loop started.
	ElapsedNs  int64  `json:"elapsed_ns"`
	Frames     uint64 `json:"frames"`
	Bytes      uint64 `json:"bytes"`
	Lost       uint64 `json:"lost"`
	Duplicated uint64 `json:"duplicated"`
	Corrupted  uint64 `json:"corrupted"`
	Unsigned   uint64 `json:"unsigned"`
	// Latency is the window's latency histogram in the JSON form of wpg's
	// histograms (recv.Progress.MarshalLatency); absent when no frame of
	// the window carried a usable transmit timestamp, or when it would
	// make the message longer than MaxProgress.
	Latency json.RawMessage `json:"latency,omitempty"`
	// JitterNs is the receiver's RFC 3550 interarrival jitter J so far
	// (recv.Progress.JitterNs); absent before it has one, and from a
	// receiver of before the field.
	JitterNs int64 `json:"jitter_ns,omitempty"`
}

// MaxProgress bounds an encoded RecvProgress: a window histogram that
// would make it longer is left out (a latency histogram of a window has
// a few hundred non-zero buckets; this allows some 10 000).
const MaxProgress = 256 << 10

// RecvAccept is the receiver's reply to a RecvRequest: its pid, or why it
// refuses (Error).
type RecvAccept struct {
	PID   int    `json:"pid"`
	Error string `json:"error,omitempty"`
}

// RecvAnswer is the receiver's last message: its recv.Result in the form
// of recv.Result.MarshalPeer, and the error that ended its reception, if
// any.
type RecvAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// WriteRequest, WriteAccept and WriteAnswer send one message of the peer
// protocol on the stream w; ReadRequest, ReadAccept and ReadAnswer read
// one, refusing a message that is oversized (wire.MaxMessage), of another
// kind or of another ProtocolVersion with an error that says so.
func WriteRequest(w io.Writer, q RecvRequest) error {
	return wire.Write(w, KindRequest, ProtocolVersion, q)
}

// ReadRequest reads a RecvRequest (see WriteRequest).
func ReadRequest(r io.Reader) (RecvRequest, error) { return read[RecvRequest](r, KindRequest) }

// read reads one message of kind into a T (see WriteRequest).
func read[T any](r io.Reader, kind string) (T, error) {
	var v T
	err := wire.Read(r, kind, ProtocolVersion, &v)
	return v, err
}

// WriteAccept sends a RecvAccept (see WriteRequest).
func WriteAccept(w io.Writer, a RecvAccept) error {
	return wire.Write(w, KindAccept, ProtocolVersion, a)
}

// ReadAccept reads a RecvAccept (see WriteRequest).
func ReadAccept(r io.Reader) (RecvAccept, error) { return read[RecvAccept](r, KindAccept) }

// WriteAnswer sends a RecvAnswer (see WriteRequest).
func WriteAnswer(w io.Writer, a RecvAnswer) error {
	return wire.Write(w, KindAnswer, ProtocolVersion, a)
}

// ReadAnswer reads a RecvAnswer (see WriteRequest).
func ReadAnswer(r io.Reader) (RecvAnswer, error) { return read[RecvAnswer](r, KindAnswer) }

// WriteProgress sends a RecvProgress (see WriteRequest), without its
// latency histogram when that would make it longer than MaxProgress.
func WriteProgress(w io.Writer, p RecvProgress) error {
	if len(p.Latency) > MaxProgress-1024 {
		p.Latency = nil
	}
	return wire.Write(w, KindProgress, ProtocolVersion, p)
}

// ReadProgress reads a RecvProgress (see WriteRequest).
func ReadProgress(r io.Reader) (RecvProgress, error) { return read[RecvProgress](r, KindProgress) }
