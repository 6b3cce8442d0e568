// Package job is wpg as a library: the layer that the command line, the
// web server and tests share between "what to run" and the engine.
//
// A Spec (or RecvSpec) is a plain, JSON-tagged description of one run:
// the template or payload frames, the backend and its options, the rate,
// how long, which CPUs. Validate checks it and returns every problem at
// once, each an *OptionError on the field's JSON name, so that a client
// can name it in its own terms (the CLI as a flag, a form as an input).
// Start validates and starts the run and returns a Run: Snapshot reads its
// progress at any time from any goroutine, Stop ends it, Done tells when
// it has ended and Report gives the report that `wpg send` prints,
// including whether a check failed (report.Report.Failed). Receive opens
// the receiving side of a backend (`wpg recv`).
//
// An Env gives a run what it may take from its process (standard
// streams, a logger, the launcher of receiver processes, a clock); the
// package itself prints nothing, exits nothing and reads no environment
// variables, so several runs may share one process.
//
// Backends register themselves when imported: import
// github.com/wpg-dev/wpg/backend/all, or only the ones a program needs
// (github.com/wpg-dev/wpg/backend/null, …).
package job
