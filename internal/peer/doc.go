// Package peer starts and meets the receiving process of a local data path
// (shm, cma, xpmem, unix, pipe). A sender (its Session, as
// backend.Options.Peer says) either connects to an independently started
// `wpg recv --listen SOCK` (--connect SOCK) or starts one itself: a
// child `wpg recv --backend NAME --listen SOCK --json` whose final JSON
// report it collects after the run. The two sides meet over a unix stream
// socket and exchange one JSON hello each way, descriptors (a memfd) riding
// along with SCM_RIGHTS; no marker files are used.
//
// The package needs no privileges.
package peer
