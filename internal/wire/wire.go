// Package wire is the one framing of wpg's process-to-process control
// messages (the local paths' peer protocol, membench's exporter): a typed,
// versioned JSON envelope, {"kind": K, "version": V, "body": …}, of at most
// MaxMessage bytes, carried either as one packet (SOCK_SEQPACKET: Encode,
// Decode) or on a byte stream behind a 4-byte big-endian length (Write,
// Read), which reads exactly one message and nothing after it.
package wire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// MaxMessage bounds an encoded message (the envelope and its body).
const MaxMessage = 1 << 20

// envelope is the JSON form of every message.
type envelope struct {
	Kind    string          `json:"kind"`
	Version int             `json:"version"`
	Body    json.RawMessage `json:"body"`
}

// Encode returns body as a message of kind and version.
func Encode(kind string, version int, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s message: %w", kind, err)
	}
	m, err := json.Marshal(envelope{Kind: kind, Version: version, Body: b})
	if err != nil {
		return nil, fmt.Errorf("%s message: %w", kind, err)
	}
	if len(m) > MaxMessage {
		return nil, fmt.Errorf("%s message: %d bytes, more than the limit of %d", kind, len(m), MaxMessage)
	}
	return m, nil
}

// Decode decodes message m into body, refusing with a clear error a
// message over MaxMessage, one that is not a wpg message, one of another
// kind, and one of a version other than version. Fields body does not
// know are ignored (a version may add fields).
func Decode(m []byte, kind string, version int, body any) error {
	if len(m) > MaxMessage {
		return fmt.Errorf("%s message: %d bytes, more than the limit of %d", kind, len(m), MaxMessage)
	}
	var e envelope
	if err := json.Unmarshal(m, &e); err != nil || e.Kind == "" {
		if err == nil {
			err = fmt.Errorf("no kind")
		}
		return fmt.Errorf("%s message: not a wpg message (%v)", kind, err)
	}
	if e.Kind != kind {
		return fmt.Errorf("%s message: got a %q message", kind, e.Kind)
	}
	if e.Version != version {
		return fmt.Errorf("%s message: version %d, this wpg speaks version %d (run the same wpg version on both sides)", kind, e.Version, version)
	}
	if err := json.Unmarshal(e.Body, body); err != nil {
		return fmt.Errorf("%s message: %w", kind, err)
	}
	return nil
}

// Write writes body as one length-prefixed message of kind and version
// on the stream w.
func Write(w io.Writer, kind string, version int, body any) error {
	m, err := Encode(kind, version, body)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(m))
	binary.BigEndian.PutUint32(buf, uint32(len(m)))
	copy(buf[4:], m)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("send %s message: %w", kind, err)
	}
	return nil
}

// Read reads exactly one length-prefixed message from the stream r and
// decodes it into body (see Decode); a length over MaxMessage is refused
// before anything more is read.
func Read(r io.Reader, kind string, version int, body any) error {
	m, err := readFrame(r, kind)
	if err != nil {
		return err
	}
	return Decode(m, kind, version, body)
}

// ReadMessage reads exactly one length-prefixed message from the stream r
// without decoding it, for a reader that takes messages of several kinds
// in turn: Kind names it, Decode decodes it. what names the expected
// messages in errors; a length over MaxMessage is refused before anything
// more is read.
func ReadMessage(r io.Reader, what string) ([]byte, error) {
	return readFrame(r, what)
}

// Kind returns the kind of message m, or an error when m is not a wpg
// message.
func Kind(m []byte) (string, error) {
	var e struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(m, &e); err != nil || e.Kind == "" {
		if err == nil {
			err = fmt.Errorf("no kind")
		}
		return "", fmt.Errorf("not a wpg message (%v)", err)
	}
	return e.Kind, nil
}

// readFrame reads one length-prefixed message; what names it in errors.
func readFrame(r io.Reader, what string) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("read %s message: %w", what, err)
	}
	n := binary.BigEndian.Uint32(h[:])
	if n > MaxMessage {
		return nil, fmt.Errorf("%s message: %d bytes announced, more than the limit of %d (not a wpg peer?)", what, n, MaxMessage)
	}
	m := make([]byte, n)
	if _, err := io.ReadFull(r, m); err != nil {
		return nil, fmt.Errorf("read %s message: %w", what, err)
	}
	return m, nil
}
