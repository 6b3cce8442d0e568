// Package unix is wpg's unix stream socket data path, the everyday baseline
// of local IPC: payload frames written to a connected AF_UNIX SOCK_STREAM
// socket with enlarged send and receive buffers (SO_SNDBUF/SO_RCVBUF, the
// *FORCE variants when CAP_NET_ADMIN allows going past
// net.core.wmem_max/rmem_max) and cut back into frames by the receiver
// from the length in each header.
//
// The receiver listens (`wpg recv --backend unix --listen SOCK`); the
// sender connects (`--connect SOCK`) or, without --connect, starts such a
// receiver itself. The rendezvous socket is the data socket. A receiver
// that dies makes the sender's next write fail (EPIPE/ECONNRESET); a sender
// that dies gives the receiver an end of stream.
//
// No privileges are needed. Linux only.
package unix
