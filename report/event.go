package report

import (
	"encoding/json"
	"io"
)

// Event is one line of a live JSON stream (`--json-stream`, as iperf3's):
// a "start" (Data a StreamStart), an "interval" per period (an Interval,
// or a receiver's), and an "end" with the final report, each one line of
// compact JSON as it happens, so that a program reads the run while it
// goes.
type Event struct {
	// Event is "start", "interval" or "end".
	Event string `json:"event"`
	// Run is which run of a repeated measurement (bench --repeat N, from
	// 1) the event is of; absent for a single run.
	Run int `json:"run,omitempty"`
	// Data is the event's document.
	Data any `json:"data"`
}

// StreamStart is a stream's first event: what the lines that follow are
// of.
type StreamStart struct {
	// Schema is the schema of the end event's report (wpg.report/v2,
	// wpg.recv/v1).
	Schema string `json:"schema"`
	// Command is send, bench or recv.
	Command string `json:"command"`
	// IntervalSeconds is the period of the interval events.
	IntervalSeconds float64     `json:"interval_seconds"`
	Provenance      *Provenance `json:"provenance,omitempty"`
}

// WriteEvent writes e as one line of compact JSON.
func WriteEvent(w io.Writer, e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
