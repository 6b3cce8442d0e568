// Package peer starts and meets the receiving process of a local data path
// (shm, cma, unix, pipe). A sender either connects to an independently
// started `wpg recv --listen SOCK` (--connect SOCK) or starts one itself: a
// child `wpg recv --backend NAME --listen SOCK --json` whose final JSON
// report it collects after the run. The two sides meet over a unix stream
// socket and exchange one JSON hello each way, descriptors (a memfd) riding
// along with SCM_RIGHTS; no marker files are used.
//
// The package needs no privileges.
package peer

// AutoPeer as Options.Connect asks a local backend's sender to start its own
// receiver process (the default of the socket-based paths when Connect is
// empty; the pipe path needs it explicitly when stdout is a pipe).
const AutoPeer = "auto"
