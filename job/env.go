package job

import (
	"log/slog"
	"os"

	"github.com/wpg-dev/wpg/backend"
	"time"
)

// Env is what a job takes from the process around it. Library code never
// reaches for the process's own streams, environment or globals; it uses
// these. The zero value is usable: no standard streams, a logger that
// discards, the wpg executable as the peer launcher, the wall clock.
type Env struct {
	// Stdin, Stdout and Stderr are the streams a data path may read or
	// write (the pipe backend writes frames to Stdout when no FIFO is
	// given). nil is none: a run that needs one fails validation. A CLI
	// passes os.Stdin, os.Stdout and os.Stderr. Reports are not written
	// anywhere: the caller prints Run.Report.
	Stdin, Stdout, Stderr *os.File
	// Logger receives a run's start and end (at debug level) and what it
	// has to say while it runs; nil discards. Warnings and notes that
	// belong to the outcome go into the report.
	Logger *slog.Logger
	// Launcher builds the process that receives for a local path when a
	// run starts its own receiver (Spec.StartReceiver), given only its
	// rendezvous socket (the rest comes in the sender's request); nil runs
	// this executable as `wpg recv --listen SOCK`.
	Launcher backend.Launcher
	// Clock is the wall clock of snapshots (nil: time.Now).
	Clock func() time.Time
	// SnapshotEvery is how often the caller takes snapshots of a run
	// (--interval); 0: about 4 a second. A run's own receivers send their
	// progress that often, within 100 ms (peer.MinProgressMs) to 250 ms
	// (peer.DefaultProgress), so that each snapshot's receiver counts and
	// latency window are fresh, not a progress message of two periods ago.
	SnapshotEvery time.Duration
}

// withDefaults fills the unset fields of e.
func (e Env) withDefaults() Env {
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Clock == nil {
		e.Clock = time.Now
	}
	return e
}
