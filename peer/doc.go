// Package peer starts and meets the receiving process of a local data path
// (shm, cma, xpmem, unix, pipe). A sender (its Session, as
// backend.Options.Peer says) either connects to an independently started
// `wpg recv --listen SOCK` (--connect SOCK) or starts one itself: a
// child `wpg recv --listen SOCK` and nothing more. Over a control
// connection to the socket the sender sends a typed RecvRequest (backend,
// frame size, verify mode, …), the receiver accepts or refuses it, sends
// its counts while it receives when the sender asked (RecvProgress, read
// into a Live that the sender's Open context carries), and at the end
// answers with its recv.Result (the peer protocol: proto.go,
// docs/local-paths.md). On a data connection the two sides exchange one
// JSON hello each way, descriptors (a memfd) riding along with
// SCM_RIGHTS; no marker files are used.
//
// The package needs no privileges.
package peer
